package trainwatch_test

// WrapHook: TF's subclass of a built-in hook (docs/ARCHITECTURE.md). A NanTensorHook "subclass" overriding
// AfterRun with and without super (B33 kept or replaced), and super.BeforeRun returning the built-in's
// fetch (B31).

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	tw "trainwatch.dev/trainwatch"
)

// nanTensorHookCustom is class NanTensorHookCustom(tf.train.NanTensorHook) overriding before_run
// (calling super) and after_run.
type nanTensorHookCustom struct {
	tw.CallSuper
	callSuper     bool
	requests      []string
	losses        []float32
	customActions int
}

func (h *nanTensorHookCustom) BeforeRun(super *tw.Super, ctx *tw.RunContext) error {
	if err := super.BeforeRun(ctx); err != nil {
		return err
	}
	var err error
	h.requests, err = ctx.Requests()
	return err
}

func (h *nanTensorHookCustom) AfterRun(super *tw.Super, ctx *tw.RunContext) error {
	result, err := ctx.Result("loss")
	if err != nil {
		return err
	}
	loss, err := tw.Scalar[float32](result)
	if err != nil {
		return err
	}
	view, err := ctx.Session().Output("loss")
	if err != nil {
		return err
	}
	output, err := tw.Scalar[float32](view)
	if err != nil || math.Float32bits(output) != math.Float32bits(loss) {
		return tw.NewError(tw.Internal, "Output disagrees with Result")
	}
	h.losses = append(h.losses, loss)
	if math.IsNaN(float64(loss)) {
		h.customActions++
	}
	if h.callSuper {
		return super.AfterRun(ctx)
	}
	return nil
}

func runWithNaN(t *testing.T, callSuper bool) (*nanTensorHookCustom, []error, *tw.Session) {
	t.Helper()
	inner, err := tw.NanTensorHook("loss", true)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close() // the wrapper keeps its own reference
	custom := &nanTensorHookCustom{callSuper: callSuper}
	hook, err := tw.WrapHook(inner, custom)
	if err != nil {
		t.Fatal(err)
	}
	if hook.Name() != "NanTensorHook" {
		t.Fatalf("name %q", hook.Name())
	}
	sess, err := tw.NewMonitoredSession(nil, hook)
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, loss := range []float32{0.5, float32(math.NaN()), 0.25} {
		loss := loss
		errs = append(errs, sess.Run(func(ctx *tw.StepContext) error { return ctx.Publish("loss", loss) }))
	}
	return custom, errs, sess
}

func TestWrappedNanHookCallingSuperFailsOnNaN_B33(t *testing.T) {
	custom, errs, sess := runWithNaN(t, true)
	defer sess.Close() //nolint:errcheck // the failed session only needs freeing
	if errs[0] != nil || !errors.Is(errs[1], &tw.Error{Status: tw.NanLoss}) {
		t.Fatalf("errors %v", errs)
	}
	if !strings.Contains(errs[1].Error(), "NaN loss during training.") {
		t.Fatalf("message %q", errs[1])
	}
	if !reflect.DeepEqual(custom.requests, []string{"loss"}) || custom.customActions != 1 {
		t.Fatalf("requests %v, custom actions %d", custom.requests, custom.customActions)
	}
}

func TestWrappedNanHookWithoutSuperRunsItsOwnActionOnly(t *testing.T) {
	custom, errs, sess := runWithNaN(t, false)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(custom.losses) != 3 || custom.customActions != 1 {
		t.Fatalf("losses %v, custom actions %d", custom.losses, custom.customActions)
	}
	// Between runs no output is readable.
	if _, err := sess.Output("loss"); tw.StatusOf(err) != tw.FailedPrecondition {
		t.Fatalf("Output between runs: %v", err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWrappedHookRunsThroughItsWrapperOnly(t *testing.T) {
	inner, err := tw.NanTensorHook("loss", true)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	hook, err := tw.WrapHook(inner, tw.CallSuper{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tw.NewMonitoredSession(nil, inner, hook); tw.StatusOf(err) != tw.InvalidArgument {
		t.Fatalf("inner and wrapper in one session: %v", err)
	}
	if _, err := tw.WrapHook(nil, tw.CallSuper{}); tw.StatusOf(err) != tw.InvalidArgument {
		t.Fatalf("nil inner: %v", err)
	}
}
