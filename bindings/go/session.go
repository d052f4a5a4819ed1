package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// StepFunc is the user's training step (TF's graph run). Return nil, ErrOutOfRange at the end of
// the input (a clean end), ctx.RequestStop(), ErrAborted/ErrUnavailable to ask for recovery, or any
// other error to fail the run.
type StepFunc func(ctx *StepContext) error

// Session is a MonitoredSession (recovering from preemption) or SingularMonitoredSession.
type Session struct {
	SessionRef
	variables heldTensors
}

// NewMonitoredSession is TF's MonitoredSession: Begin on every hook, restore (chief, from
// OptCheckpointDir) or initialize, AfterCreateSession on every hook. opts may be nil.
func NewMonitoredSession(opts *Options, hooks ...Hook) (*Session, error) {
	return newSession(opts, hooks, false)
}

// NewSingularMonitoredSession is TF's SingularMonitoredSession: no recovery, always a chief.
func NewSingularMonitoredSession(opts *Options, hooks ...Hook) (*Session, error) {
	return newSession(opts, hooks, true)
}

// cHooks turns hooks into library hooks: built-ins as they are, Go hooks wrapped (the wrappers in
// created, to release once the session holds them: it takes its own references).
func cHooks(hooks []Hook, what string) (raw []*C.tw_hook, created []*C.tw_hook, err error) {
	for i, h := range hooks {
		var c *C.tw_hook
		switch h := h.(type) {
		case nil:
			err = invalid("%s %d is nil", what, i)
		case *BuiltinHook:
			if h.c == nil {
				err = invalid("%s %d is closed", what, i)
			}
			c = h.c
		case *WrappedHook:
			if c, err = newWrappedHook(h); err == nil {
				created = append(created, c)
			}
		default:
			if c, err = newGoHook(h); err == nil {
				created = append(created, c)
			}
		}
		if err != nil {
			releaseHooks(created)
			return nil, nil, err
		}
		raw = append(raw, c)
	}
	return raw, created, nil
}

func releaseHooks(hooks []*C.tw_hook) {
	for _, h := range hooks {
		C.tw_hook_destroy(h)
	}
}

// hookArray is a C array of the hook pointers (NULL for none); free it after the call.
func hookArray(hooks []*C.tw_hook) **C.tw_hook {
	if len(hooks) == 0 {
		return nil
	}
	array := (**C.tw_hook)(C.calloc(C.size_t(len(hooks)), C.size_t(unsafe.Sizeof((*C.tw_hook)(nil)))))
	copy(unsafe.Slice(array, len(hooks)), hooks)
	return array
}

func newSession(opts *Options, hooks []Hook, singular bool) (*Session, error) {
	return createSession(opts, hooks, nil, func(out **C.tw_session, copts *C.tw_options, h **C.tw_hook, n C.size_t, _ **C.tw_hook, _ C.size_t) C.tw_status {
		if singular {
			return C.tw_singular_monitored_session_create(out, copts, h, n)
		}
		return C.tw_monitored_session_create(out, copts, h, n)
	})
}

type sessionCreator func(out **C.tw_session, opts *C.tw_options, hooks **C.tw_hook, n C.size_t, chiefOnly **C.tw_hook, nChiefOnly C.size_t) C.tw_status

func createSession(opts *Options, hooks, chiefOnly []Hook, create sessionCreator) (*Session, error) {
	var copts *C.tw_options
	if opts != nil {
		if err := opts.live(); err != nil {
			return nil, err
		}
		copts = opts.c
	}
	raw, created, err := cHooks(hooks, "hook")
	if err != nil {
		return nil, err
	}
	defer releaseHooks(created)
	rawChief, createdChief, err := cHooks(chiefOnly, "chief-only hook")
	if err != nil {
		return nil, err
	}
	defer releaseHooks(createdChief)
	array, chiefArray := hookArray(raw), hookArray(rawChief)
	defer C.free(unsafe.Pointer(array))
	defer C.free(unsafe.Pointer(chiefArray))
	s := &Session{}
	err = s.call(func() C.tw_status {
		return create(&s.c, copts, array, C.size_t(len(raw)), chiefArray, C.size_t(len(rawChief)))
	})
	if err != nil {
		return nil, err
	}
	if opts != nil {
		s.variables.add(opts.variables...)
	}
	runtime.SetFinalizer(s, (*Session).destroy)
	return s, nil
}

// call makes a library call that may run hooks or the step (check re-raises their panics).
func (s *Session) call(f func() C.tw_status) error { return check(f) }

type stepState struct {
	fn StepFunc
}

