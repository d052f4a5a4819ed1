package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// HookOption configures one of the periodic or configurable built-in hooks (TF's keyword
// arguments): EveryNSteps(100), OutputDir(dir), WithSummaryWriter(w), …
type HookOption func(*hookConfig) error

type hookConfig struct {
	opts      *Options // the tw_options the hook is created with (its period, directory, …)
	writer    *SummaryWriter
	tags      []string
	formatter func(values []View) (string, error)
	onNaN     func(s *SessionRef, event NanEvent) error
	readStep  func(s *SessionRef) (int64, error)
}

func (c *hookConfig) setOption(key Option, value any) error {
	if c.opts == nil {
		opts, err := NewOptions()
		if err != nil {
			return err
		}
		c.opts = opts
	}
	return c.opts.Set(key, value)
}

func newHookConfig(options []HookOption) (*hookConfig, error) {
	c := &hookConfig{}
	for _, option := range options {
		if option == nil {
			continue
		}
		if err := option(c); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

func (c *hookConfig) copts() *C.tw_options {
	if c.opts == nil {
		return nil
	}
	return c.opts.c
}

func (c *hookConfig) cwriter() *C.tw_summary_writer {
	if c.writer == nil {
		return nil
	}
	return c.writer.c
}

func (c *hookConfig) close() {
	if c.opts != nil {
		c.opts.Close()
	}
}

// WithOption sets any option the hook reads (Options.Set's value types).
func WithOption(key Option, value any) HookOption {
	return func(c *hookConfig) error { return c.setOption(key, value) }
}

// EveryNSteps is the period in steps (save_steps, every_n_iter, every_n_steps).
func EveryNSteps(n int64) HookOption { return WithOption(OptEveryNSteps, n) }

// EveryNSecs is the period in seconds (save_secs, every_n_secs).
func EveryNSecs(secs float64) HookOption { return WithOption(OptEveryNSecs, secs) }

// OutputDir is the hook's output_dir (summaries, step rate, profiles).
func OutputDir(dir string) HookOption { return WithOption(OptOutputDir, dir) }

// WithSummaryWriter is the hook's summary_writer (the hook takes its own reference).
func WithSummaryWriter(w *SummaryWriter) HookOption {
	return func(c *hookConfig) error {
		if w == nil || w.c == nil {
			return invalid("summary writer is nil or closed")
		}
		c.writer = w
		return nil
	}
}

// LogAtEnd is LoggingTensorHook's at_end=True.
func LogAtEnd() HookOption { return WithOption(OptLogAtEnd, true) }

// Tags label LoggingTensorHook's names (TF's dict form): tags[i] labels names[i], printed sorted by tag.
func Tags(tags ...string) HookOption {
	return func(c *hookConfig) error { c.tags = append([]string(nil), tags...); return nil }
}

// Formatter is LoggingTensorHook's formatter: it writes the whole line from the values (named by
// their tags, in print order, valid during the call).
func Formatter(fn func(values []View) (string, error)) HookOption {
	return func(c *hookConfig) error { c.formatter = fn; return nil }
}

// NanAction is the full NaN guard's reaction (NanFail by default).
func NanAction(action NanActionKind) HookOption { return WithOption(OptNanAction, int64(action)) }

// OnNaN is the full NaN guard's callback (NanCallback): it decides per bad value; an error fails the run.
func OnNaN(fn func(s *SessionRef, event NanEvent) error) HookOption {
	return func(c *hookConfig) error {
		c.onNaN = fn
		return c.setOption(OptNanAction, int64(NanCallback))
	}
}

// ReadGlobalStep is where GlobalStepWaiterHook reads the shared global step (default: the session's).
func ReadGlobalStep(fn func(s *SessionRef) (int64, error)) HookOption {
	return func(c *hookConfig) error { c.readStep = fn; return nil }
}

// NanActionKind is what the full NaN guard does with a NaN (or ±Inf when detecting Inf).
type NanActionKind int64

const (
	NanFail     NanActionKind = C.TW_NAN_ACTION_FAIL     // fail the run with NanLoss
	NanStop     NanActionKind = C.TW_NAN_ACTION_STOP     // warn and request a stop
	NanCallback NanActionKind = C.TW_NAN_ACTION_CALLBACK // call OnNaN's function
	NanRollback NanActionKind = C.TW_NAN_ACTION_ROLLBACK // restore the newest good checkpoint and go on
)

// NanEvent is what the guard found in one watched value.
type NanEvent struct {
	Tensor              string
	GlobalStep          int64
	NaN, PosInf, NegInf int64
	FirstNonFinite      int64
}

// cStrings is a C array of C copies of ss (nil for none); free releases it.
type cStrings struct {
	ptr **C.char
	n   int
}

func newCStrings(what string, ss []string) (cStrings, error) {
	if len(ss) == 0 {
		return cStrings{}, nil
	}
	array := (**C.char)(C.calloc(C.size_t(len(ss)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	out := cStrings{ptr: array, n: len(ss)}
	items := unsafe.Slice(array, len(ss))
	for i, s := range ss {
		cs, err := cString(what, s)
		if err != nil {
			out.free()
			return cStrings{}, err
		}
		items[i] = cs
	}
	return out, nil
}

func (s cStrings) free() {
	if s.ptr == nil {
		return
	}
	for _, p := range unsafe.Slice(s.ptr, s.n) {
		C.free(unsafe.Pointer(p))
	}
	C.free(unsafe.Pointer(s.ptr))
}

// builtinWith creates a hook whose C callback holds handle (0: none); the handle is deleted when
// the library does not take it.
func builtinWith(value any, create func(out **C.tw_hook, handle C.uintptr_t) C.tw_status) (*BuiltinHook, error) {
	var handle C.uintptr_t
	if value != nil {
		handle = C.uintptr_t(handleOf(value))
	}
	h, err := builtin(func(out **C.tw_hook) C.tw_status { return create(out, handle) })
	if err != nil && handle != 0 {
		twgoRelease(handle)
	}
	return h, err
}

// NanTensorHookWith is the full NaN/Inf guard: it watches every name or fnmatch pattern in watch,
// with NanAction, OnNaN, WithOption(OptNanDetectInf / OptNanEveryNSteps / OptNanMaxRollbacks, …).
// NanRollback reads OptCheckpointDir from WithOption.
func NanTensorHookWith(watch []string, options ...HookOption) (*BuiltinHook, error) {
	c, err := newHookConfig(options)
	if err != nil {
		return nil, err
	}
	defer c.close()
	cwatch, err := newCStrings("watched name", watch)
	if err != nil {
		return nil, err
	}
	defer cwatch.free()
	var fn any
	if c.onNaN != nil {
		fn = c.onNaN
	}
	return builtinWith(fn, func(out **C.tw_hook, handle C.uintptr_t) C.tw_status {
		return C.twgo_nan_tensor_hook_create(out, cwatch.ptr, C.size_t(cwatch.n), c.copts(), handle)
	})
}

//export twgoNanCall
func twgoNanCall(handle C.uintptr_t, cs *C.tw_session, name *C.char, step, nan, posInf, negInf, first C.int64_t) C.tw_status {
	fn := valueOf[func(*SessionRef, NanEvent) error](handle)
	event := NanEvent{Tensor: C.GoString(name), GlobalStep: int64(step), NaN: int64(nan), PosInf: int64(posInf),
		NegInf: int64(negInf), FirstNonFinite: int64(first)}
	return guard(func() error { return withSession(cs, func(s *SessionRef) error { return fn(s, event) }) })
}

// LoggingTensorHook is TF's LoggingTensorHook(tensors, every_n_iter, every_n_secs, at_end,
// formatter): EveryNSteps(n) | EveryNSecs(s), LogAtEnd(), Tags(…), Formatter(fn),
// WithOption(OptLogMaxElements, n). names are outputs the step publishes, variables or "global_step".
func LoggingTensorHook(names []string, options ...HookOption) (*BuiltinHook, error) {
	c, err := newHookConfig(options)
	if err != nil {
		return nil, err
	}
	defer c.close()
	cnames, err := newCStrings("tensor name", names)
	if err != nil {
		return nil, err
	}
	defer cnames.free()
	var ctags cStrings
	if c.tags != nil {
		if len(c.tags) != len(names) {
			return nil, invalid("%d tags for %d names", len(c.tags), len(names))
		}
		if ctags, err = newCStrings("tag", c.tags); err != nil {
			return nil, err
		}
		defer ctags.free()
	}
	var fn any
	if c.formatter != nil {
		fn = c.formatter
	}
	return builtinWith(fn, func(out **C.tw_hook, handle C.uintptr_t) C.tw_status {
		return C.twgo_logging_tensor_hook_create(out, cnames.ptr, ctags.ptr, C.size_t(cnames.n), c.copts(), handle)
	})
}

// views reads an array of n pointers to views the library lends.
func views(values **C.tw_tensor, n C.size_t) []View {
	out := make([]View, int(n))
	for i := range out {
		out[i] = viewOf(C.twgo_tensor_at(values, C.size_t(i)))
	}
	return out
}

//export twgoFormat
func twgoFormat(handle C.uintptr_t, values **C.tw_tensor, n C.size_t, buffer *C.char, size C.size_t, length *C.size_t) C.tw_status {
	fn := valueOf[func([]View) (string, error)](handle)
	return guard(func() error {
		line, err := fn(views(values, n))
		if err != nil {
			return err
		}
		*length = C.size_t(len(line))
		if int(size) > len(line) {
			dst := unsafe.Slice((*byte)(unsafe.Pointer(buffer)), int(size))
			copy(dst, line)
			dst[len(line)] = 0
		}
		return nil
	})
}

// StepCounterHook is TF's StepCounterHook(every_n_steps=100, every_n_secs, output_dir,
// summary_writer): EveryNSteps, EveryNSecs (with WithOption(OptEveryNSteps, nil) for TF's None),
// OutputDir, WithSummaryWriter.
func StepCounterHook(options ...HookOption) (*BuiltinHook, error) {
	c, err := newHookConfig(options)
	if err != nil {
		return nil, err
	}
	defer c.close()
	return builtin(func(out **C.tw_hook) C.tw_status { return C.tw_step_counter_hook_create(out, c.copts(), c.cwriter()) })
}

// SummarySaverHook is TF's SummarySaverHook(save_steps, save_secs, output_dir, summary_writer,
// summary_op): summarize are names or patterns of published outputs and variables (none: every one).
// EveryNSteps | EveryNSecs, OutputDir | WithSummaryWriter, WithOption(OptSummaryHistograms, …),
// WithOption(OptSummaryHistogramNames, "a,b*").
func SummarySaverHook(summarize []string, options ...HookOption) (*BuiltinHook, error) {
	c, err := newHookConfig(options)
	if err != nil {
		return nil, err
	}
	defer c.close()
	cnames, err := newCStrings("summary name", summarize)
	if err != nil {
		return nil, err
	}
	defer cnames.free()
	return builtin(func(out **C.tw_hook) C.tw_status {
		return C.tw_summary_saver_hook_create(out, cnames.ptr, C.size_t(cnames.n), c.copts(), c.cwriter())
	})
}

// ProfilerHook is TF's ProfilerHook(save_steps, save_secs, output_dir): Chrome traces of one run
// every period into OutputDir's timeline-<step>.json.
func ProfilerHook(options ...HookOption) (*BuiltinHook, error) {
	c, err := newHookConfig(options)
	if err != nil {
		return nil, err
	}
	defer c.close()
	return builtin(func(out **C.tw_hook) C.tw_status { return C.tw_profiler_hook_create(out, c.copts()) })
}

// GlobalStepWaiterHook is TF's GlobalStepWaiterHook(wait_until_step): the first run waits until the
// global step (ReadGlobalStep's, else the session's) reaches waitUntilStep.
// WithOption(OptWaitPollSecs / OptWaitMaxSecs, secs).
func GlobalStepWaiterHook(waitUntilStep int64, options ...HookOption) (*BuiltinHook, error) {
	c, err := newHookConfig(options)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var fn any
	if c.readStep != nil {
		fn = c.readStep
	}
	return builtinWith(fn, func(out **C.tw_hook, handle C.uintptr_t) C.tw_status {
		return C.twgo_global_step_waiter_hook_create(out, C.int64_t(waitUntilStep), c.copts(), handle)
	})
}

//export twgoGlobalStep
func twgoGlobalStep(handle C.uintptr_t, cs *C.tw_session, step *C.int64_t) C.tw_status {
	fn := valueOf[func(*SessionRef) (int64, error)](handle)
	return guard(func() error {
		return withSession(cs, func(s *SessionRef) error {
			value, err := fn(s)
			*step = C.int64_t(value)
			return err
		})
	})
}

// FeedFunc supplies the feeds of one run: tensors in C memory (their data is read during the run).
type FeedFunc func() ([]*Tensor, error)

type feedState struct {
	fn    FeedFunc
	array *C.tw_tensor // C copy of the views of the last call, which the library reads after it returns
	n     int
	keep  []*Tensor
}

// FeedFnHook is TF's FeedFnHook(feed_fn): fn's tensors are fed in every run.
func FeedFnHook(fn FeedFunc) (*BuiltinHook, error) {
	if fn == nil {
		return nil, invalid("feed function is nil")
	}
	state := &feedState{fn: fn}
	return builtinWith(state, func(out **C.tw_hook, handle C.uintptr_t) C.tw_status {
		return C.twgo_feed_fn_hook_create(out, handle)
	})
}

//export twgoFeeds
func twgoFeeds(handle C.uintptr_t, feeds **C.tw_tensor, n *C.size_t) C.tw_status {
	state := valueOf[*feedState](handle)
	return guard(func() error {
		tensors, err := state.fn()
		if err != nil {
			return err
		}
		if len(tensors) > state.n {
			C.free(unsafe.Pointer(state.array))
			state.array = (*C.tw_tensor)(C.calloc(C.size_t(len(tensors)), C.size_t(unsafe.Sizeof(C.tw_tensor{}))))
			state.n = len(tensors)
			runtime.SetFinalizer(state, func(s *feedState) { C.free(unsafe.Pointer(s.array)) })
		}
		array := unsafe.Slice(state.array, state.n)
		for i, t := range tensors {
			if !t.live() {
				return invalid("feed %d is nil or freed", i)
			}
			array[i] = t.raw()
		}
		state.keep = tensors // the run reads their memory after the callback returns
		*feeds, *n = state.array, C.size_t(len(tensors))
		return nil
	})
}

// FinalOpsHook is TF's FinalOpsHook(final_ops, final_ops_feed_dict): at end, final runs once without
// hooks with feeds (copied now); its published outputs are then FinalValues.
func FinalOpsHook(final StepFunc, feeds ...*Tensor) (*BuiltinHook, error) {
	if final == nil {
		return nil, invalid("final step is nil")
	}
	raw := make([]C.tw_tensor, len(feeds))
	for i, t := range feeds {
		if !t.live() {
			return nil, invalid("feed %d is nil or freed", i)
		}
		raw[i] = t.raw()
	}
	craw := (*C.tw_tensor)(C.calloc(C.size_t(len(raw)+1), C.size_t(unsafe.Sizeof(C.tw_tensor{}))))
	defer C.free(unsafe.Pointer(craw))
	copy(unsafe.Slice(craw, len(raw)+1), raw)
	h, err := builtinWith(&stepState{fn: final}, func(out **C.tw_hook, handle C.uintptr_t) C.tw_status {
		return C.twgo_final_ops_hook_create(out, craw, C.size_t(len(raw)), handle)
	})
	runtime.KeepAlive(feeds)
	return h, err
}

// FinalValues are the outputs a FinalOpsHook's final step published, in publish order (TF's
// final_ops_values): zero copy, valid until the hook is closed or its final step runs again.
// FailedPrecondition before the final step ran.
func (h *BuiltinHook) FinalValues() ([]View, error) {
	if h == nil || h.c == nil {
		return nil, invalid("hook is nil or closed")
	}
	if C.tw_final_ops_hook_value_count(h.c) == 0 { // none published, not run yet, or not a FinalOpsHook
		var t C.tw_tensor
		C.tw_tensor_init(&t)
		err := check(func() C.tw_status { return C.tw_final_ops_hook_value_at(&t, h.c, 0) })
		if StatusOf(err) != OutOfRange {
			return nil, err
		}
		return []View{}, nil
	}
	return collect(C.tw_final_ops_hook_value_count(h.c), func(i C.size_t, t *C.tw_tensor) C.tw_status {
		C.tw_tensor_init(t)
		return C.tw_final_ops_hook_value_at(t, h.c, i)
	}, viewOf)
}

// FinalValue is the output named name of a FinalOpsHook's final step.
func (h *BuiltinHook) FinalValue(name string) (View, error) {
	if h == nil || h.c == nil {
		return View{}, invalid("hook is nil or closed")
	}
	cname, err := cString("name", name)
	if err != nil {
		return View{}, err
	}
	defer C.free(unsafe.Pointer(cname))
	var t C.tw_tensor
	C.tw_tensor_init(&t)
	if err := check(func() C.tw_status { return C.tw_final_ops_hook_get_value(&t, h.c, cname) }); err != nil {
		return View{}, err
	}
	return viewOf(&t), nil
}
