package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// Hook is TF's SessionRunHook for hooks written in Go. Embed BaseHook to implement only the methods
// you need. A non-nil error fails the operation the callback runs in (the run, the session's
// creation or its close); Run returns an *Error whose Unwrap is that error. A panic is recovered
// before it reaches C, fails the operation with CallbackFailed, and is re-raised from the session
// call once the library has returned.
//
// Contexts and SessionRefs passed to the methods are valid during the call only.
type Hook interface {
	// Begin runs once per session, before it is created.
	Begin(s *SessionRef) error
	// AfterCreateSession runs after every (re-)creation of the inner session.
	AfterCreateSession(s *SessionRef) error
	// BeforeRun runs at the start of every run: request fetches, request a stop.
	BeforeRun(ctx *RunContext) error
	// AfterRun runs after a successful step, with the results this hook requested.
	AfterRun(ctx *RunContext) error
	// End runs on Close when no run failed.
	End(s *SessionRef) error
	// OnError runs instead of End, once, when a run or the creation failed with status.
	OnError(s *SessionRef, status Status)
}

// BaseHook implements every Hook method as a no-op.
type BaseHook struct{}

func (BaseHook) Begin(*SessionRef) error              { return nil }
func (BaseHook) AfterCreateSession(*SessionRef) error { return nil }
func (BaseHook) BeforeRun(*RunContext) error          { return nil }
func (BaseHook) AfterRun(*RunContext) error           { return nil }
func (BaseHook) End(*SessionRef) error                { return nil }
func (BaseHook) OnError(*SessionRef, Status)          {}

// Named hooks name themselves in the library's messages ("hook 'name' after_run: …"); others are
// named by their Go type.
type Named interface{ Name() string }

// BuiltinHook is one of the library's own hooks (StopAtStepHook, NanTensorHook, …). It satisfies
// Hook so that it can be passed with Go hooks, but the session runs it natively; its Hook methods do
// nothing. Close releases it (the sessions using it keep their own reference). It belongs to one open
// session at a time.
type BuiltinHook struct {
	BaseHook
	c *C.tw_hook
}

// Name is the library's name of the hook.
func (h *BuiltinHook) Name() string {
	if h == nil || h.c == nil {
		return ""
	}
	return C.GoString(C.tw_hook_name(h.c))
}

// Close releases the caller's reference; closing twice is a no-op.
func (h *BuiltinHook) Close() {
	if h == nil || h.c == nil {
		return
	}
	C.tw_hook_destroy(h.c)
	h.c = nil
	runtime.SetFinalizer(h, nil)
}

func builtin(create func(out **C.tw_hook) C.tw_status) (*BuiltinHook, error) {
	h := &BuiltinHook{}
	if err := check(func() C.tw_status { return create(&h.c) }); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(h, (*BuiltinHook).Close)
	return h, nil
}

// Unset is TF's None for StopAtStepHook's arguments.
const Unset int64 = C.TW_UNSET

// StopAtStepHook is TF's StopAtStepHook(num_steps, last_step): pass Unset for the one left out.
func StopAtStepHook(numSteps, lastStep int64) (*BuiltinHook, error) {
	return builtin(func(out **C.tw_hook) C.tw_status {
		return C.tw_stop_at_step_hook_create(out, C.int64_t(numSteps), C.int64_t(lastStep))
	})
}

// NanTensorHook is TF's NanTensorHook(loss, fail_on_nan_loss): a NaN in loss fails the run with
// NanLoss, or with failOnNanLoss false requests a stop.
func NanTensorHook(loss string, failOnNanLoss bool) (*BuiltinHook, error) {
	closs, err := cString("loss name", loss)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(closs))
	fail := C.int(0)
	if failOnNanLoss {
		fail = 1
	}
	return builtin(func(out **C.tw_hook) C.tw_status { return C.tw_nan_tensor_hook_create(out, closs, fail) })
}

// CheckpointSaverHook is TF's CheckpointSaverHook(checkpoint_dir, save_secs | save_steps): the timer
// (OptSaveCheckpointSteps or OptSaveCheckpointSecs), basename and async mode come from opts.
func CheckpointSaverHook(checkpointDir string, opts *Options) (*BuiltinHook, error) {
	if err := opts.live(); err != nil {
		return nil, err
	}
	cdir, err := cString("checkpoint_dir", checkpointDir)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cdir))
	return builtin(func(out **C.tw_hook) C.tw_status {
		return C.tw_checkpoint_saver_hook_create(out, cdir, opts.c, nil, 0)
	})
}

// goHook is what a Go hook's cgo.Handle holds while a session uses it.
type goHook struct {
	hook    Hook
	session *Session
}

func hookName(h Hook) string {
	if named, ok := h.(Named); ok && named.Name() != "" {
		return named.Name()
	}
	return fmt.Sprintf("%T", h)
}

// newGoHook wraps h into a library hook for session s; the library owns the handle from then on and
// deletes it through twgoHookDestroy.
func newGoHook(s *Session, h Hook) (*C.tw_hook, error) {
	cname, err := cString("hook name", hookName(h))
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cname))
	handle := cgo.NewHandle(&goHook{hook: h, session: s})
	var out *C.tw_hook
	if err := check(func() C.tw_status { return C.twgo_hook_create(&out, cname, C.uintptr_t(handle)) }); err != nil {
		handle.Delete() // not taken by the library
		return nil, err
	}
	return out, nil
}

//export twgoHookCall
func twgoHookCall(handle C.uintptr_t, phase C.int, cs *C.tw_session, cctx *C.tw_run_context, status C.tw_status) C.tw_status {
	w := cgo.Handle(handle).Value().(*goHook)
	return w.session.guard(func() error {
		switch phase {
		case C.TWGO_BEFORE_RUN, C.TWGO_AFTER_RUN:
			ctx := &RunContext{c: cctx}
			defer func() { ctx.c = nil }()
			if phase == C.TWGO_BEFORE_RUN {
				return w.hook.BeforeRun(ctx)
			}
			return w.hook.AfterRun(ctx)
		}
		ref := &SessionRef{c: cs}
		defer func() { ref.c = nil }()
		switch phase {
		case C.TWGO_BEGIN:
			return w.hook.Begin(ref)
		case C.TWGO_AFTER_CREATE_SESSION:
			return w.hook.AfterCreateSession(ref)
		case C.TWGO_END:
			return w.hook.End(ref)
		default:
			w.hook.OnError(ref, Status(status))
			return nil
		}
	})
}

//export twgoHookDestroy
func twgoHookDestroy(handle C.uintptr_t) {
	cgo.Handle(handle).Delete()
}
