package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// TrainingOption is an argument of NewMonitoredTrainingSession (TF's keyword arguments).
type TrainingOption func(*trainingConfig) error

type trainingConfig struct {
	opts      *Options // the caller's (UseOptions) or the session's own
	settings  []func(*Options) error
	hooks     []Hook
	chiefOnly []Hook
}

func (c *trainingConfig) setting(key Option, value any) error {
	c.settings = append(c.settings, func(o *Options) error { return o.Set(key, value) })
	return nil
}

func trainingSetting(key Option, value any) TrainingOption {
	return func(c *trainingConfig) error { return c.setting(key, value) }
}

// UseOptions creates the session from opts (its variables, shards, collective, init function and any
// option): the other TrainingOptions are then set on opts.
func UseOptions(opts *Options) TrainingOption {
	return func(c *trainingConfig) error {
		if err := opts.live(); err != nil {
			return err
		}
		c.opts = opts
		return nil
	}
}

// Variables registers the variables the session trains, saves and restores in place.
func Variables(variables ...*Tensor) TrainingOption {
	return func(c *trainingConfig) error {
		c.settings = append(c.settings, func(o *Options) error {
			for _, v := range variables {
				if err := o.AddVariable(v); err != nil {
					return err
				}
			}
			return nil
		})
		return nil
	}
}

// IsChief is is_chief (default true).
func IsChief(chief bool) TrainingOption { return trainingSetting(OptIsChief, chief) }

// CheckpointDir is checkpoint_dir: where the chief restores from and saves to.
func CheckpointDir(dir string) TrainingOption { return trainingSetting(OptCheckpointDir, dir) }

// SummaryDir is summary_dir (default: the checkpoint dir).
func SummaryDir(dir string) TrainingOption { return trainingSetting(OptSummaryDir, dir) }

// SaveCheckpointSteps is save_checkpoint_steps (0 disables checkpoints when secs is not given).
func SaveCheckpointSteps(n int64) TrainingOption { return trainingSetting(OptCheckpointEveryNSteps, n) }

// SaveCheckpointSecs is save_checkpoint_secs (default 600 when neither is given).
func SaveCheckpointSecs(secs float64) TrainingOption {
	return trainingSetting(OptCheckpointEveryNSecs, secs)
}

// SaveSummariesSteps is save_summaries_steps (default 100; 0 disables summaries when secs is not given).
func SaveSummariesSteps(n int64) TrainingOption { return trainingSetting(OptSummaryEveryNSteps, n) }

// SaveSummariesSecs is save_summaries_secs.
func SaveSummariesSecs(secs float64) TrainingOption {
	return trainingSetting(OptSummaryEveryNSecs, secs)
}

// LogStepCountSteps is log_step_count_steps (default 100; 0 adds no StepCounterHook).
func LogStepCountSteps(n int64) TrainingOption { return trainingSetting(OptStepCountEveryNSteps, n) }

// MaxWaitSecs is max_wait_secs (default 7200): how long a worker waits for the chief.
func MaxWaitSecs(secs float64) TrainingOption { return trainingSetting(OptMaxWaitSecs, secs) }

// WithSetting sets any other option (Options.Set's value types).
func WithSetting(key Option, value any) TrainingOption { return trainingSetting(key, value) }

// Hooks are hooks, run on every rank after the default ones.
func Hooks(hooks ...Hook) TrainingOption {
	return func(c *trainingConfig) error { c.hooks = append(c.hooks, hooks...); return nil }
}

// ChiefOnlyHooks are chief_only_hooks, run first, by the chief only.
func ChiefOnlyHooks(hooks ...Hook) TrainingOption {
	return func(c *trainingConfig) error { c.chiefOnly = append(c.chiefOnly, hooks...); return nil }
}

// NewMonitoredTrainingSession is tf.train.MonitoredTrainingSession: a MonitoredSession (with
// recovery) that adds, on the chief, chief-only hooks, StepCounterHook, SummarySaverHook and
// CheckpointSaverHook as TF does (when a summary or checkpoint dir and a frequency are given), then
// Hooks; the chief restores from CheckpointDir.
func NewMonitoredTrainingSession(options ...TrainingOption) (*Session, error) {
	c := &trainingConfig{}
	for _, option := range options {
		if option == nil {
			continue
		}
		if err := option(c); err != nil {
			return nil, err
		}
	}
	if c.opts == nil {
		opts, err := NewOptions()
		if err != nil {
			return nil, err
		}
		defer opts.Close()
		c.opts = opts
	}
	for _, set := range c.settings {
		if err := set(c.opts); err != nil {
			return nil, err
		}
	}
	return createSession(c.opts, c.hooks, c.chiefOnly, func(out **C.tw_session, copts *C.tw_options, h **C.tw_hook, n C.size_t, chief **C.tw_hook, nChief C.size_t) C.tw_status {
		return C.tw_monitored_training_session_create(out, copts, h, n, chief, nChief)
	})
}

