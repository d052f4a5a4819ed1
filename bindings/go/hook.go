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

// CheckpointSaverHook is TF's CheckpointSaverHook(checkpoint_dir, save_secs | save_steps,
// listeners=…): the timer (OptEveryNSteps or OptEveryNSecs), basename and async mode come from opts;
// listeners hear every save (the hook keeps them).
func CheckpointSaverHook(checkpointDir string, opts *Options, listeners ...CheckpointListener) (*BuiltinHook, error) {
	if err := opts.live(); err != nil {
		return nil, err
	}
	cdir, err := cString("checkpoint_dir", checkpointDir)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cdir))
	clisteners := make([]*C.tw_checkpoint_listener, 0, len(listeners))
	defer func() {
		for _, l := range clisteners {
			C.tw_checkpoint_listener_destroy(l) // the hook holds its own references
		}
	}()
	for i, l := range listeners {
		if l == nil {
			return nil, invalid("listener %d is nil", i)
		}
		c, err := newCListener(l)
		if err != nil {
			return nil, err
		}
		clisteners = append(clisteners, c)
	}
	// A C array of the listeners (one slot more, so that it is never a zero-size allocation).
	array := (**C.tw_checkpoint_listener)(C.calloc(C.size_t(len(clisteners)+1), C.size_t(unsafe.Sizeof((*C.tw_checkpoint_listener)(nil)))))
	defer C.free(unsafe.Pointer(array))
	copy(unsafe.Slice(array, len(clisteners)+1), clisteners)
	var listenersPtr **C.tw_checkpoint_listener
	if len(clisteners) > 0 {
		listenersPtr = array
	}
	return builtin(func(out **C.tw_hook) C.tw_status {
		return C.tw_checkpoint_saver_hook_create(out, cdir, opts.c, listenersPtr, C.size_t(len(clisteners)))
	})
}

// goHook is what a Go hook's cgo.Handle holds while a session uses it.
type goHook struct {
	hook Hook
}

func hookName(h Hook) string {
	if named, ok := h.(Named); ok && named.Name() != "" {
		return named.Name()
	}
	return fmt.Sprintf("%T", h)
}

// newGoHook wraps h into a library hook; the library owns the handle from then on and
// deletes it through twgoHookDestroy.
func newGoHook(h Hook) (*C.tw_hook, error) {
	return newCHook(hookName(h), h, func(out **C.tw_hook, cname *C.char, handle C.uintptr_t) C.tw_status {
		return C.twgo_hook_create(out, cname, handle)
	})
}

func newCHook(name string, h Hook, create func(**C.tw_hook, *C.char, C.uintptr_t) C.tw_status) (*C.tw_hook, error) {
	cname, err := cString("hook name", name)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cname))
	handle := cgo.NewHandle(&goHook{hook: h})
	var out *C.tw_hook
	if err := check(func() C.tw_status { return create(&out, cname, C.uintptr_t(handle)) }); err != nil {
		handle.Delete() // not taken by the library
		return nil, err
	}
	return out, nil
}

