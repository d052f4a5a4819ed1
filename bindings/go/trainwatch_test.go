package trainwatch_test

// The wrapper's own contract: errors carry the status and wrap the hook's or step's error, panics
// never cross C and are re-raised after the C call, bad input is an error and never a crash, and
// tensors stay allocated while the library points at them.

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	tw "trainwatch.dev/trainwatch"
)

// recorder records its callbacks and fails or panics in one of them.
type recorder struct {
	tw.BaseHook
	log     []string
	failIn  string
	failErr error
	panicIn string
	fetch   string
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) event(name string) error {
	r.log = append(r.log, name)
	if r.panicIn == name {
		panic(name + " exploded")
	}
	if r.failIn == name {
		return r.failErr
	}
	return nil
}

func (r *recorder) Begin(*tw.SessionRef) error              { return r.event("begin") }
func (r *recorder) AfterCreateSession(*tw.SessionRef) error { return r.event("after_create_session") }
func (r *recorder) End(*tw.SessionRef) error                { return r.event("end") }
func (r *recorder) OnError(_ *tw.SessionRef, st tw.Status)  { _ = r.event("on_error " + st.String()) }

func (r *recorder) BeforeRun(ctx *tw.RunContext) error {
	if r.fetch != "" {
		if err := ctx.RequestFetch(r.fetch); err != nil {
			return err
		}
	}
	return r.event("before_run")
}

func (r *recorder) AfterRun(ctx *tw.RunContext) error {
	if r.fetch != "" {
		if _, err := ctx.Result(r.fetch); err != nil {
			return err
		}
	}
	return r.event("after_run")
}

func noop(*tw.StepContext) error { return nil }

func expectLog(t *testing.T, r *recorder, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(r.log, want) {
		t.Fatalf("hook calls %q, want %q", r.log, want)
	}
}

func expectStatus(t *testing.T, err error, want tw.Status) {
	t.Helper()
	if got := tw.StatusOf(err); got != want {
		t.Fatalf("status %v (%v), want %v", got, err, want)
	}
}

// recovered runs f and returns what it panicked with.
func recovered(f func()) (value any) {
	defer func() { value = recover() }()
	f()
	return nil
}

func TestRuntimeVersionIsTheHeaders(t *testing.T) {
	if err := tw.CheckVersion(); err != nil {
		t.Fatal(err)
	}
	number, text := tw.Version()
	if number != tw.HeaderVersionNumber || text != "0.1.0" {
		t.Fatalf("version %d %q, header %d", number, text, tw.HeaderVersionNumber)
	}
}

func TestStatusesAndDTypesComeFromTheHeader(t *testing.T) {
	if tw.NanLoss != 100 || tw.NanLoss.String() != "TW_NAN_LOSS" || tw.Status(4242).String() != "TW_UNKNOWN_STATUS" {
		t.Fatal("status values or names differ from the library's")
	}
	if tw.Float32.Size() != 4 || tw.BFloat16.String() != "bfloat16" || tw.Float8E5M2 != 15 {
		t.Fatal("dtype values or names differ from the library's")
	}
	if tw.StatusOf(nil) != tw.OK || tw.StatusOf(errors.New("x")) != tw.Unknown {
		t.Fatal("StatusOf")
	}
	if !tw.IsCleanEnd(tw.ErrOutOfRange) || tw.IsCleanEnd(tw.ErrNanLoss) {
		t.Fatal("IsCleanEnd")
	}
}

func TestHooksRunInOrder(t *testing.T) {
	r := &recorder{}
	s, err := tw.NewMonitoredSession(nil, r)
	must(t, err)
	must(t, s.Run(noop))
	step, err := s.GlobalStep()
	must(t, err)
	if step != 1 {
		t.Fatalf("global step %d", step)
	}
	must(t, s.Close())
	expectLog(t, r, "begin", "after_create_session", "before_run", "after_run", "end")
	expectStatus(t, s.Close(), tw.FailedPrecondition) // closing twice is an error, not a crash
	expectStatus(t, s.Run(noop), tw.FailedPrecondition)
}

