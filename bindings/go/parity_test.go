package trainwatch_test

// The parity scenario (tests/parity/README.md) in Go: its trace must equal
// tests/parity/expected.txt, which every language's binding compares against.

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tw "trainwatch.dev/trainwatch"
)

type trace []string

func (t *trace) add(format string, args ...any) { *t = append(*t, fmt.Sprintf(format, args...)) }

// number writes integral values in decimal and NaN as "nan".
func number(v float32) string {
	if math.IsNaN(float64(v)) {
		return "nan"
	}
	return fmt.Sprintf("%.0f", v)
}

func weights(w []float32) string {
	parts := make([]string, len(w))
	for i, v := range w {
		parts[i] = number(v)
	}
	return strings.Join(parts, ",")
}

// counter is the counting hook.
type counter struct {
	tw.BaseHook
	trace *trace
}

func (c *counter) Name() string { return "counter" }

func (c *counter) Begin(*tw.SessionRef) error {
	c.trace.add("begin")
	return nil
}

func (c *counter) AfterCreateSession(s *tw.SessionRef) error {
	step, err := s.GlobalStep()
	c.trace.add("after_create_session global_step=%d", step)
	return err
}

func (c *counter) BeforeRun(ctx *tw.RunContext) error {
	c.trace.add("before_run")
	return ctx.RequestFetch("loss", "global_step")
}

func (c *counter) AfterRun(ctx *tw.RunContext) error {
	loss, err := ctx.Result("loss")
	if err != nil {
		return err
	}
	step, err := ctx.Result("global_step")
	if err != nil {
		return err
	}
	lossValue, err := tw.Scalar[float32](loss)
	if err != nil {
		return err
	}
	stepValue, err := tw.Scalar[int64](step)
	if err != nil {
		return err
	}
	c.trace.add("after_run loss=%s global_step=%d", number(lossValue), stepValue)
	return nil
}

func (c *counter) End(s *tw.SessionRef) error {
	step, err := s.GlobalStep()
	c.trace.add("end global_step=%d", step)
	return err
}

func (c *counter) OnError(_ *tw.SessionRef, status tw.Status) { c.trace.add("on_error %v", status) }

// model: a variable w (float32[4]) and the feed x; each step does w += x and publishes sum(w).
type model struct {
	w, x  *tw.Tensor
	trace *trace
}

func newModel(t *testing.T, tr *trace) *model {
	t.Helper()
	w, err := tw.NewTensor("w", tw.Float32, 4)
	if err != nil {
		t.Fatal(err)
	}
	x, err := tw.ScalarTensor("x", float32(0))
	if err != nil {
		t.Fatal(err)
	}
	return &model{w: w, x: x, trace: tr}
}

func (m *model) step(ctx *tw.StepContext) error {
	return addFeedToW(ctx, func(x float32) { m.trace.add("step global_step=%d x=%s", ctx.GlobalStep(), number(x)) })
}

func (m *model) run(s *tw.Session, x float32) error {
	xs, _ := tw.Values[float32](m.x)
	xs[0] = x
	err := s.Run(m.step, m.x)
	m.trace.add("run %v", tw.StatusOf(err))
	return err
}

func (m *model) finish(s *tw.Session) {
	m.trace.add("close %v", tw.StatusOf(s.Close()))
	w, _ := tw.Values[float32](m.w)
	m.trace.add("w=%s", weights(w))
}

