// SecondOrStepTimer and NeverTriggerTimer (base/timer.h), TF behaviours B1–B5. Lives with the summary
// tests because the summary work introduced the timer; time is injected, nothing sleeps.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "base/timer.h"

// Last: cmocka.h defines macros (fail, …) that clash with the standard library, and declares its
// functions without C linkage for C++.
extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

using tw::NeverTriggerTimer;
using tw::SecondOrStepTimer;

namespace {

// A clock the test moves by hand.
struct FakeClock {
  double now = 1000.0;
  tw::Clock clock() {
    return [this] { return now; };
  }
};

std::unique_ptr<SecondOrStepTimer> MakeTimer(std::optional<double> secs, std::optional<int64_t> steps,
                                             FakeClock *clock) {
  std::unique_ptr<SecondOrStepTimer> timer;
  const tw::Status status = SecondOrStepTimer::Create(secs, steps, &timer, clock->clock());
  assert_true(status.ok());
  return timer;
}

void b1_neither_or_both_is_invalid_argument(void **) {
  std::unique_ptr<SecondOrStepTimer> timer;
  tw::Status status = SecondOrStepTimer::Create(std::nullopt, std::nullopt, &timer);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_string_equal(status.message().c_str(), "Either every_secs or every_steps should be provided.");
  status = SecondOrStepTimer::Create(10.0, 5, &timer);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_string_equal(status.message().c_str(), "Can not provide both every_secs and every_steps.");
  assert_null(timer.get());  // out untouched on failure
  // B1: no positivity check — zero and negative values are accepted.
  assert_true(SecondOrStepTimer::Create(0.0, std::nullopt, &timer).ok());
  assert_true(SecondOrStepTimer::Create(std::nullopt, -3, &timer).ok());
  assert_int_equal(*timer->every_steps(), -3);
}

void b2_step_mode_triggers(void **) {
  FakeClock clock;
  auto timer = MakeTimer(std::nullopt, 10, &clock);
  assert_true(timer->ShouldTriggerForStep(5));  // never triggered → true, whatever the step
  timer->UpdateLastTriggeredStep(5);
  assert_false(timer->ShouldTriggerForStep(5));
  assert_false(timer->ShouldTriggerForStep(14));
  assert_true(timer->ShouldTriggerForStep(15));  // step >= last + every_steps
  assert_true(timer->ShouldTriggerForStep(100));
  clock.now += 1e9;  // time plays no part in step mode
  assert_false(timer->ShouldTriggerForStep(14));
}

void b2_time_mode_triggers(void **) {
  FakeClock clock;
  auto timer = MakeTimer(2.5, std::nullopt, &clock);
  assert_true(timer->ShouldTriggerForStep(0));
  timer->UpdateLastTriggeredStep(0);
  assert_false(timer->ShouldTriggerForStep(1));
  clock.now += 2.4;
  assert_false(timer->ShouldTriggerForStep(1000));
  clock.now += 0.1;  // now == last_time + every_secs: fires (>=)
  assert_true(timer->ShouldTriggerForStep(1));
  // B2: the step of the last trigger never fires again, even when the time is up.
  assert_false(timer->ShouldTriggerForStep(0));
}

void b3_update_reports_elapsed_since_previous_trigger(void **) {
  FakeClock clock;
  auto timer = MakeTimer(std::nullopt, 3, &clock);
  assert_false(timer->LastTriggeredStep().has_value());
  assert_false(timer->UpdateLastTriggeredStep(7).has_value());  // first trigger: (None, None)
  assert_int_equal(*timer->LastTriggeredStep(), 7);
  clock.now += 1.5;
  const auto elapsed = timer->UpdateLastTriggeredStep(10);
  assert_true(elapsed.has_value());
  assert_true(elapsed->secs == 1.5);
  assert_int_equal(elapsed->steps, 3);
  assert_int_equal(*timer->LastTriggeredStep(), 10);
}

void b3_reset_forgets_last_trigger(void **) {
  FakeClock clock;
  auto timer = MakeTimer(std::nullopt, 100, &clock);
  timer->UpdateLastTriggeredStep(1);
  assert_false(timer->ShouldTriggerForStep(2));
  timer->Reset();
  assert_false(timer->LastTriggeredStep().has_value());
  assert_true(timer->ShouldTriggerForStep(2));
  assert_false(timer->UpdateLastTriggeredStep(2).has_value());  // first trigger again
}

void b4_steps_going_backwards(void **) {
  FakeClock clock;
  auto steps = MakeTimer(std::nullopt, 10, &clock);
  steps->UpdateLastTriggeredStep(50);
  assert_false(steps->ShouldTriggerForStep(20));  // no special case: waits for step >= 60
  assert_false(steps->ShouldTriggerForStep(59));
  assert_true(steps->ShouldTriggerForStep(60));

  auto secs = MakeTimer(1.0, std::nullopt, &clock);
  secs->UpdateLastTriggeredStep(50);
  clock.now += 1.0;
  assert_true(secs->ShouldTriggerForStep(20));  // time mode fires…
  const auto elapsed = secs->UpdateLastTriggeredStep(20);
  assert_int_equal(elapsed->steps, -30);  // …and reports a negative elapsed_steps
}

void step_arithmetic_does_not_overflow(void **) {
  FakeClock clock;
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  auto timer = MakeTimer(std::nullopt, max, &clock);
  timer->UpdateLastTriggeredStep(10);
  assert_false(timer->ShouldTriggerForStep(max));  // 10 + max is beyond int64: never reached
  auto negative = MakeTimer(std::nullopt, min, &clock);
  negative->UpdateLastTriggeredStep(-10);
  assert_true(negative->ShouldTriggerForStep(min));  // -10 + min is below int64: always reached
  timer->UpdateLastTriggeredStep(min);
  assert_int_equal(timer->UpdateLastTriggeredStep(max)->steps, -1);  // wraps, no UB
}

void zero_values_fire_on_every_later_step(void **) {
  FakeClock clock;
  auto steps = MakeTimer(std::nullopt, 0, &clock);
  steps->UpdateLastTriggeredStep(3);
  assert_false(steps->ShouldTriggerForStep(3));
  assert_true(steps->ShouldTriggerForStep(4));
  assert_false(steps->ShouldTriggerForStep(2));  // 2 < 3 + 0
  auto secs = MakeTimer(0.0, std::nullopt, &clock);
  secs->UpdateLastTriggeredStep(3);
  assert_false(secs->ShouldTriggerForStep(3));
  assert_true(secs->ShouldTriggerForStep(2));
}

void b5_never_trigger_timer(void **) {
  NeverTriggerTimer timer;
  tw::Timer &base = timer;
  assert_false(base.ShouldTriggerForStep(0));
  assert_false(base.UpdateLastTriggeredStep(5).has_value());
  assert_false(base.LastTriggeredStep().has_value());
  assert_false(base.ShouldTriggerForStep(1000000));
  base.Reset();
  assert_false(base.ShouldTriggerForStep(0));
}

void default_clock_is_monotonic(void **) {
  const double a = tw::MonotonicSeconds();
  const double b = tw::MonotonicSeconds();
  assert_true(b >= a);
  std::unique_ptr<SecondOrStepTimer> timer;
  assert_true(SecondOrStepTimer::Create(3600.0, std::nullopt, &timer).ok());
  timer->UpdateLastTriggeredStep(0);
  assert_false(timer->ShouldTriggerForStep(1));  // an hour has not passed
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(b1_neither_or_both_is_invalid_argument),
      cmocka_unit_test(b2_step_mode_triggers),
      cmocka_unit_test(b2_time_mode_triggers),
      cmocka_unit_test(b3_update_reports_elapsed_since_previous_trigger),
      cmocka_unit_test(b3_reset_forgets_last_trigger),
      cmocka_unit_test(b4_steps_going_backwards),
      cmocka_unit_test(step_arithmetic_does_not_overflow),
      cmocka_unit_test(zero_values_fire_on_every_later_step),
      cmocka_unit_test(b5_never_trigger_timer),
      cmocka_unit_test(default_clock_is_monotonic),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