func TestHookStatusErrorFailsTheRunWithItsStatus(t *testing.T) {
	r := &recorder{failIn: "before_run", failErr: tw.NewError(tw.InvalidArgument, "empty batch")}
	s, err := tw.NewMonitoredSession(nil, r)
	must(t, err)
	err = s.Run(noop)
	expectStatus(t, err, tw.InvalidArgument)
	if !strings.Contains(err.Error(), "hook 'recorder' before_run: empty batch") {
		t.Fatalf("message %q", err)
	}
	if !errors.Is(err, r.failErr) {
		t.Fatal("the hook's error is not wrapped")
	}
	expectStatus(t, s.Run(noop), tw.FailedPrecondition)
	must(t, s.Close())
	expectLog(t, r, "begin", "after_create_session", "before_run", "on_error TW_INVALID_ARGUMENT")
}

type customError struct{ batch int }

func (e *customError) Error() string { return fmt.Sprintf("batch %d is corrupt", e.batch) }

func TestPlainGoErrorSurfacesUnchangedThroughErrorsAs(t *testing.T) {
	r := &recorder{failIn: "after_run", failErr: &customError{batch: 7}}
	s, err := tw.NewMonitoredSession(nil, r)
	must(t, err)
	err = s.Run(noop)
	expectStatus(t, err, tw.CallbackFailed)
	var custom *customError
	if !errors.As(err, &custom) || custom.batch != 7 {
		t.Fatalf("errors.As did not reach the hook's error: %v", err)
	}
	must(t, s.Close())
}

func TestHookPanicIsReRaisedAfterTheCCall(t *testing.T) {
	r := &recorder{panicIn: "after_run"}
	s, err := tw.NewMonitoredSession(nil, r)
	must(t, err)
	if v := recovered(func() { _ = s.Run(noop) }); v != "after_run exploded" {
		t.Fatalf("panic value %v", v)
	}
	// The library failed the session cleanly and told every hook.
	expectLog(t, r, "begin", "after_create_session", "before_run", "after_run", "on_error TW_CALLBACK_FAILED")
	expectStatus(t, s.Run(noop), tw.FailedPrecondition) // nothing left pending
	must(t, s.Close())
}

func TestPanicInBeginIsReRaisedFromCreation(t *testing.T) {
	r := &recorder{panicIn: "begin"}
	if v := recovered(func() { _, _ = tw.NewMonitoredSession(nil, r) }); v != "begin exploded" {
		t.Fatalf("panic value %v", v)
	}
	expectLog(t, r, "begin", "on_error TW_CALLBACK_FAILED")
}

func TestStepPanicAndErrors(t *testing.T) {
	s, err := tw.NewSingularMonitoredSession(nil)
	must(t, err)
	defer s.Close()
	if v := recovered(func() { _ = s.Run(func(*tw.StepContext) error { panic("step exploded") }) }); v != "step exploded" {
		t.Fatalf("panic value %v", v)
	}
	s2, err := tw.NewSingularMonitoredSession(nil)
	must(t, err)
	defer s2.Close()
	err = s2.Run(func(*tw.StepContext) error { return tw.ErrOutOfRange })
	if !errors.Is(err, tw.ErrOutOfRange) || !tw.IsCleanEnd(err) {
		t.Fatalf("out of range: %v", err)
	}
	err = s2.Run(func(ctx *tw.StepContext) error { return ctx.RequestStop() })
	expectStatus(t, err, tw.StopIteration)
	if !strings.Contains(err.Error(), "step_fn has requested the iterations to stop.") {
		t.Fatalf("message %q", err)
	}
}