//export twgoStep
func twgoStep(handle C.uintptr_t, cctx *C.tw_step_context) C.tw_status {
	state := cgo.Handle(handle).Value().(*stepState)
	return guard(func() error {
		ctx := &StepContext{c: cctx}
		defer func() { ctx.c = nil }()
		return state.fn(ctx)
	})
}

// Run is one training step with hooks: BeforeRun on every hook → step → global step + 1 →
// fetches → AfterRun on every hook. feeds are borrowed for the call. An error that IsCleanEnd ends
// training without failing the session; any other fails it (hooks hear OnError, later runs fail).
func (s *Session) Run(step StepFunc, feeds ...*Tensor) error { return s.run(step, feeds, false) }

// RunWithoutHooks runs a step without hooks and without touching the global step (evaluation,
// iterator resets); recovery still applies.
func (s *Session) RunWithoutHooks(step StepFunc, feeds ...*Tensor) error {
	return s.run(step, feeds, true)
}

func (s *Session) run(step StepFunc, feeds []*Tensor, withoutHooks bool) error {
	if err := s.live(); err != nil {
		return err
	}
	if step == nil {
		return invalid("step is nil")
	}
	raw := make([]C.tw_tensor, len(feeds))
	for i, t := range feeds {
		if !t.live() {
			return invalid("feed %d is nil or freed", i)
		}
		raw[i] = t.raw()
	}
	var feedsPtr *C.tw_tensor
	if len(raw) > 0 {
		feedsPtr = &raw[0]
	}
	handle := cgo.NewHandle(&stepState{fn: step})
	defer handle.Delete()
	noHooks := C.int(0)
	if withoutHooks {
		noHooks = 1
	}
	err := s.call(func() C.tw_status {
		return C.twgo_session_run(s.c, feedsPtr, C.size_t(len(raw)), C.uintptr_t(handle), noHooks)
	})
	runtime.KeepAlive(feeds)
	return err
}

// SetGlobalStep sets the global step (outside a step; inside one use StepContext.SetGlobalStep).
func (s *Session) SetGlobalStep(value int64) error {
	if err := s.live(); err != nil {
		return err
	}
	return check(func() C.tw_status { return C.tw_session_set_global_step(s.c, C.int64_t(value)) })
}

// Close closes the session — End on every hook, unless a run failed — and frees it. The session is
// freed even when an End fails; closing twice fails with FailedPrecondition.
func (s *Session) Close() error {
	if err := s.live(); err != nil {
		return err
	}
	err := s.call(func() C.tw_status { return C.tw_session_close(s.c) })
	s.destroy()
	return err
}

func (s *Session) destroy() {
	if s.c == nil {
		return
	}
	// Releases the Go hooks' handles. Refused from inside the session's own callback: the session
	// stays valid and usable (Close has already reported FailedPrecondition).
	if C.tw_session_destroy(s.c) != C.TW_OK {
		return
	}
	s.c = nil
	s.variables.release()
	runtime.SetFinalizer(s, nil)
}

// SessionRef is a session as hooks see it (TF's run_context.session); a Session embeds one. The
// SessionRef passed to a hook is valid during the call only.
type SessionRef struct {
	c *C.tw_session
}

func (r *SessionRef) live() error {
	if r == nil || r.c == nil {
		return &Error{Status: FailedPrecondition, Message: "Session is closed."}
	}
	return nil
}

// GlobalStep is the current global step (in AfterRun, already the value after the step).
func (r *SessionRef) GlobalStep() (int64, error) {
	if err := r.live(); err != nil {
		return 0, err
	}
	return int64(C.tw_session_global_step(r.c)), nil
}

// ShouldStop reports a stop request, or a closed or failed session.
func (r *SessionRef) ShouldStop() bool {
	return r == nil || r.c == nil || C.tw_session_should_stop(r.c) != 0
}

// RequestStop requests a stop (the Coordinator's request_stop).
func (r *SessionRef) RequestStop() error {
	if err := r.live(); err != nil {
		return err
	}
	return check(func() C.tw_status { return C.tw_session_request_stop(r.c) })
}

// IsChief reports whether the session is a chief.
func (r *SessionRef) IsChief() bool { return r != nil && r.c != nil && C.tw_session_is_chief(r.c) != 0 }

// Variable is a registered variable's view, zero copy (write through Values to update it).
func (r *SessionRef) Variable(name string) (View, error) {
	if err := r.live(); err != nil {
		return View{}, err
	}
	return variable(r.c, name)
}

