// SecondOrStepTimer and NeverTriggerTimer: when a periodic hook fires (TF's basic_session_run_hooks,
// behaviours B1–B5 of tf-semantics.md). Every "every N steps or N seconds" hook owns one.
#ifndef TRAINWATCH_BASE_TIMER_H
#define TRAINWATCH_BASE_TIMER_H

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "base/status.h"

namespace tw {

// Seconds on some fixed epoch; only differences matter. Injected so tests control time without sleeping.
using Clock = std::function<double()>;

// The default clock: std::chrono::steady_clock in seconds. TF reads time.time(); a monotonic clock
// gives the same intervals without jumping when the wall clock is set.
double MonotonicSeconds();

// What UpdateLastTriggeredStep reports about the interval since the previous trigger.
struct TimerElapsed {
  double secs;
  int64_t steps;  // negative when the step went backwards (B4)
};

// TF's _HookTimer interface.
class Timer {
 public:
  virtual ~Timer() = default;

  // Whether the timer fires for `step` (B2).
  virtual bool ShouldTriggerForStep(int64_t step) const = 0;

  // Records (now, step) as the last trigger. Returns the time and steps elapsed since the previous
  // trigger, or nullopt on the first trigger (B3).
  virtual std::optional<TimerElapsed> UpdateLastTriggeredStep(int64_t step) = 0;

  // The step of the last trigger, or nullopt before the first (B3).
  virtual std::optional<int64_t> LastTriggeredStep() const = 0;

  // Forgets the last trigger: the next ShouldTriggerForStep returns true (B3).
  virtual void Reset() = 0;
};

// Fires every `every_secs` seconds or every `every_steps` steps — exactly one of the two.
class SecondOrStepTimer final : public Timer {
 public:
  // B1: neither set → TW_INVALID_ARGUMENT "Either every_secs or every_steps should be provided.";
  // both set → TW_INVALID_ARGUMENT "Can not provide both every_secs and every_steps." (TF's docs
  // promised "either", its code raised; trainwatch keeps the error). Like TF, values are not
  // range-checked: every_steps = 0 fires on every step after the last trigger, every_secs = 0 on every
  // step but the last triggered one. `clock` defaults to MonotonicSeconds.
  static Status Create(std::optional<double> every_secs, std::optional<int64_t> every_steps,
                       std::unique_ptr<SecondOrStepTimer> *out, Clock clock = nullptr);

  bool ShouldTriggerForStep(int64_t step) const override;
  std::optional<TimerElapsed> UpdateLastTriggeredStep(int64_t step) override;
  std::optional<int64_t> LastTriggeredStep() const override;
  void Reset() override;

  std::optional<double> every_secs() const { return every_secs_; }
  std::optional<int64_t> every_steps() const { return every_steps_; }

 private:
  SecondOrStepTimer(std::optional<double> every_secs, std::optional<int64_t> every_steps, Clock clock);

  std::optional<double> every_secs_;
  std::optional<int64_t> every_steps_;
  Clock clock_;
  // Both set by the same update, both cleared by Reset.
  std::optional<int64_t> last_step_;
  double last_time_ = 0.0;
};

// B5: never fires; updates report nothing and remember nothing.
class NeverTriggerTimer final : public Timer {
 public:
  bool ShouldTriggerForStep(int64_t) const override { return false; }
  std::optional<TimerElapsed> UpdateLastTriggeredStep(int64_t) override { return std::nullopt; }
  std::optional<int64_t> LastTriggeredStep() const override { return std::nullopt; }
  void Reset() override {}
};

}  // namespace tw

#endif  // TRAINWATCH_BASE_TIMER_H