// Close inside the session's own step is refused (and so is the free that follows it): the session
// stays open and usable instead of being freed under the running call.
func TestCloseInsideTheStepIsRefusedAndTheSessionSurvives(t *testing.T) {
	s, err := tw.NewSingularMonitoredSession(nil)
	must(t, err)
	var inner error
	must(t, s.Run(func(*tw.StepContext) error { inner = s.Close(); return nil }))
	expectStatus(t, inner, tw.FailedPrecondition)
	must(t, s.Run(func(*tw.StepContext) error { return nil }))
	must(t, s.Close())
}

func TestFeedsResultsAndVariablesAreZeroCopy(t *testing.T) {
	w, err := tw.TensorOf("w", []float64{1, 2, 3})
	must(t, err)
	batch, err := tw.TensorOf("batch", []int32{10, 20, 30, 40, 50, 60}, 2, 3)
	must(t, err)
	opts, err := tw.NewOptions()
	must(t, err)
	defer opts.Close()
	must(t, opts.AddVariable(w))
	r := &recorder{fetch: "w"}
	s, err := tw.NewSingularMonitoredSession(opts, r)
	must(t, err)
	var total int32
	err = s.Run(func(ctx *tw.StepContext) error {
		feed, err := ctx.Feed("batch")
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(feed.Shape, []int64{2, 3}) || feed.DType != tw.Int32 {
			return fmt.Errorf("feed %+v", feed)
		}
		values, err := tw.Values[int32](feed)
		if err != nil {
			return err
		}
		for _, v := range values {
			total += v
		}
		if !ctx.IsRequested("w") || ctx.IsRequested("loss") {
			return errors.New("requested names")
		}
		view, err := ctx.Variable("w")
		if err != nil {
			return err
		}
		data, err := tw.Values[float64](view)
		if err != nil {
			return err
		}
		data[0] = float64(total)
		return ctx.Publish("matrix", []float32{1, 2, 3, 4}, 2, 2)
	}, batch)
	must(t, err)
	data, _ := tw.Values[float64](w)
	if total != 210 || !reflect.DeepEqual(data, []float64{210, 2, 3}) {
		t.Fatalf("total %d, w %v", total, data)
	}
	// The tensor is registered: it cannot be freed under the library.
	expectStatus(t, w.Free(), tw.FailedPrecondition)
	must(t, s.Close())
	opts.Close()
	must(t, w.Free())
	must(t, w.Free()) // twice is a no-op
	if _, err := tw.Values[float64](w); err == nil {
		t.Fatal("a freed tensor has values")
	}
}

