#include "hooks/stop_at_step_hook.h"

#include "base/saturating.h"
#include "session/session.h"

namespace tw {
namespace {

class StopAtStepHook final : public Hook {
 public:
  StopAtStepHook(int64_t num_steps, int64_t last_step)
      : Hook("StopAtStepHook"), num_steps_(num_steps), last_step_(last_step) {}

  // B13: the target is fixed at the first creation; a recovery does not extend it.
  Status AfterCreateSession(Session &session) override {
    if (last_step_ == TW_UNSET) last_step_ = SaturatingAdd(session.global_step(), num_steps_);
    return Status();
  }

  // B14: the stale step (start of run) says whether we may be done; only then is the real one read.
  Status AfterRun(RunContext &ctx) override {
    const int64_t stale = ctx.session->run_global_step();  // TF's stale read: the step the run started at
    if (NextStep(stale) >= last_step_ && ctx.session->global_step() >= last_step_) return ctx.RequestStop();
    return Status();
  }

 private:
  int64_t num_steps_;
  int64_t last_step_;
};

}  // namespace

Status NewStopAtStepHook(int64_t num_steps, int64_t last_step, Hook **out) {
  if (num_steps == TW_UNSET && last_step == TW_UNSET) {
    return Status(TW_INVALID_ARGUMENT, "One of num_steps or last_step must be specified.");
  }
  if (num_steps != TW_UNSET && last_step != TW_UNSET) {
    return Status(TW_INVALID_ARGUMENT, "Only one of num_steps or last_step can be specified.");
  }
  if (num_steps != TW_UNSET && num_steps < 0) {
    return Errorf(TW_INVALID_ARGUMENT, "num_steps must be >= 0, got %lld", static_cast<long long>(num_steps));
  }
  *out = new StopAtStepHook(num_steps, last_step);
  return Status();
}

}  // namespace tw