func variable(c *C.tw_session, name string) (View, error) {
	cname, err := cString("variable name", name)
	if err != nil {
		return View{}, err
	}
	defer C.free(unsafe.Pointer(cname))
	var t C.tw_tensor
	C.tw_tensor_init(&t)
	if err := check(func() C.tw_status { return C.tw_session_get_variable(&t, c, cname) }); err != nil {
		return View{}, err
	}
	return viewOf(&t), nil
}

// SaveCheckpoint is TF's scaffold.saver.save(sess, prefix, global_step) inside the session: the
// session's own saver saves the variables and global step to "<prefix>-<globalStep>" (prefix itself
// for Unset) with its lock, state file and retention, no listener (tf-semantics C27). prefix must lie
// in the session's checkpoint directory (InvalidArgument otherwise). Returns the checkpoint's path.
func (r *SessionRef) SaveCheckpoint(prefix string, globalStep int64) (string, error) {
	if err := r.live(); err != nil {
		return "", err
	}
	cprefix, err := cString("prefix", prefix)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(cprefix))
	var out *C.char
	if err := check(func() C.tw_status {
		return C.tw_session_save_checkpoint(&out, r.c, cprefix, C.int64_t(globalStep))
	}); err != nil {
		return "", err
	}
	return C.GoString(out), nil
}

// Output is, in AfterRun, an output the step published in this run (TF's
// run_context.session.run(name)); zero copy, valid during the callback. Elsewhere FailedPrecondition.
func (r *SessionRef) Output(name string) (View, error) {
	if err := r.live(); err != nil {
		return View{}, err
	}
	cname, err := cString("output name", name)
	if err != nil {
		return View{}, err
	}
	defer C.free(unsafe.Pointer(cname))
	var t C.tw_tensor
	C.tw_tensor_init(&t)
	if err := check(func() C.tw_status { return C.tw_session_get_output(&t, r.c, cname) }); err != nil {
		return View{}, err
	}
	return viewOf(&t), nil
}

var errOutsideCallback = &Error{Status: FailedPrecondition, Message: "context used outside its callback"}

// RunContext is TF's SessionRunContext with this hook's SessionRunArgs and SessionRunValues, valid
// during BeforeRun and AfterRun only.
type RunContext struct {
	c *C.tw_run_context
}

// RequestFetch asks, in BeforeRun, for the values named (outputs, variables, "global_step" or glob
// patterns) in this hook's AfterRun.
func (ctx *RunContext) RequestFetch(names ...string) error {
	for _, name := range names {
		if ctx.c == nil {
			return errOutsideCallback
		}
		cname, err := cString("fetch name", name)
		if err != nil {
			return err
		}
		err = check(func() C.tw_status { return C.tw_run_context_request_fetch(ctx.c, cname) })
		C.free(unsafe.Pointer(cname))
		if err != nil {
			return err
		}
	}
	return nil
}

// RequestStop is TF's run_context.request_stop(): latched after every hook's AfterRun.
func (ctx *RunContext) RequestStop() error {
	if ctx.c == nil {
		return errOutsideCallback
	}
	return check(func() C.tw_status { return C.tw_run_context_request_stop(ctx.c) })
}

// StopRequested reports whether a hook requested a stop in this run.
func (ctx *RunContext) StopRequested() bool {
	return ctx.c != nil && C.tw_run_context_stop_requested(ctx.c) != 0
}

// Session is the running session, valid during the callback.
func (ctx *RunContext) Session() *SessionRef {
	if ctx.c == nil {
		return &SessionRef{}
	}
	return &SessionRef{c: C.tw_run_context_session(ctx.c)}
}

// Requests are the names this hook requested so far in this run, in request order: in a wrapper,
// after super.BeforeRun(ctx), the built-in's fetches (TF's SessionRunArgs of super().before_run).
func (ctx *RunContext) Requests() ([]string, error) {
	if ctx.c == nil {
		return nil, errOutsideCallback
	}
	return collect(C.tw_run_context_request_count(ctx.c), func(i C.size_t, name **C.char) C.tw_status {
		return C.tw_run_context_request_at(name, ctx.c, i)
	}, goString)
}

// Result is, in AfterRun, the value fetched as name; zero copy, valid during the callback.
func (ctx *RunContext) Result(name string) (View, error) {
	if ctx.c == nil {
		return View{}, errOutsideCallback
	}
	cname, err := cString("result name", name)
	if err != nil {
		return View{}, err
	}
	defer C.free(unsafe.Pointer(cname))
	var t C.tw_tensor
	C.tw_tensor_init(&t)
	if err := check(func() C.tw_status { return C.tw_run_context_get_result(&t, ctx.c, cname) }); err != nil {
		return View{}, err
	}
	return viewOf(&t), nil
}

