// A Go user's program, built by tests/consumer/go/run.sh outside the repository against an installed
// libtrainwatch: MonitoredTrainingSession with StopAtStepHook, a NanTensorHook on the published loss and
// checkpoints every 25 steps. usage: consumer train|resume|nan CHECKPOINT_DIR LAST_STEP
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	tw "trainwatch.dev/trainwatch"
)

// firstStep records the global step the session starts from (0 fresh, the checkpoint's when resumed).
type firstStep struct {
	tw.BaseHook
	step int64
	runs int
}

func (f *firstStep) AfterCreateSession(s *tw.SessionRef) (err error) {
	f.step, err = s.GlobalStep()
	return err
}

func (f *firstStep) AfterRun(*tw.RunContext) error { f.runs++; return nil }

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: consumer train|resume|nan CHECKPOINT_DIR LAST_STEP")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run(mode, dir, last string) error {
	lastStep, err := strconv.ParseInt(last, 10, 64)
	if err != nil {
		return err
	}
	if err := tw.CheckVersion(); err != nil {
		return err
	}
	w, err := tw.NewTensor("w", tw.Float32, 4)
	if err != nil {
		return err
	}
	x, err := tw.ScalarTensor("x", float32(1))
	if err != nil {
		return err
	}
	if mode == "nan" {
		xs, _ := tw.Values[float32](x)
		xs[0] = float32(nanValue())
	}
	stop, err := tw.StopAtStepHook(tw.Unset, lastStep)
	if err != nil {
		return err
	}
	defer stop.Close()
	nan, err := tw.NanTensorHook("loss", true)
	if err != nil {
		return err
	}
	defer nan.Close()
	first := &firstStep{}
	sess, err := tw.NewMonitoredTrainingSession(tw.Variables(w), tw.CheckpointDir(dir), tw.SaveCheckpointSteps(25),
		tw.SaveSummariesSteps(0), tw.LogStepCountSteps(0), tw.Hooks(first, nan, stop))
	if err != nil {
		return err
	}
	step := func(ctx *tw.StepContext) error {
		feed, err := ctx.Feed("x")
		if err != nil {
			return err
		}
		target, err := tw.Scalar[float32](feed)
		if err != nil {
			return err
		}
		view, err := ctx.Variable("w")
		if err != nil {
			return err
		}
		ws, err := tw.Values[float32](view)
		if err != nil {
			return err
		}
		var loss float32
		for i := range ws {
			ws[i] -= 0.1 * (ws[i] - target)
			loss += (ws[i] - target) * (ws[i] - target)
		}
		return ctx.Publish("loss", loss)
	}
	for !sess.ShouldStop() {
		if err := sess.Run(step, x); err != nil {
			sess.Close()
			if mode == "nan" && errors.Is(err, tw.ErrNanLoss) {
				fmt.Printf("nan_loss in run %d\n", first.runs) // the hooks before NanTensorHook saw the run
				return nil
			}
			return err
		}
	}
	final, err := sess.GlobalStep()
	if err != nil {
		return err
	}
	if err := sess.Close(); err != nil {
		return err
	}
	latest, err := tw.LatestCheckpoint(dir)
	if err != nil {
		return err
	}
	ws, _ := tw.Values[float32](w)
	fmt.Printf("start_step=%d runs=%d final_step=%d latest=%s w0=%.6f\n", first.step, first.runs, final,
		filepath.Base(latest), ws[0])
	return nil
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}
