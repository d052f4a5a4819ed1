package trainwatch_test

// The API beyond the session core: MonitoredTrainingSession, every built-in hook and its Go
// callbacks, checkpoint listeners and hook overrides, Saver and checkpoint reading, summaries, the
// collective seam and shards. Behaviour IDs: docs/tf-semantics.md.

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	tw "trainwatch.dev/trainwatch"
)

// trainer is w float32[4] += x per step, publishing loss = sum(w).
type trainer struct {
	w, x *tw.Tensor
}

func newTrainer(t *testing.T) *trainer {
	t.Helper()
	w, err := tw.NewTensor("w", tw.Float32, 4)
	must(t, err)
	x, err := tw.ScalarTensor("x", float32(1))
	must(t, err)
	return &trainer{w: w, x: x}
}

func (tr *trainer) step(ctx *tw.StepContext) error { return addFeedToW(ctx, func(float32) {}) }

// addFeedToW is the step of the tests' model (trainer, and parity's model): w += x, the feed, and
// publishes loss = sum(w). seen hears x as soon as it is read.
func addFeedToW(ctx *tw.StepContext, seen func(x float32)) error {
	feed, err := ctx.Feed("x")
	if err != nil {
		return err
	}
	x, err := tw.Scalar[float32](feed)
	if err != nil {
		return err
	}
	seen(x)
	view, err := ctx.Variable("w")
	if err != nil {
		return err
	}
	w, err := tw.Values[float32](view)
	if err != nil {
		return err
	}
	var loss float32
	for i := range w {
		w[i] += x
		loss += w[i]
	}
	return ctx.Publish("loss", loss)
}

func (tr *trainer) train(t *testing.T, s *tw.Session) int {
	t.Helper()
	runs := 0
	for !s.ShouldStop() {
		must(t, s.Run(tr.step, tr.x))
		runs++
	}
	return runs
}

// options makes options holding w, closed when the test ends.
func (tr *trainer) options(t *testing.T) *tw.Options {
	t.Helper()
	opts, err := tw.NewOptions()
	must(t, err)
	t.Cleanup(opts.Close)
	must(t, opts.AddVariable(tr.w))
	return opts
}

// built takes what a hook constructor returns, failing the test on its error; the hook is closed
// when the test ends: stop := built(t)(tw.StopAtStepHook(3, tw.Unset)).
func built(t *testing.T) func(*tw.BuiltinHook, error) *tw.BuiltinHook {
	return func(hook *tw.BuiltinHook, err error) *tw.BuiltinHook {
		t.Helper()
		must(t, err)
		t.Cleanup(hook.Close)
		return hook
	}
}

func quiet(t *testing.T) {
	tw.SetLogLevel(tw.LogError)
	t.Cleanup(func() { tw.SetLogLevel(tw.LogInfo) })
}

