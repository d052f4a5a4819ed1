package trainwatch

/*
#include "glue.h"
*/
import "C"

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