func TestBadInputIsAnErrorNeverACrash(t *testing.T) {
	_, err := tw.StopAtStepHook(tw.Unset, tw.Unset)
	expectStatus(t, err, tw.InvalidArgument)
	if !strings.HasSuffix(err.Error(), "One of num_steps or last_step must be specified.") {
		t.Fatalf("message %q", err)
	}
	_, err = tw.NanTensorHook("lo\x00ss", true)
	expectStatus(t, err, tw.InvalidArgument)
	_, err = tw.NanTensorHook("", true)
	expectStatus(t, err, tw.InvalidArgument)
	_, err = tw.CheckpointSaverHook("/tmp/x", nil)
	expectStatus(t, err, tw.FailedPrecondition)
	_, err = tw.NewTensor("t", tw.DType(99), 2)
	expectStatus(t, err, tw.InvalidArgument)
	_, err = tw.TensorOf("t", []float32{1, 2}, 3)
	expectStatus(t, err, tw.InvalidArgument)
	_, err = tw.NewTensor("t", tw.Float32, -1)
	expectStatus(t, err, tw.InvalidArgument)

	opts, err := tw.NewOptions()
	must(t, err)
	expectStatus(t, opts.SetInt64(tw.OptCheckpointDir, 3), tw.InvalidArgument)
	expectStatus(t, opts.SetFloat64(tw.OptMaxToKeep, 1.5), tw.InvalidArgument)
	expectStatus(t, opts.AddVariable(nil), tw.InvalidArgument)
	gs, _ := tw.TensorOf("global_step", []int64{0})
	expectStatus(t, opts.AddVariable(gs), tw.InvalidArgument)
	opts.Close()
	opts.Close()
	expectStatus(t, opts.SetInt64(tw.OptMaxToKeep, 1), tw.FailedPrecondition)

	_, err = tw.NewMonitoredSession(nil, nil)
	expectStatus(t, err, tw.InvalidArgument)
	stop, err := tw.StopAtStepHook(1, tw.Unset)
	must(t, err)
	_, err = tw.NewMonitoredSession(nil, stop, stop)
	expectStatus(t, err, tw.InvalidArgument)
	stop.Close()
	_, err = tw.NewMonitoredSession(nil, stop)
	expectStatus(t, err, tw.InvalidArgument) // closed hook

	s, err := tw.NewSingularMonitoredSession(nil, &recorder{fetch: "missing"})
	must(t, err)
	expectStatus(t, s.Run(nil), tw.InvalidArgument)
	expectStatus(t, s.Run(noop), tw.NotFound)
	must(t, s.Close())

	x, _ := tw.ScalarTensor("x", float32(1.5))
	s, err = tw.NewSingularMonitoredSession(nil)
	must(t, err)
	var saved *tw.StepContext
	err = s.Run(func(ctx *tw.StepContext) error {
		saved = ctx
		feed, err := ctx.Feed("x")
		if err != nil {
			return err
		}
		_, err = tw.Scalar[float64](feed)
		return err
	}, x)
	expectStatus(t, err, tw.InvalidArgument)
	if !strings.Contains(err.Error(), "'x' is float32, not float64") {
		t.Fatalf("message %q", err)
	}
	// A context kept past its step is dead, not dangling.
	expectStatus(t, saved.Publish("late", float32(1)), tw.FailedPrecondition)
	if saved.GlobalStep() != 0 {
		t.Fatal("dead context")
	}
	s.Close()
	s, err = tw.NewSingularMonitoredSession(nil)
	must(t, err)
	err = s.Run(func(ctx *tw.StepContext) error { return ctx.Publish("bad", "text") })
	expectStatus(t, err, tw.InvalidArgument)
	s.Close()
}

func TestScan(t *testing.T) {
	nan := float32(math.NaN())
	result, err := tw.Scan([]float32{1, nan, float32(math.Inf(1)), float32(math.Inf(-1)), nan})
	must(t, err)
	if result != (tw.ScanResult{NaN: 2, PosInf: 1, NegInf: 1, FirstNonFinite: 1}) {
		t.Fatalf("%+v", result)
	}
	result, err = tw.Scan([]int64{})
	must(t, err)
	if result.FirstNonFinite != -1 {
		t.Fatalf("%+v", result)
	}
}

func TestOptionsRoundTripAndLatestCheckpointOfAnEmptyDir(t *testing.T) {
	opts, err := tw.NewOptions()
	must(t, err)
	defer opts.Close()
	if v, _ := opts.Int64(tw.OptMaxToKeep); v != 5 {
		t.Fatalf("max_to_keep default %d", v)
	}
	must(t, opts.SetInt64(tw.OptMaxToKeep, 2))
	must(t, opts.SetFloat64(tw.OptRecoveryBackoffSecs, 0.5))
	must(t, opts.SetString(tw.OptCheckpointBasename, "m"))
	i, _ := opts.Int64(tw.OptMaxToKeep)
	f, _ := opts.Float64(tw.OptRecoveryBackoffSecs)
	s, _ := opts.String(tw.OptCheckpointBasename)
	d, _ := opts.String(tw.OptCheckpointDir)
	if i != 2 || f != 0.5 || s != "m" || d != "" {
		t.Fatalf("%d %g %q %q", i, f, s, d)
	}
	latest, err := tw.LatestCheckpoint(t.TempDir())
	if err != nil || latest != "" {
		t.Fatalf("%q %v", latest, err)
	}
}