// T6: a chief's MonitoredTrainingSession adds StepCounterHook, SummarySaverHook and
// CheckpointSaverHook after the chief-only hooks and before the others, and a second one restores
// from the checkpoint dir (T6); the summaries go to the checkpoint dir (T7).
func TestMonitoredTrainingSessionDefaultsAndResume(t *testing.T) {
	quiet(t)
	dir := t.TempDir()
	tr := newTrainer(t)
	stop := built(t)(tw.StopAtStepHook(tw.Unset, 4))
	chief := &recorder{}
	s, err := tw.NewMonitoredTrainingSession(tw.Variables(tr.w), tw.CheckpointDir(dir), tw.SaveCheckpointSteps(2),
		tw.SaveSummariesSteps(1), tw.LogStepCountSteps(1), tw.ChiefOnlyHooks(chief), tw.Hooks(stop))
	must(t, err)
	names, err := s.HookNames()
	must(t, err)
	want := []string{"recorder", "StepCounterHook", "SummarySaverHook", "CheckpointSaverHook", "StopAtStepHook"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("hooks %q, want %q", names, want)
	}
	if runs := tr.train(t, s); runs != 4 {
		t.Errorf("%d runs, want 4", runs)
	}
	must(t, s.Close())
	latest, err := tw.LatestCheckpoint(dir)
	must(t, err)
	if filepath.Base(latest) != "model.ckpt-4" {
		t.Errorf("latest checkpoint %q", latest)
	}
	events, _ := filepath.Glob(filepath.Join(dir, "events.out.tfevents.*"))
	if len(events) == 0 {
		t.Fatal("no event file: the default SummarySaverHook wrote nothing")
	}
	scalars := readScalars(t, events[0])
	if scalars["loss"] == nil || scalars["global_step/sec"] == nil {
		t.Errorf("summaries %v lack loss or global_step/sec", scalars)
	}

	again := newTrainer(t)
	stop2 := built(t)(tw.StopAtStepHook(2, tw.Unset))
	s2, err := tw.NewMonitoredTrainingSession(tw.Variables(again.w), tw.CheckpointDir(dir), tw.SaveSummariesSteps(0),
		tw.LogStepCountSteps(0), tw.Hooks(stop2))
	must(t, err)
	step, err := s2.GlobalStep()
	must(t, err)
	w, _ := tw.Values[float32](again.w)
	if step != 4 || w[0] != 4 {
		t.Errorf("resumed at step %d with w[0]=%v, want 4 and 4", step, w[0])
	}
	again.train(t, s2)
	must(t, s2.Close())
	if w[0] != 6 {
		t.Errorf("w[0]=%v after resuming for 2 steps, want 6", w[0])
	}
}

// savingHook saves through the session in every AfterRun (TF's scaffold.saver.save from a hook).
type savingHook struct {
	tw.BaseHook
	prefix string
	saved  []string
}

func (h *savingHook) AfterRun(ctx *tw.RunContext) error {
	step, err := ctx.Session().GlobalStep()
	if err != nil {
		return err
	}
	path, err := ctx.Session().SaveCheckpoint(h.prefix, step)
	h.saved = append(h.saved, path)
	return err
}

// C27: beside the CheckpointSaverHook holding the directory, a hook saves through the session's own
// saver; another directory is refused.
func TestSessionSavesCheckpointOnRequest(t *testing.T) {
	quiet(t)
	dir := t.TempDir()
	tr := newTrainer(t)
	stop := built(t)(tw.StopAtStepHook(tw.Unset, 3))
	saving := &savingHook{prefix: filepath.Join(dir, "model.ckpt")}
	s, err := tw.NewMonitoredTrainingSession(tw.Variables(tr.w), tw.CheckpointDir(dir), tw.SaveCheckpointSteps(100),
		tw.SaveSummariesSteps(0), tw.LogStepCountSteps(0), tw.Hooks(stop, saving))
	must(t, err)
	tr.train(t, s)
	if len(saving.saved) != 3 || filepath.Base(saving.saved[2]) != "model.ckpt-3" {
		t.Errorf("saved %q, want model.ckpt-1..3", saving.saved)
	}
	_, err = s.SaveCheckpoint(filepath.Join(t.TempDir(), "model.ckpt"), tw.Unset)
	expectStatus(t, err, tw.InvalidArgument)
	must(t, s.Close())
	latest, err := tw.LatestCheckpoint(dir)
	must(t, err)
	if filepath.Base(latest) != "model.ckpt-3" {
		t.Errorf("latest checkpoint %q, want model.ckpt-3", latest)
	}
}

// readScalars is every scalar summary of an event file, by tag, in file order.
func readScalars(t *testing.T, path string) map[string][]float32 {
	t.Helper()
	r, err := tw.OpenEventReader(path)
	must(t, err)
	defer r.Close()
	scalars := map[string][]float32{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return scalars
		}
		must(t, err)
		for _, v := range e.Values {
			if v.Histogram == nil && !v.IsOther {
				scalars[v.Tag] = append(scalars[v.Tag], v.Scalar)
			}
		}
	}
}

type listener struct {
	tw.BaseCheckpointListener
	log      []string
	stopAt   int64
	panicked bool
}

