#include "base/timer.h"

#include <chrono>
#include <utility>

namespace tw {
namespace {

// step >= last + every, without overflow: a threshold beyond int64 is never (every > 0) or always
// (every < 0) reached.
bool StepsReached(int64_t step, int64_t last, int64_t every) {
  int64_t threshold;
  if (__builtin_add_overflow(last, every, &threshold)) return every < 0;
  return step >= threshold;
}

// step - last with two's-complement wrap-around instead of undefined behaviour.
int64_t StepDifference(int64_t step, int64_t last) {
  return static_cast<int64_t>(static_cast<uint64_t>(step) - static_cast<uint64_t>(last));
}

}  // namespace

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status SecondOrStepTimer::Create(std::optional<double> every_secs, std::optional<int64_t> every_steps,
                                 std::unique_ptr<SecondOrStepTimer> *out, Clock clock) {
  if (!every_secs && !every_steps) {
    return Status(TW_INVALID_ARGUMENT, "Either every_secs or every_steps should be provided.");
  }
  if (every_secs && every_steps) {
    return Status(TW_INVALID_ARGUMENT, "Can not provide both every_secs and every_steps.");
  }
  if (!clock) clock = MonotonicSeconds;
  out->reset(new SecondOrStepTimer(every_secs, every_steps, std::move(clock)));
  return Status();
}

SecondOrStepTimer::SecondOrStepTimer(std::optional<double> every_secs, std::optional<int64_t> every_steps, Clock clock)
    : every_secs_(every_secs), every_steps_(every_steps), clock_(std::move(clock)) {}

bool SecondOrStepTimer::ShouldTriggerForStep(int64_t step) const {
  if (!last_step_) return true;
  if (step == *last_step_) return false;  // even when the time is up (B2)
  if (every_secs_) return clock_() >= last_time_ + *every_secs_;
  return StepsReached(step, *last_step_, *every_steps_);
}

std::optional<TimerElapsed> SecondOrStepTimer::UpdateLastTriggeredStep(int64_t step) {
  const double now = clock_();
  std::optional<TimerElapsed> elapsed;
  if (last_step_) elapsed = TimerElapsed{now - last_time_, StepDifference(step, *last_step_)};
  last_time_ = now;
  last_step_ = step;
  return elapsed;
}

std::optional<int64_t> SecondOrStepTimer::LastTriggeredStep() const { return last_step_; }

void SecondOrStepTimer::Reset() {
  last_step_.reset();
  last_time_ = 0.0;
}

}  // namespace tw
