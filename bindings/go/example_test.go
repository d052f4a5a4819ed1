package trainwatch_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	tw "trainwatch.dev/trainwatch"
)

// progress is a custom hook: it fetches the loss after every run.
type progress struct {
	tw.BaseHook
	runs int
	last float32
}

func (p *progress) BeforeRun(ctx *tw.RunContext) error { return ctx.RequestFetch("loss") }

func (p *progress) AfterRun(ctx *tw.RunContext) error {
	loss, err := ctx.Result("loss")
	if err != nil {
		return err
	}
	p.last, err = tw.Scalar[float32](loss)
	p.runs++
	return err
}

// train minimises (w - 1)^2 under a MonitoredSession with a NaN guard, a stop step and checkpoints
// every 10 steps in dir; a second call restores w and the global step from dir and continues.
func train(dir string, w *tw.Tensor, lastStep int64) (int, error) {
	opts, err := tw.NewOptions()
	if err != nil {
		return 0, err
	}
	defer opts.Close()
	if err := opts.AddVariable(w); err != nil {
		return 0, err
	}
	if err := opts.SetString(tw.OptCheckpointDir, dir); err != nil {
		return 0, err
	}
	if err := opts.SetInt64(tw.OptEveryNSteps, 10); err != nil {
		return 0, err
	}
	stop, _ := tw.StopAtStepHook(tw.Unset, lastStep)
	defer stop.Close()
	nan, _ := tw.NanTensorHook("loss", true)
	defer nan.Close()
	saver, err := tw.CheckpointSaverHook(dir, opts)
	if err != nil {
		return 0, err
	}
	defer saver.Close()
	p := &progress{}
	sess, err := tw.NewMonitoredSession(opts, p, nan, stop, saver)
	if err != nil {
		return 0, err
	}
	lr, _ := tw.ScalarTensor("lr", float32(0.5))
	step := func(ctx *tw.StepContext) error {
		feed, err := ctx.Feed("lr")
		if err != nil {
			return err
		}
		rate, _ := tw.Scalar[float32](feed)
		view, err := ctx.Variable("w")
		if err != nil {
			return err
		}
		w, _ := tw.Values[float32](view)
		var loss float32
		for i := range w {
			w[i] -= rate * (w[i] - 1)
			loss += (w[i] - 1) * (w[i] - 1)
		}
		return ctx.Publish("loss", loss)
	}
	for !sess.ShouldStop() {
		if err := sess.Run(step, lr); errors.Is(err, tw.ErrNanLoss) {
			sess.Close()
			return p.runs, fmt.Errorf("diverged: %w", err)
		} else if err != nil {
			sess.Close()
			return p.runs, err
		}
	}
	return p.runs, sess.Close()
}

func Example() {
	dir, _ := os.MkdirTemp("", "tw_go_example")
	defer os.RemoveAll(dir)

	w, _ := tw.TensorOf("w", []float32{5, -3})
	runs, err := train(dir, w, 20)
	if err != nil {
		log.Fatal(err)
	}
	values, _ := tw.Values[float32](w)
	fmt.Printf("%d runs, w = %.3f\n", runs, values)

	fresh, _ := tw.NewTensor("w", tw.Float32, 2) // restored in place from the checkpoint
	runs, err = train(dir, fresh, 25)
	if err != nil {
		log.Fatal(err)
	}
	values, _ = tw.Values[float32](fresh)
	fmt.Printf("%d more runs, w = %.3f\n", runs, values)
	// Output:
	// 20 runs, w = [1.000 1.000]
	// 5 more runs, w = [1.000 1.000]
}
