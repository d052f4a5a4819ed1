package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// CheckpointListener is TF's CheckpointSaverListener: it hears every save of the CheckpointSaverHooks
// it is given to. Embed BaseCheckpointListener to write only the methods you need. AfterSave returning
// stop true ends training after that run (ignored for the saves at creation and at end, as in TF). An
// error fails the operation the save runs in; panics are handled as for Hook.
type CheckpointListener interface {
	Begin() error
	BeforeSave(s *SessionRef, globalStep int64) error
	AfterSave(s *SessionRef, globalStep int64) (stop bool, err error)
	End(s *SessionRef, globalStep int64) error
}

// BaseCheckpointListener implements every CheckpointListener method as a no-op.
type BaseCheckpointListener struct{}

func (BaseCheckpointListener) Begin() error                               { return nil }
func (BaseCheckpointListener) BeforeSave(*SessionRef, int64) error        { return nil }
func (BaseCheckpointListener) AfterSave(*SessionRef, int64) (bool, error) { return false, nil }
func (BaseCheckpointListener) End(*SessionRef, int64) error               { return nil }

func newCListener(l CheckpointListener) (*C.tw_checkpoint_listener, error) {
	name := fmt.Sprintf("%T", l)
	if named, ok := l.(Named); ok && named.Name() != "" {
		name = named.Name()
	}
	cname, err := cString("listener name", name)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cname))
	handle := handleOf(l)
	var out *C.tw_checkpoint_listener
	if err := check(func() C.tw_status { return C.twgo_checkpoint_listener_create(&out, cname, C.uintptr_t(handle)) }); err != nil {
		handle.Delete()
		return nil, err
	}
	return out, nil
}

//export twgoListenerCall
func twgoListenerCall(handle C.uintptr_t, phase C.int, cs *C.tw_session, step C.int64_t, stop *C.int) C.tw_status {
	l := valueOf[CheckpointListener](handle)
	return guard(func() error {
		if phase == 0 {
			return l.Begin()
		}
		return withSession(cs, func(s *SessionRef) error {
			switch phase {
			case 1:
				return l.BeforeSave(s, int64(step))
			case 2:
				requested, err := l.AfterSave(s, int64(step))
				if requested {
					*stop = 1
				}
				return err
			default:
				return l.End(s, int64(step))
			}
		})
	})
}

// The overridable methods of built-in hooks (TF's protected _save, _log_tensors, _log_and_record),
// set before the hook joins a session. Each function receives the built-in behaviour as `super`.
// They use the library's experimental hook extension points (no ABI promise yet).

// SaveFunc replaces CheckpointSaverHook._save(session, step); super runs the built-in save and reports
// a listener's stop request. Returning stop true requests a stop (in after_run).
type SaveFunc func(super func() (stop bool, err error), s *SessionRef, globalStep int64) (stop bool, err error)

// LogTensorsFunc replaces LoggingTensorHook._log_tensors(values); super logs the values given.
type LogTensorsFunc func(super func(values []View) error, values []View) error

// RecordFunc replaces StepCounterHook._log_and_record(elapsed_steps, elapsed_time, global_step);
// super logs and writes the rate.
type RecordFunc func(super func() error, elapsedSteps int64, elapsedSecs float64, globalStep int64) error

// OverrideSave sets a CheckpointSaverHook's _save (nil restores the built-in).
func (h *BuiltinHook) OverrideSave(fn SaveFunc) error {
	return h.override(fn == nil, fn, func(handle C.uintptr_t) C.tw_status {
		if handle == 0 {
			return C.tw_checkpoint_saver_hook_set_save_fn(h.c, nil, nil, nil)
		}
		return C.twgo_checkpoint_saver_hook_set_save_fn(h.c, handle)
	})
}

// OverrideLogTensors sets a LoggingTensorHook's _log_tensors (nil restores the built-in).
func (h *BuiltinHook) OverrideLogTensors(fn LogTensorsFunc) error {
	return h.override(fn == nil, fn, func(handle C.uintptr_t) C.tw_status {
		if handle == 0 {
			return C.tw_logging_tensor_hook_set_log_fn(h.c, nil, nil, nil)
		}
		return C.twgo_logging_tensor_hook_set_log_fn(h.c, handle)
	})
}

