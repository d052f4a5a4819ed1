#include "hooks/step_counter_hook.h"

#include "base/log.h"
#include "base/saturating.h"
#include "base/timer.h"
#include "hooks/event_writer_hook.h"
#include "hooks/extension_point.h"
#include "session/run_context.h"
#include "session/session.h"

namespace tw {
namespace {

constexpr char kSummaryTag[] = "global_step/sec";  // B27: "<global step op name>/sec"
constexpr int kMaxStallWarnings = 5;               // B29 (NEW): logging.log_first_n(…, 5)

class StepCounterHook final : public EventWriterHook {
 public:
  StepCounterHook(StepCounterConfig config, std::unique_ptr<SecondOrStepTimer> timer)
      : EventWriterHook("StepCounterHook", std::move(config.writer), std::move(config.output_dir)),
        timer_(std::move(timer)) {}

  // B27: the given writer, else the shared one of output_dir, else none (log only).
  Status Begin(Session &) override {
    timer_->Reset();
    last_stale_step_.reset();
    stall_warnings_ = 0;
    return OpenWriter();
  }

  Status AfterRun(RunContext &ctx) override {
    const int64_t stale = ctx.session->run_global_step();  // TF's stale read: the step the run started at
    if (last_stale_step_ && stale < *last_stale_step_) {
      // B30 made sane: a rate across a jump back means nothing; measure again from here.
      Log(TW_LOG_WARNING, "Global step went backwards from %lld to %lld; restarting the %s measurement.",
          static_cast<long long>(*last_stale_step_), static_cast<long long>(stale), kSummaryTag);
      timer_->Reset();
    }
    // B28: the stale value says whether the real one may trigger; only then is it read.
    if (timer_->ShouldTriggerForStep(NextStep(stale))) {
      const int64_t step = ctx.session->global_step();
      if (timer_->ShouldTriggerForStep(step)) {
        const std::optional<TimerElapsed> elapsed = timer_->UpdateLastTriggeredStep(step);
        if (elapsed && elapsed->secs > 0 && elapsed->steps >= 0) {
          TW_RETURN_IF_ERROR(MaybeOverriddenLogAndRecord(elapsed->steps, elapsed->secs, step));
        }
      }
    }
    if (last_stale_step_ && stale == *last_stale_step_ && stall_warnings_ < kMaxStallWarnings) {  // B29
      ++stall_warnings_;
      Log(TW_LOG_WARNING,
          "It seems that global step (tf.train.get_global_step) has not been increased. Current value (could be "
          "stable): %lld vs previous value: %lld. You could increase the global step by passing "
          "tf.train.get_global_step() to Optimizer.apply_gradients or Optimizer.minimize.",
          static_cast<long long>(stale), static_cast<long long>(*last_stale_step_));
    }
    last_stale_step_ = stale;
    return Status();
  }

  // TF's _log_and_record: the user's function when set, else the built-in.
  Status MaybeOverriddenLogAndRecord(int64_t elapsed_steps, double elapsed_secs, int64_t step) {
    if (record_fn_.overridden()) {
      return record_fn_.Call(*this, static_cast<Hook *>(this), elapsed_steps, elapsed_secs, step);
    }
    return LogAndRecord(elapsed_steps, elapsed_secs, step);
  }

  Status LogAndRecord(int64_t elapsed_steps, double elapsed_secs, int64_t step) {
    const double steps_per_sec = static_cast<double>(elapsed_steps) / elapsed_secs;
    if (writer_ != nullptr) TW_RETURN_IF_ERROR(writer_->AddScalar(kSummaryTag, step, steps_per_sec));
    Log(TW_LOG_INFO, "%s: %g", kSummaryTag, steps_per_sec);
    return Status();
  }

  ExtensionPoint<tw_step_rate_fn> record_fn_{"log_and_record"};

 private:
  std::unique_ptr<SecondOrStepTimer> timer_;
  std::optional<int64_t> last_stale_step_;
  int stall_warnings_ = 0;
};

}  // namespace

Status SetStepRateFn(Hook *hook, tw_step_rate_fn fn, void *user_data, void (*destroy)(void *)) {
  StepCounterHook *counter = nullptr;
  TW_RETURN_IF_ERROR(HookOfKind(hook, "StepCounterHook", &counter));
  return counter->record_fn_.Set(*counter, fn, user_data, destroy);
}

Status LogAndRecordDefault(Hook *hook, int64_t elapsed_steps, double elapsed_time, int64_t global_step) {
  StepCounterHook *counter = nullptr;
  TW_RETURN_IF_ERROR(HookOfKind(hook, "StepCounterHook", &counter));
  TW_RETURN_IF_ERROR(counter->record_fn_.CheckInside(*counter, "tw_step_counter_hook_log_and_record"));
  if (!(elapsed_time > 0)) return Errorf(TW_INVALID_ARGUMENT, "elapsed_time must be > 0, got %g", elapsed_time);
  return counter->LogAndRecord(elapsed_steps, elapsed_time, global_step);
}

Status NewStepCounterHook(StepCounterConfig config, Hook **out) {
  if (config.every.steps.has_value() == config.every.secs.has_value()) {
    return Status(TW_INVALID_ARGUMENT, "exactly one of every_n_steps and every_n_secs should be provided.");
  }
  std::unique_ptr<SecondOrStepTimer> timer;
  TW_RETURN_IF_ERROR(SecondOrStepTimer::Create(config.every.secs, config.every.steps, &timer));
  *out = new StepCounterHook(std::move(config), std::move(timer));
  return Status();
}

}  // namespace tw