func (m *model) options(t *testing.T, dir string) *tw.Options {
	t.Helper()
	opts, err := tw.NewOptions()
	if err != nil {
		t.Fatal(err)
	}
	must(t, opts.AddVariable(m.w))
	if dir != "" {
		must(t, opts.SetString(tw.OptCheckpointDir, dir))
	}
	return opts
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func phaseTrain(t *testing.T, dir string) trace {
	var tr trace
	m := newModel(t, &tr)
	opts := m.options(t, dir)
	defer opts.Close()
	must(t, opts.SetInt64(tw.OptEveryNSteps, 2))
	must(t, opts.SetBool(tw.OptAsyncCheckpoint, false))
	stop, err := tw.StopAtStepHook(tw.Unset, 5)
	must(t, err)
	defer stop.Close()
	saver, err := tw.CheckpointSaverHook(dir, opts)
	must(t, err)
	defer saver.Close()
	s, err := tw.NewMonitoredSession(opts, &counter{trace: &tr}, stop, saver)
	must(t, err)
	for !s.ShouldStop() {
		must(t, m.run(s, 1))
	}
	step, err := s.GlobalStep()
	must(t, err)
	tr.add("global_step=%d", step)
	m.finish(s)
	latest, err := tw.LatestCheckpoint(dir)
	must(t, err)
	tr.add("latest_checkpoint=%s", filepath.Base(latest))
	return tr
}

func phaseNaN(t *testing.T) trace {
	var tr trace
	m := newModel(t, &tr)
	opts := m.options(t, "")
	defer opts.Close()
	nan, err := tw.NanTensorHook("loss", true)
	must(t, err)
	defer nan.Close()
	s, err := tw.NewMonitoredSession(opts, &counter{trace: &tr}, nan)
	must(t, err)
	must(t, m.run(s, 1))
	must(t, m.run(s, 1))
	err = m.run(s, float32(math.NaN()))
	if !errors.Is(err, tw.ErrNanLoss) || !strings.Contains(err.Error(), "NaN loss during training.") {
		t.Fatalf("the NaN run returned %v", err)
	}
	if err := m.run(s, 1); !errors.Is(err, tw.ErrFailedPrecondition) {
		t.Fatalf("a failed session ran again: %v", err)
	}
	m.finish(s)
	return tr
}

func phaseRestore(t *testing.T, dir string) trace {
	var tr trace
	m := newModel(t, &tr)
	opts := m.options(t, dir)
	defer opts.Close()
	stop, err := tw.StopAtStepHook(tw.Unset, 6)
	must(t, err)
	defer stop.Close()
	s, err := tw.NewMonitoredSession(opts, &counter{trace: &tr}, stop)
	must(t, err)
	view, err := s.Variable("w")
	must(t, err)
	w, err := tw.Values[float32](view)
	must(t, err)
	tr.add("restored w=%s", weights(w))
	for !s.ShouldStop() {
		must(t, m.run(s, 1))
	}
	m.finish(s)
	return tr
}

// phaseMTS is MonitoredTrainingSession with checkpoints every 3 steps, no summaries and no step
// counter: [mts] with lastStep 4 on a fresh directory, [mts_resume] with lastStep 6 on the same one.
func phaseMTS(t *testing.T, dir string, lastStep int64) trace {
	var tr trace
	m := newModel(t, &tr)
	stop, err := tw.StopAtStepHook(tw.Unset, lastStep)
	must(t, err)
	defer stop.Close()
	s, err := tw.NewMonitoredTrainingSession(tw.Variables(m.w), tw.IsChief(true), tw.CheckpointDir(dir),
		tw.SaveCheckpointSteps(3), tw.SaveSummariesSteps(0), tw.LogStepCountSteps(0),
		tw.Hooks(&counter{trace: &tr}, stop))
	must(t, err)
	for !s.ShouldStop() {
		must(t, m.run(s, 1))
	}
	m.finish(s)
	latest, err := tw.LatestCheckpoint(dir)
	must(t, err)
	tr.add("latest=%s", filepath.Base(latest))
	return tr
}

// expected reads the sections of expected.txt: "[name]" headers, '#' comments and blank lines skipped.
func expected(t *testing.T) map[string]trace {
	f, err := os.Open(filepath.Join("..", "..", "tests", "parity", "expected.txt"))
	must(t, err)
	defer f.Close()
	sections := map[string]trace{}
	current := ""
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimRight(scanner.Text(), " \r")
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			current = line[1 : len(line)-1]
			sections[current] = trace{}
		case current == "":
			t.Fatalf("expected.txt: %q before the first section", line)
		default:
			sections[current] = append(sections[current], line)
		}
	}
	must(t, scanner.Err())
	return sections
}

func TestParityScenario(t *testing.T) {
	want := expected(t)
	dir := t.TempDir()
	tw.SetLogLevel(tw.LogError) // the scenario's warnings are expected
	defer tw.SetLogLevel(tw.LogInfo)
	mtsDir := t.TempDir()
	got := map[string]trace{
		"train":      phaseTrain(t, dir),
		"nan":        phaseNaN(t),
		"restore":    phaseRestore(t, dir),
		"mts":        phaseMTS(t, mtsDir, 4),
		"mts_resume": phaseMTS(t, mtsDir, 6),
	}
	for _, name := range []string{"train", "nan", "restore", "mts", "mts_resume"} {
		if len(want[name]) == 0 {
			t.Fatalf("expected.txt has no [%s] section", name)
		}
		if !reflect.DeepEqual(got[name], want[name]) {
			t.Errorf("[%s] trace differs\n got: %q\nwant: %q", name, got[name], want[name])
		}
	}
}