// StepContext is what the step function sees, valid during the step only.
type StepContext struct {
	c *C.tw_step_context
}

// Feed is the feed named (hooks' and the caller's, merged); zero copy, valid during the step.
func (ctx *StepContext) Feed(name string) (View, error) {
	if ctx.c == nil {
		return View{}, errOutsideCallback
	}
	cname, err := cString("feed name", name)
	if err != nil {
		return View{}, err
	}
	defer C.free(unsafe.Pointer(cname))
	var t C.tw_tensor
	C.tw_tensor_init(&t)
	if err := check(func() C.tw_status { return C.tw_step_context_get_feed(&t, ctx.c, cname) }); err != nil {
		return View{}, err
	}
	return viewOf(&t), nil
}

// IsRequested reports whether a hook asked for name in this run (so the step may skip it otherwise).
func (ctx *StepContext) IsRequested(name string) bool {
	if ctx.c == nil {
		return false
	}
	cname, err := cString("name", name)
	if err != nil {
		return false
	}
	defer C.free(unsafe.Pointer(cname))
	return C.tw_step_context_is_requested(ctx.c, cname) != 0
}

// Publish publishes an output for hooks to fetch; the library copies it. values is a scalar or a
// slice of an Element type; shape defaults to a scalar for a scalar and to 1-d for a slice.
func (ctx *StepContext) Publish(name string, values any, shape ...int64) error {
	if ctx.c == nil {
		return errOutsideCallback
	}
	dtype, data, n, scalar := elementsOf(values)
	if dtype == 0 {
		return invalid("output '%s': cannot publish a %T", name, values)
	}
	if shape == nil && !scalar {
		shape = []int64{int64(n)}
	}
	if count, err := elementCount(shape); err != nil {
		return err
	} else if count != n {
		return invalid("output '%s': shape %v does not hold %d elements", name, shape, n)
	}
	cname, err := cString("output name", name)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cname))
	var shapePtr *C.int64_t
	if len(shape) > 0 {
		shapePtr = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	err = check(func() C.tw_status {
		return C.twgo_publish_copy(ctx.c, cname, C.int32_t(dtype), data, C.int32_t(len(shape)), shapePtr)
	})
	runtime.KeepAlive(values)
	return err
}

// elementsOf returns the dtype, data pointer and count of a scalar or slice of an Element type.
func elementsOf(values any) (dtype DType, data unsafe.Pointer, n int, scalar bool) {
	switch v := values.(type) {
	case float32:
		return Float32, unsafe.Pointer(&v), 1, true
	case float64:
		return Float64, unsafe.Pointer(&v), 1, true
	case int32:
		return Int32, unsafe.Pointer(&v), 1, true
	case int64:
		return Int64, unsafe.Pointer(&v), 1, true
	case []float32:
		return Float32, slicePointer(v), len(v), false
	case []float64:
		return Float64, slicePointer(v), len(v), false
	case []int8:
		return Int8, slicePointer(v), len(v), false
	case []int16:
		return Int16, slicePointer(v), len(v), false
	case []int32:
		return Int32, slicePointer(v), len(v), false
	case []int64:
		return Int64, slicePointer(v), len(v), false
	case []uint8:
		return Uint8, slicePointer(v), len(v), false
	case []uint16:
		return Uint16, slicePointer(v), len(v), false
	case []uint32:
		return Uint32, slicePointer(v), len(v), false
	case []uint64:
		return Uint64, slicePointer(v), len(v), false
	}
	return 0, nil, 0, false
}

func slicePointer[T Element](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// GlobalStep is the global step at the start of this run.
func (ctx *StepContext) GlobalStep() int64 {
	if ctx.c == nil {
		return 0
	}
	return int64(C.tw_step_context_global_step(ctx.c))
}

// SetGlobalStep sets the global step to value when the step succeeds, instead of the automatic +1.
func (ctx *StepContext) SetGlobalStep(value int64) error {
	if ctx.c == nil {
		return errOutsideCallback
	}
	return check(func() C.tw_status { return C.tw_step_context_set_global_step(ctx.c, C.int64_t(value)) })
}

// RequestStop is TF's step_context.request_stop(): return its error from the step for a clean end.
func (ctx *StepContext) RequestStop() error {
	if ctx.c == nil {
		return errOutsideCallback
	}
	return check(func() C.tw_status { return C.tw_step_context_request_stop(ctx.c) })
}

// Variable is a registered variable's view, to update in place through Values.
func (ctx *StepContext) Variable(name string) (View, error) {
	if ctx.c == nil {
		return View{}, errOutsideCallback
	}
	return variable(C.tw_step_context_session(ctx.c), name)
}