// CreationCount is how many times the inner session was created: 1, +1 per recovery.
func (r *SessionRef) CreationCount() int64 {
	if r == nil || r.c == nil {
		return 0
	}
	return int64(C.tw_session_creation_count(r.c))
}

// NotifyPreemption notes a preemption (as SIGTERM would with OptCatchPreemptionSignals): at the end
// of the run in progress the chief saves and the session stops. Safe from any goroutine.
func (r *SessionRef) NotifyPreemption() error {
	if err := r.live(); err != nil {
		return err
	}
	return check(func() C.tw_status { return C.tw_session_notify_preemption(r.c) })
}

// Preempted reports whether the session stopped because of a preemption.
func (r *SessionRef) Preempted() bool {
	return r != nil && r.c != nil && C.tw_session_preempted(r.c) != 0
}

// HookNames are the names of the session's hooks in the order they run (for a
// MonitoredTrainingSession, with the defaults it added).
func (r *SessionRef) HookNames() ([]string, error) {
	if err := r.live(); err != nil {
		return nil, err
	}
	return collect(C.tw_session_hook_count(r.c), func(i C.size_t, h **C.tw_hook) C.tw_status {
		return C.tw_session_hook_at(h, r.c, i)
	}, func(h **C.tw_hook) string { return C.GoString(C.tw_hook_name(*h)) })
}

// Variables are the registered variables' views, in registration order (zero copy).
func (r *SessionRef) Variables() ([]View, error) {
	if err := r.live(); err != nil {
		return nil, err
	}
	return collect(C.tw_session_variable_count(r.c), func(i C.size_t, t *C.tw_tensor) C.tw_status {
		C.tw_tensor_init(t)
		return C.tw_session_variable_at(t, r.c, i)
	}, viewOf)
}

// AddFeed feeds t in this run (SessionRunArgs.feed_dict), in BeforeRun; t is read during the run.
func (ctx *RunContext) AddFeed(t *Tensor) error {
	if ctx.c == nil {
		return errOutsideCallback
	}
	if !t.live() {
		return invalid("feed is nil or freed")
	}
	raw := (*C.tw_tensor)(C.malloc(C.size_t(unsafe.Sizeof(C.tw_tensor{}))))
	defer C.free(unsafe.Pointer(raw))
	*raw = t.raw()
	err := check(func() C.tw_status { return C.tw_run_context_add_feed(ctx.c, raw) })
	runtime.KeepAlive(t)
	return err
}

// OriginalFeeds are the caller's feeds of this run (SessionRunContext.original_args).
func (ctx *RunContext) OriginalFeeds() ([]View, error) {
	if ctx.c == nil {
		return nil, errOutsideCallback
	}
	return collect(C.tw_run_context_original_feed_count(ctx.c), func(i C.size_t, t *C.tw_tensor) C.tw_status {
		C.tw_tensor_init(t)
		return C.tw_run_context_original_feed(t, ctx.c, i)
	}, viewOf)
}

// Results are, in AfterRun, every value this hook's requests resolved to, in request order.
func (ctx *RunContext) Results() ([]View, error) {
	if ctx.c == nil {
		return nil, errOutsideCallback
	}
	return collect(C.tw_run_context_result_count(ctx.c), func(i C.size_t, t *C.tw_tensor) C.tw_status {
		C.tw_tensor_init(t)
		return C.tw_run_context_result_at(t, ctx.c, i)
	}, viewOf)
}

// Feeds are this run's merged feeds (hooks', then the caller's).
func (ctx *StepContext) Feeds() ([]View, error) {
	if ctx.c == nil {
		return nil, errOutsideCallback
	}
	return collect(C.tw_step_context_feed_count(ctx.c), func(i C.size_t, t *C.tw_tensor) C.tw_status {
		C.tw_tensor_init(t)
		return C.tw_step_context_feed_at(t, ctx.c, i)
	}, viewOf)
}

// Requested are the names and patterns hooks requested in this run, in first-request order.
func (ctx *StepContext) Requested() ([]string, error) {
	if ctx.c == nil {
		return nil, errOutsideCallback
	}
	return collect(C.tw_step_context_requested_count(ctx.c), func(i C.size_t, name **C.char) C.tw_status {
		return C.tw_step_context_requested_at(name, ctx.c, i)
	}, goString)
}

// PublishTensor publishes t, zero copy, under its name: t must not change or be freed until Run returns.
func (ctx *StepContext) PublishTensor(t *Tensor) error {
	if ctx.c == nil {
		return errOutsideCallback
	}
	if !t.live() {
		return invalid("output is nil or freed")
	}
	raw := (*C.tw_tensor)(C.malloc(C.size_t(unsafe.Sizeof(C.tw_tensor{}))))
	defer C.free(unsafe.Pointer(raw))
	*raw = t.raw()
	return check(func() C.tw_status { return C.tw_step_context_publish(ctx.c, raw) })
}