// OverrideRecord sets a StepCounterHook's _log_and_record (nil restores the built-in).
func (h *BuiltinHook) OverrideRecord(fn RecordFunc) error {
	return h.override(fn == nil, fn, func(handle C.uintptr_t) C.tw_status {
		if handle == 0 {
			return C.tw_step_counter_hook_set_record_fn(h.c, nil, nil, nil)
		}
		return C.twgo_step_counter_hook_set_record_fn(h.c, handle)
	})
}

func (h *BuiltinHook) override(remove bool, fn any, set func(C.uintptr_t) C.tw_status) error {
	if h == nil || h.c == nil {
		return invalid("hook is nil or closed")
	}
	if remove {
		return check(func() C.tw_status { return set(0) })
	}
	handle := handleOf(fn)
	if err := check(func() C.tw_status { return set(C.uintptr_t(handle)) }); err != nil {
		handle.Delete()
		return err
	}
	return nil
}

//export twgoSave
func twgoSave(handle C.uintptr_t, hook *C.tw_hook, cs *C.tw_session, step C.int64_t, stop *C.int) C.tw_status {
	fn := valueOf[SaveFunc](handle)
	return guard(func() error {
		return withSession(cs, func(s *SessionRef) error {
			super := func() (bool, error) {
				if s.c == nil {
					return false, errOutsideCallback
				}
				var out C.int
				err := check(func() C.tw_status { return C.tw_checkpoint_saver_hook_save(&out, hook, s.c, step) })
				return out != 0, err
			}
			requested, err := fn(super, s, int64(step))
			if requested {
				*stop = 1
			}
			return err
		})
	})
}

//export twgoLogTensors
func twgoLogTensors(handle C.uintptr_t, hook *C.tw_hook, values **C.tw_tensor, n C.size_t) C.tw_status {
	fn := valueOf[LogTensorsFunc](handle)
	return guard(func() error {
		live := true
		defer func() { live = false }()
		super := func(vs []View) error {
			if !live {
				return errOutsideCallback
			}
			return withViews(vs, func(array **C.tw_tensor, count C.size_t) C.tw_status {
				return C.tw_logging_tensor_hook_log_tensors(hook, array, count)
			})
		}
		return fn(super, views(values, n))
	})
}

// withViews passes views (library memory or Tensors, never Go memory) to C as an array of pointers
// to views, built in C memory for the call.
func withViews(vs []View, call func(**C.tw_tensor, C.size_t) C.tw_status) error {
	n := len(vs)
	structs := (*C.tw_tensor)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.tw_tensor{}))))
	pointers := (**C.tw_tensor)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof((*C.tw_tensor)(nil)))))
	var names []*C.char
	var shapes []unsafe.Pointer
	defer func() {
		for _, p := range names {
			C.free(unsafe.Pointer(p))
		}
		for _, p := range shapes {
			C.free(p)
		}
		C.free(unsafe.Pointer(structs))
		C.free(unsafe.Pointer(pointers))
	}()
	ts, ps := unsafe.Slice(structs, n+1), unsafe.Slice(pointers, n+1)
	for i, v := range vs {
		name, err := cString("view name", v.Name)
		if err != nil {
			return err
		}
		names = append(names, name)
		C.tw_tensor_init(&ts[i])
		ts[i].name, ts[i].dtype, ts[i].data, ts[i].ndim = name, C.int32_t(v.DType), v.data, C.int32_t(len(v.Shape))
		if len(v.Shape) > 0 {
			shape := C.malloc(C.size_t(8 * len(v.Shape)))
			shapes = append(shapes, shape)
			copy(unsafe.Slice((*int64)(shape), len(v.Shape)), v.Shape)
			ts[i].shape = (*C.int64_t)(shape)
		}
		ps[i] = &ts[i]
	}
	return check(func() C.tw_status { return call(pointers, C.size_t(n)) })
}

//export twgoRecord
func twgoRecord(handle C.uintptr_t, hook *C.tw_hook, steps C.int64_t, secs C.double, step C.int64_t) C.tw_status {
	fn := valueOf[RecordFunc](handle)
	return guard(func() error {
		live := true
		defer func() { live = false }()
		super := func() error {
			if !live {
				return errOutsideCallback
			}
			return check(func() C.tw_status { return C.tw_step_counter_hook_log_and_record(hook, steps, secs, step) })
		}
		return fn(super, int64(steps), float64(secs), int64(step))
	})
}