func (l *listener) Begin() error { l.log = append(l.log, "begin"); return nil }
func (l *listener) BeforeSave(_ *tw.SessionRef, step int64) error {
	l.log = append(l.log, "before_save "+itoa(step))
	return nil
}
func (l *listener) AfterSave(_ *tw.SessionRef, step int64) (bool, error) {
	l.log = append(l.log, "after_save "+itoa(step))
	return step == l.stopAt, nil
}
func (l *listener) End(_ *tw.SessionRef, step int64) error {
	l.log = append(l.log, "end "+itoa(step))
	return nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// B17: listeners hear every save, and a stop asked for in after_save ends training after that run.
func TestCheckpointListenerStopsTraining(t *testing.T) {
	quiet(t)
	dir := t.TempDir()
	tr := newTrainer(t)
	opts := tr.options(t)
	must(t, opts.SetInt64(tw.OptEveryNSteps, 2))
	l := &listener{stopAt: 4}
	saver := built(t)(tw.CheckpointSaverHook(dir, opts, l))
	s, err := tw.NewMonitoredSession(opts, saver)
	must(t, err)
	if runs := tr.train(t, s); runs != 4 {
		t.Errorf("%d runs, want 4 (the listener stops at the save of step 4)", runs)
	}
	must(t, s.Close())
	want := []string{"begin", "before_save 0", "after_save 0", "before_save 2", "after_save 2", "before_save 4", "after_save 4", "end 4"}
	if !reflect.DeepEqual(l.log, want) {
		t.Errorf("listener heard %q, want %q", l.log, want)
	}
}

type panickingListener struct{ tw.BaseCheckpointListener }

func (panickingListener) BeforeSave(*tw.SessionRef, int64) error { panic("listener exploded") }

// A panic in a listener called from inside the library is re-raised from the Go call that entered it.
func TestListenerPanicIsReraised(t *testing.T) {
	quiet(t)
	tr := newTrainer(t)
	opts := tr.options(t)
	must(t, opts.SetInt64(tw.OptEveryNSteps, 1))
	saver := built(t)(tw.CheckpointSaverHook(t.TempDir(), opts, panickingListener{}))
	defer func() {
		if r := recover(); r != "listener exploded" {
			t.Errorf("recovered %v, want the listener's panic", r)
		}
	}()
	_, _ = tw.NewMonitoredSession(opts, saver) // the save at creation calls the listener
	t.Error("session creation returned instead of re-raising the panic")
}

// B6–B10: LoggingTensorHook with tags and a formatter, its line through the log sink; the override
// of _log_tensors sees the tagged values and calls the built-in.
func TestLoggingTensorHookFormatterAndOverride(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	tw.SetLogSink(func(level tw.LogLevel, message string) {
		mu.Lock()
		defer mu.Unlock()
		if level == tw.LogInfo {
			lines = append(lines, message)
		}
	})
	defer tw.SetLogSink(nil)
	tr := newTrainer(t)
	opts := tr.options(t)
	hook := built(t)(tw.LoggingTensorHook([]string{"loss", "global_step"}, tw.EveryNSteps(1), tw.Tags("l", "g"),
		tw.Formatter(func(values []tw.View) (string, error) {
			loss, err := tw.Scalar[float32](values[1]) // sorted by tag: g, l
			return "formatted " + values[0].Name + values[1].Name + " " + itoa(int64(loss)), err
		})))
	var overridden int
	must(t, hook.OverrideLogTensors(func(super func([]tw.View) error, values []tw.View) error {
		overridden++
		return super(values)
	}))
	stop := built(t)(tw.StopAtStepHook(2, tw.Unset))
	s, err := tw.NewMonitoredSession(opts, hook, stop)
	must(t, err)
	tr.train(t, s)
	must(t, s.Close())
	mu.Lock()
	defer mu.Unlock()
	var formatted []string
	for _, line := range lines {
		if strings.HasPrefix(line, "formatted") {
			formatted = append(formatted, line)
		}
	}
	if want := []string{"formatted gl 4", "formatted gl 8"}; !reflect.DeepEqual(formatted, want) || overridden != 2 {
		t.Errorf("logged %q (%d overrides), want %q", formatted, overridden, want)
	}
}

// B26–B30: StepCounterHook's _log_and_record override gets the rate's parts; SummarySaverHook writes
// the published scalars into a writer the test also writes to and reads back.
func TestStepCounterAndSummarySaver(t *testing.T) {
	quiet(t)
	dir := t.TempDir()
	writer, err := tw.OpenSummaryWriter(dir)
	must(t, err)
	tr := newTrainer(t)
	opts := tr.options(t)
	counter := built(t)(tw.StepCounterHook(tw.EveryNSteps(1), tw.WithSummaryWriter(writer)))
	var records []int64
	must(t, counter.OverrideRecord(func(super func() error, steps int64, secs float64, step int64) error {
		records = append(records, steps, step)
		if secs <= 0 {
			t.Errorf("elapsed %v", secs)
		}
		return super()
	}))
	summaries := built(t)(tw.SummarySaverHook([]string{"loss"}, tw.EveryNSteps(1), tw.WithSummaryWriter(writer)))
	stop := built(t)(tw.StopAtStepHook(3, tw.Unset))
	s, err := tw.NewMonitoredSession(opts, counter, summaries, stop)
	must(t, err)
	tr.train(t, s)
	must(t, s.Close())
	must(t, writer.AddScalar("extra", 7, 0.5))
	must(t, writer.AddHistogram("w", 7, tr.w))
	path := writer.Path()
	must(t, writer.Close())
	if want := []int64{1, 2, 1, 3}; !reflect.DeepEqual(records, want) {
		t.Errorf("records (steps, global step) %v, want %v", records, want)
	}
	scalars := readScalars(t, path)
	if !reflect.DeepEqual(scalars["loss"], []float32{4, 8, 12}) || !reflect.DeepEqual(scalars["extra"], []float32{0.5}) ||
		len(scalars["global_step/sec"]) != 2 {
		t.Errorf("scalars %v", scalars)
	}
	r, err := tw.OpenEventReader(path)
	must(t, err)
	defer r.Close()
	found := false
	for e, err := r.Next(); err != io.EOF; e, err = r.Next() {
		must(t, err)
		for _, v := range e.Values {
			if v.Tag == "w" && v.Histogram != nil && v.Histogram.Num == 4 && v.Histogram.Min == 3 && v.Histogram.Max == 3 {
				found = true
			}
		}
	}
	if !found {
		t.Error("the histogram of w was not read back")
	}
}

// B44, B43: FeedFnHook feeds x in every run; FinalOpsHook runs its step at close and keeps its outputs.
func TestFeedFnAndFinalOps(t *testing.T) {
	quiet(t)
	tr := newTrainer(t)
	opts := tr.options(t)
	x, err := tw.ScalarTensor("x", float32(0))
	must(t, err)
	calls := 0
	feeder := built(t)(tw.FeedFnHook(func() ([]*tw.Tensor, error) {
		calls++
		xs, _ := tw.Values[float32](x)
		xs[0] = float32(calls)
		return []*tw.Tensor{x}, nil
	}))
	scale, err := tw.ScalarTensor("scale", float32(10))
	must(t, err)
	final := built(t)(tw.FinalOpsHook(func(ctx *tw.StepContext) error {
		feed, err := ctx.Feed("scale")
		if err != nil {
			return err
		}
		k, _ := tw.Scalar[float32](feed)
		view, err := ctx.Variable("w")
		if err != nil {
			return err
		}
		w, _ := tw.Values[float32](view)
		return ctx.Publish("scaled", w[0]*k)
	}, scale))
	if _, err := final.FinalValues(); !errors.Is(err, tw.ErrFailedPrecondition) {
		t.Errorf("final values before the final step: %v", err)
	}
	if _, err := feeder.FinalValues(); !errors.Is(err, tw.ErrInvalidArgument) {
		t.Errorf("final values of a FeedFnHook: %v", err)
	}
	stop := built(t)(tw.StopAtStepHook(3, tw.Unset))
	s, err := tw.NewMonitoredSession(opts, feeder, final, stop)
	must(t, err)
	for !s.ShouldStop() {
		must(t, s.Run(tr.step)) // x comes from the hook
	}
	must(t, s.Close())
	values, err := final.FinalValues()
	must(t, err)
	if len(values) != 1 || values[0].Name != "scaled" {
		t.Fatalf("final values %v", values)
	}
	scaled, _ := tw.Scalar[float32](values[0])
	if scaled != 60 { // w = 1 + 2 + 3
		t.Errorf("scaled = %v, want 60", scaled)
	}
}

// B41: GlobalStepWaiterHook waits, in the first run, until the step it reads reaches its target.
func TestGlobalStepWaiterReadsTheSharedStep(t *testing.T) {
	quiet(t)
	tr := newTrainer(t)
	opts := tr.options(t)
	reads := int64(0)
	waiter := built(t)(tw.GlobalStepWaiterHook(3, tw.WithOption(tw.OptWaitPollSecs, 0.001),
		tw.ReadGlobalStep(func(*tw.SessionRef) (int64, error) { reads++; return reads, nil })))
	s, err := tw.NewSingularMonitoredSession(opts, waiter)
	must(t, err)
	must(t, s.Run(tr.step, tr.x))
	must(t, s.Run(tr.step, tr.x))
	must(t, s.Close())
	if reads != 3 {
		t.Errorf("%d reads, want 3 (until the step read reached 3, and none after the first run)", reads)
	}
}

// B45: ProfilerHook writes a Chrome trace of a run every N steps.
func TestProfilerHookWritesTimelines(t *testing.T) {
	quiet(t)
	dir := t.TempDir()
	tr := newTrainer(t)
	opts := tr.options(t)
	profiler := built(t)(tw.ProfilerHook(tw.EveryNSteps(2), tw.OutputDir(dir)))
	stop := built(t)(tw.StopAtStepHook(4, tw.Unset))
	s, err := tw.NewMonitoredSession(opts, profiler, stop)
	must(t, err)
	tr.train(t, s)
	must(t, s.Close())
	data, err := os.ReadFile(filepath.Join(dir, "timeline-2.json"))
	must(t, err)
	if !strings.Contains(string(data), `"step"`) {
		t.Errorf("timeline-2.json has no step span: %.200s", data)
	}
}

// The full NaN guard with a Go callback: it hears each bad value and decides.
func TestNanGuardCallback(t *testing.T) {
	quiet(t)
	tr := newTrainer(t)
	opts := tr.options(t)
	var events []tw.NanEvent
	guard := built(t)(tw.NanTensorHookWith([]string{"lo*"}, tw.OnNaN(func(s *tw.SessionRef, e tw.NanEvent) error {
		events = append(events, e)
		return s.RequestStop()
	})))
	s, err := tw.NewMonitoredSession(opts, guard)
	must(t, err)
	must(t, s.Run(tr.step, tr.x))
	xs, _ := tw.Values[float32](tr.x)
	xs[0] = float32(math.Inf(1))
	must(t, s.Run(tr.step, tr.x))
	if !s.ShouldStop() {
		t.Error("the callback's stop request was lost")
	}
	must(t, s.Close())
	want := []tw.NanEvent{{Tensor: "loss", GlobalStep: 1, PosInf: 1, FirstNonFinite: 0}}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events %+v, want %+v", events, want)
	}
}