//export twgoHookCall
func twgoHookCall(handle C.uintptr_t, phase C.int, cs *C.tw_session, cctx *C.tw_run_context, status C.tw_status) C.tw_status {
	w := cgo.Handle(handle).Value().(*goHook)
	return guard(func() error {
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

// WrapCallbacks are the methods of TF's subclass of a built-in hook (class MyHook(NanTensorHook)):
// each runs in place of the built-in's callback and receives super, the built-in's own callbacks
// (TF's super()). Embed CallSuper to write only the methods you override; an override that does not
// call super skips the built-in behaviour, and an error super returns is the override's to return or
// to swallow. Errors and panics are handled as for Hook.
type WrapCallbacks interface {
	Begin(super *Super, s *SessionRef) error
	AfterCreateSession(super *Super, s *SessionRef) error
	BeforeRun(super *Super, ctx *RunContext) error
	AfterRun(super *Super, ctx *RunContext) error
	End(super *Super, s *SessionRef) error
	OnError(super *Super, s *SessionRef, status Status)
}

// CallSuper implements every WrapCallbacks method by calling super.
type CallSuper struct{}

func (CallSuper) Begin(super *Super, s *SessionRef) error { return super.Begin(s) }
func (CallSuper) AfterCreateSession(super *Super, s *SessionRef) error {
	return super.AfterCreateSession(s)
}
func (CallSuper) BeforeRun(super *Super, ctx *RunContext) error      { return super.BeforeRun(ctx) }
func (CallSuper) AfterRun(super *Super, ctx *RunContext) error       { return super.AfterRun(ctx) }
func (CallSuper) End(super *Super, s *SessionRef) error              { return super.End(s) }
func (CallSuper) OnError(super *Super, s *SessionRef, status Status) { super.OnError(s, status) }

// Super is the built-in hook a WrappedHook wraps, as its callbacks see it. Each method runs the
// built-in's callback of the same name and is valid only inside the wrapper's callback of that name,
// with the SessionRef or RunContext it received (else FailedPrecondition). Fetches, feeds and stop
// requests the built-in makes act for the wrapper: after super.BeforeRun(ctx), ctx.Requests() lists
// the built-in's fetches, and AfterRun reads their results.
type Super struct {
	c *C.tw_hook
}

func (p *Super) Begin(s *SessionRef) error { return p.onSession(s, C.TWGO_BEGIN) }
func (p *Super) AfterCreateSession(s *SessionRef) error {
	return p.onSession(s, C.TWGO_AFTER_CREATE_SESSION)
}
func (p *Super) End(s *SessionRef) error { return p.onSession(s, C.TWGO_END) }

func (p *Super) BeforeRun(ctx *RunContext) error {
	if ctx == nil || ctx.c == nil {
		return errOutsideCallback
	}
	return check(func() C.tw_status { return C.tw_hook_call_before_run(p.c, ctx.c) })
}

func (p *Super) AfterRun(ctx *RunContext) error {
	if ctx == nil || ctx.c == nil {
		return errOutsideCallback
	}
	return check(func() C.tw_status { return C.tw_hook_call_after_run(p.c, ctx.c) })
}

// OnError cannot fail; a misplaced call does nothing.
func (p *Super) OnError(s *SessionRef, status Status) {
	if s != nil && s.c != nil {
		C.tw_hook_call_on_error(p.c, s.c, C.tw_status(status))
	}
}

// Name is the built-in hook's name.
func (p *Super) Name() string { return C.GoString(C.tw_hook_name(p.c)) }

func (p *Super) onSession(s *SessionRef, phase C.int) error {
	if err := s.live(); err != nil {
		return err
	}
	return check(func() C.tw_status {
		switch phase {
		case C.TWGO_BEGIN:
			return C.tw_hook_call_begin(p.c, s.c)
		case C.TWGO_AFTER_CREATE_SESSION:
			return C.tw_hook_call_after_create_session(p.c, s.c)
		default:
			return C.tw_hook_call_end(p.c, s.c)
		}
	})
}

// WrappedHook is a hook made by WrapHook. Pass it to a session instead of its inner hook (listing
// both, or wrapping one built-in twice in a session, is InvalidArgument).
type WrappedHook struct {
	BaseHook
	inner     *BuiltinHook
	callbacks WrapCallbacks
	name      string
}

// WrapHook is TF's subclass of a built-in hook: a hook that runs callbacks in place of inner's
// callbacks, named as inner. A subclass that overrides nothing is inner itself: pass inner.
func WrapHook(inner *BuiltinHook, callbacks WrapCallbacks) (*WrappedHook, error) {
	if inner == nil || inner.c == nil {
		return nil, invalid("inner hook is nil or closed")
	}
	if callbacks == nil {
		return nil, invalid("callbacks is nil")
	}
	return &WrappedHook{inner: inner, callbacks: callbacks, name: inner.Name()}, nil
}

// Name is the name the wrapper has in the library's messages (the inner's).
func (w *WrappedHook) Name() string { return w.name }

// wrapAdapter turns WrapCallbacks into the Hook a session calls, with super bound.
type wrapAdapter struct {
	callbacks WrapCallbacks
	super     *Super
}

func (a wrapAdapter) Begin(s *SessionRef) error { return a.callbacks.Begin(a.super, s) }
func (a wrapAdapter) AfterCreateSession(s *SessionRef) error {
	return a.callbacks.AfterCreateSession(a.super, s)
}
func (a wrapAdapter) BeforeRun(ctx *RunContext) error      { return a.callbacks.BeforeRun(a.super, ctx) }
func (a wrapAdapter) AfterRun(ctx *RunContext) error       { return a.callbacks.AfterRun(a.super, ctx) }
func (a wrapAdapter) End(s *SessionRef) error              { return a.callbacks.End(a.super, s) }
func (a wrapAdapter) OnError(s *SessionRef, status Status) { a.callbacks.OnError(a.super, s, status) }

// newWrappedHook is newGoHook for a WrappedHook: the library wrapper holds its own reference to the
// inner hook, so Super stays valid while the wrapper lives.
func newWrappedHook(w *WrappedHook) (*C.tw_hook, error) {
	if w.inner == nil || w.inner.c == nil {
		return nil, invalid("the inner hook of '%s' is closed", w.name)
	}
	inner := w.inner.c
	adapter := wrapAdapter{callbacks: w.callbacks, super: &Super{c: inner}}
	return newCHook(w.name, adapter, func(out **C.tw_hook, cname *C.char, handle C.uintptr_t) C.tw_status {
		return C.twgo_hook_wrap(out, cname, inner, handle)
	})
}
