package trainwatch_test

// C26: SetProgressSink sends each save's and restore's reports to a Go function — bytes never going
// back, the last report finished with every byte — and nil goes back to the log lines. everyNSecs 0
// reports after every chunk: nothing here depends on timing.

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tw "trainwatch.dev/trainwatch"
)

// progressVariables are three float32 tensors of 3 MiB: several 4 MiB chunks in all.
func progressVariables(t *testing.T) ([]*tw.Tensor, int64) {
	t.Helper()
	var variables []*tw.Tensor
	for i, name := range []string{"a", "b", "c"} {
		values := make([]float32, 3<<18)
		for j := range values {
			values[j] = float32(j * (i + 1))
		}
		v, err := tw.TensorOf(name, values)
		must(t, err)
		variables = append(variables, v)
	}
	return variables, 3 * (3 << 18) * 4
}

// progressRecorder keeps the reports its sink receives (from the library's threads).
type progressRecorder struct {
	mu      sync.Mutex
	reports []tw.Progress
}

func (r *progressRecorder) sink(p tw.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, p)
}

// take returns the reports so far and forgets them.
func (r *progressRecorder) take() []tw.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	reports := r.reports
	r.reports = nil
	return reports
}

func checkOneOperation(t *testing.T, reports []tw.Progress, kind tw.ProgressKind, path string, total int64) {
	t.Helper()
	if len(reports) < 2 {
		t.Fatalf("reports %+v: want two at least", reports)
	}
	var done int64
	for i, r := range reports {
		if r.Kind != kind || r.Path != path || r.BytesTotal != total || r.BytesDone < done ||
			r.Finished != (i == len(reports)-1) {
			t.Fatalf("report %d of %+v: want kind %d, path %s, %d bytes, done never going back, only the last finished",
				i, reports, kind, path, total)
		}
		done = r.BytesDone
	}
	if done != total {
		t.Errorf("last report has %d of %d bytes", done, total)
	}
}

func TestProgressSinkHearsSavesAndRestoresC26(t *testing.T) {
	var recorder progressRecorder
	must(t, tw.SetProgressSink(0, recorder.sink))
	defer func() { must(t, tw.SetProgressSink(2, nil)) }()
	variables, total := progressVariables(t)
	saver, err := tw.NewSaver(variables)
	must(t, err)
	defer saver.Close()
	path, err := saver.Save(filepath.Join(t.TempDir(), "model.ckpt"), 3)
	must(t, err)
	checkOneOperation(t, recorder.take(), tw.ProgressSave, path, total)
	must(t, saver.Restore(path))
	checkOneOperation(t, recorder.take(), tw.ProgressRestore, path, total)

	if err := tw.SetProgressSink(-1, recorder.sink); !errors.Is(err, tw.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "every_n_secs") {
		t.Errorf("SetProgressSink(-1): %v, want InvalidArgument naming every_n_secs", err)
	}
}

func TestProgressSinkNilGoesBackToTheLogLinesC26(t *testing.T) {
	var recorder progressRecorder
	var mu sync.Mutex
	var lines []string
	tw.SetLogSink(func(level tw.LogLevel, message string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, message)
	})
	defer tw.SetLogSink(nil)
	must(t, tw.SetProgressSink(0, recorder.sink))
	must(t, tw.SetProgressSink(0, nil))
	defer func() { must(t, tw.SetProgressSink(2, nil)) }()
	variables, _ := progressVariables(t)
	saver, err := tw.NewSaver(variables)
	must(t, err)
	defer saver.Close()
	path, err := saver.Save(filepath.Join(t.TempDir(), "model.ckpt"), 2)
	must(t, err)
	if reports := recorder.take(); len(reports) != 0 {
		t.Errorf("the replaced sink heard %+v", reports)
	}
	mu.Lock()
	defer mu.Unlock()
	var saving, saved int
	for _, line := range lines {
		if strings.HasPrefix(line, "Saving checkpoint "+path+": ") && strings.HasSuffix(line, " s left") {
			saving++
		}
		if strings.HasPrefix(line, "Saved checkpoint "+path+": 9.4 MB in ") {
			saved++
		}
	}
	if saving == 0 || saved != 1 {
		t.Errorf("log lines %q: want progress lines and one last line", lines)
	}
}