// C3–C9: Saver saves, lists, reads and restores; retention keeps MaxToKeep.
func TestSaverAndCheckpointReading(t *testing.T) {
	quiet(t)
	dir := t.TempDir()
	w, err := tw.TensorOf("w", []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	must(t, err)
	step, err := tw.ScalarTensor("step", int64(9))
	must(t, err)
	saver, err := tw.NewSaver([]*tw.Tensor{w, step}, tw.MaxToKeep(2))
	must(t, err)
	defer saver.Close()
	prefix := filepath.Join(dir, "model.ckpt")
	var paths []string
	for i := int64(1); i <= 3; i++ {
		path, err := saver.Save(prefix, i)
		must(t, err)
		paths = append(paths, path)
	}
	kept, err := saver.LastCheckpoints()
	must(t, err)
	if !reflect.DeepEqual(kept, paths[1:]) {
		t.Errorf("kept %q, want %q", kept, paths[1:])
	}
	infos, err := tw.ListVariables(paths[2])
	must(t, err)
	if len(infos) != 2 || infos[0].Name != "w" || infos[0].DType != tw.Float32 || !reflect.DeepEqual(infos[0].Shape, []int64{2, 3}) {
		t.Errorf("variables %+v", infos)
	}
	must(t, tw.VerifyCheckpoint(paths[2]))
	loaded, err := tw.LoadVariable(paths[2], "w")
	must(t, err)
	values, _ := tw.Values[float32](loaded)
	if !reflect.DeepEqual(values, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("loaded %v", values)
	}
	if _, err := tw.LoadVariable(paths[2], "nope"); !errors.Is(err, tw.ErrNotFound) {
		t.Errorf("a missing key: %v", err)
	}
	ws, _ := tw.Values[float32](w)
	ws[0] = 100
	must(t, saver.Restore(paths[2], "w"))
	if ws[0] != 1 {
		t.Errorf("restore of w wrote %v", ws[0])
	}
	ws[0] = 100
	restored, err := saver.RestoreNewestGood(dir)
	must(t, err)
	if restored != paths[2] || ws[0] != 1 {
		t.Errorf("newest good %q, w[0] %v", restored, ws[0])
	}
	if err := w.Free(); !errors.Is(err, tw.ErrFailedPrecondition) {
		t.Errorf("freeing a saver's variable: %v", err)
	}
}

// loopback is a one-rank collective that counts its calls and can fail or panic.
type loopback struct {
	calls   map[string]int
	failOn  string
	panicOn string
}

func (l *loopback) Rank() int      { return 0 }
func (l *loopback) WorldSize() int { return 1 }
func (l *loopback) op(name string) error {
	l.calls[name]++
	if l.panicOn == name {
		panic("collective exploded")
	}
	if l.failOn == name {
		return tw.NewError(tw.DeadlineExceeded, "the peers never came")
	}
	return nil
}
func (l *loopback) AllreduceInt64(values []int64, op tw.ReduceOp, timeout float64) error {
	return l.op("allreduce")
}
func (l *loopback) Broadcast(data []byte, root int, timeout float64) error { return l.op("broadcast") }
func (l *loopback) Barrier(timeout float64) error                          { return l.op("barrier") }

// D1–D4: the session calls the Go collective at creation, every run and close; a failing one fails
// the call it is in with its status, and a panicking one is re-raised.
func TestCollectiveSeam(t *testing.T) {
	quiet(t)
	tr := newTrainer(t)
	opts := tr.options(t)
	engine := &loopback{calls: map[string]int{}}
	must(t, opts.SetCollective(engine))
	s, err := tw.NewMonitoredSession(opts)
	must(t, err)
	created := engine.calls["allreduce"]
	must(t, s.Run(tr.step, tr.x))
	must(t, s.Close())
	if created == 0 || engine.calls["allreduce"] <= created || engine.calls["barrier"] < 2 || engine.calls["broadcast"] == 0 {
		t.Errorf("collective calls %v", engine.calls)
	}

	failing := &loopback{calls: map[string]int{}, failOn: "allreduce"}
	must(t, opts.SetCollective(failing))
	if _, err := tw.NewMonitoredSession(opts); !errors.Is(err, tw.NewError(tw.DeadlineExceeded, "")) ||
		!strings.Contains(err.Error(), "the peers never came") {
		t.Errorf("creation with a failing collective: %v", err)
	}

	must(t, opts.SetCollective(&loopback{calls: map[string]int{}, panicOn: "barrier"}))
	func() {
		defer func() {
			if r := recover(); r != "collective exploded" {
				t.Errorf("recovered %v", r)
			}
		}()
		_, _ = tw.NewMonitoredSession(opts)
		t.Error("no panic")
	}()
}

// D17: a shard that is not its whole tensor restores, but a process without a collective cannot save it.
func TestShardsWithoutCollective(t *testing.T) {
	quiet(t)
	dir := t.TempDir()
	whole, err := tw.TensorOf("w", []float32{1, 2, 3, 4})
	must(t, err)
	full, err := tw.NewSaver([]*tw.Tensor{whole})
	must(t, err)
	path, err := full.Save(filepath.Join(dir, "model.ckpt"), 1)
	must(t, err)
	full.Close()

	half, err := tw.NewTensor("w", tw.Float32, 2)
	must(t, err)
	opts, err := tw.NewOptions()
	must(t, err)
	defer opts.Close()
	if err := opts.AddShard(half, []int64{4}, []int64{2, 0}); !errors.Is(err, tw.ErrInvalidArgument) {
		t.Errorf("a shard with a wrong offset rank: %v", err)
	}
	must(t, opts.AddShard(half, []int64{4}, []int64{2}))
	saver, err := tw.NewSaverFromOptions(opts)
	must(t, err)
	defer saver.Close()
	must(t, saver.Restore(path))
	values, _ := tw.Values[float32](half)
	if !reflect.DeepEqual(values, []float32{3, 4}) {
		t.Errorf("the shard restored %v, want its box [3 4]", values)
	}
	if _, err := saver.Save(filepath.Join(t.TempDir(), "model.ckpt"), 2); !errors.Is(err, tw.ErrInvalidArgument) {
		t.Errorf("saving a partial shard alone: %v", err)
	}
}

// Scaffold's init_fn runs when the chief restored nothing; the option table is the library's.
func TestInitFuncAndOptionInfo(t *testing.T) {
	quiet(t)
	tr := newTrainer(t)
	opts := tr.options(t)
	must(t, opts.SetInitFunc(func(s *tw.SessionRef) error {
		view, err := s.Variable("w")
		if err != nil {
			return err
		}
		w, _ := tw.Values[float32](view)
		w[0] = 42
		return nil
	}))
	s, err := tw.NewMonitoredSession(opts)
	must(t, err)
	must(t, s.Close())
	w, _ := tw.Values[float32](tr.w)
	if w[0] != 42 {
		t.Errorf("init_fn did not run: w[0]=%v", w[0])
	}
	info, err := tw.LookupOption("max_to_keep")
	must(t, err)
	if info.Key != tw.OptMaxToKeep || info.Type != "int64" || info.Int64Default != 5 {
		t.Errorf("option info %+v", info)
	}
	if _, err := tw.LookupOption("no_such_option"); !errors.Is(err, tw.ErrNotFound) {
		t.Errorf("unknown option: %v", err)
	}
	must(t, opts.Set(tw.OptWaitMaxSecs, 3)) // an integer for a float64 option
	if secs, err := opts.Float64(tw.OptWaitMaxSecs); err != nil || secs != 3 {
		t.Errorf("OptWaitMaxSecs = %v, %v", secs, err)
	}
	if err := opts.Set(tw.OptMaxToKeep, "five"); !errors.Is(err, tw.ErrInvalidArgument) {
		t.Errorf("a string for an int64 option: %v", err)
	}
}

func TestNumerics(t *testing.T) {
	v, err := tw.TensorOf("v", []float32{1, float32(math.NaN()), 3})
	must(t, err)
	stats, err := tw.TensorStats(v)
	must(t, err)
	if stats.Elements != 3 || stats.NaN != 1 || stats.Min != 1 || stats.Max != 3 || stats.FirstNonFinite != 1 {
		t.Errorf("stats %+v", stats)
	}
	bad, err := tw.HasNonFinite(v)
	must(t, err)
	if !bad {
		t.Error("HasNonFinite missed the NaN")
	}
	if err := tw.CheckNumerics(v, "v is bad"); !errors.Is(err, tw.ErrInvalidArgument) || !strings.Contains(err.Error(), "v is bad") {
		t.Errorf("CheckNumerics: %v", err)
	}
	if tw.NumericsTarget() == "" {
		t.Error("no numerics target")
	}
}
