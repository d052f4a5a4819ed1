/* StopAtStepHook: TF's B11–B15, against the public header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "recorder.h"

static event_log g_log;

/* Runs until should_stop (at most `limit` runs); returns how many runs succeeded. */
static int train(tw_session *s, step_plan *plan, int limit) {
  int runs = 0;
  while (!tw_session_should_stop(s) && runs < limit) {
    if (tw_session_run(s, NULL, 0, recording_step, plan) != TW_OK) break;
    ++runs;
  }
  return runs;
}

static tw_session *open_with(tw_options *opts, int64_t num_steps, int64_t last_step) {
  tw_hook *hook = NULL;
  tw_session *s = NULL;
  assert_int_equal(tw_stop_at_step_hook_create(&hook, num_steps, last_step), TW_OK);
  assert_string_equal(tw_hook_name(hook), "StopAtStepHook");
  assert_int_equal(tw_monitored_session_create(&s, opts, &hook, 1), TW_OK);
  tw_hook_destroy(hook);
  return s;
}

static int64_t global_step(tw_session *s) {
  int64_t step = -1;
  step = tw_session_global_step(s);
  return step;
}

static void B11_argument_errors(void **state) {
  (void)state;
  tw_hook *hook = NULL;
  assert_int_equal(tw_stop_at_step_hook_create(&hook, TW_UNSET, TW_UNSET), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "One of num_steps or last_step must be specified.");
  assert_int_equal(tw_stop_at_step_hook_create(&hook, 3, 5), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Only one of num_steps or last_step can be specified.");
  assert_int_equal(tw_stop_at_step_hook_create(&hook, -1, TW_UNSET), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_stop_at_step_hook_create(NULL, 3, TW_UNSET), TW_INVALID_ARGUMENT);
  assert_null(hook);
}

static void B14_stops_after_the_run_reaching_last_step(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_session *s = open_with(NULL, TW_UNSET, 4);
  assert_int_equal(train(s, &plan, 100), 4);
  assert_int_equal(global_step(s), 4);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void B13_num_steps_counts_from_the_starting_step(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_INITIAL_GLOBAL_STEP, 5), TW_OK); /* as if restored */
  tw_session *s = open_with(opts, 3, TW_UNSET);
  assert_int_equal(train(s, &plan, 100), 3);
  assert_int_equal(global_step(s), 8);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

/* B13: the target is fixed at first creation. A worker keeps its global step across recovery, so a
 * recomputed target (1 + 3) would be visible as one extra run. */
static void B13_recovery_does_not_extend_the_target(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_ABORTED, 2, 0, 0.5f};
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_IS_CHIEF, 0), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_RECOVERY_BACKOFF_SECS, 0.0), TW_OK);
  tw_session *s = open_with(opts, 3, TW_UNSET);
  assert_int_equal(train(s, &plan, 100), 3);
  assert_int_equal(tw_session_creation_count(s), 2);
  assert_int_equal(global_step(s), 3);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void B15_at_least_one_run_happens(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_options *opts = NULL;
  tw_session *s = open_with(NULL, 0, TW_UNSET); /* num_steps = 0 */
  assert_int_equal(train(s, &plan, 100), 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);

  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_INITIAL_GLOBAL_STEP, 10), TW_OK);
  s = open_with(opts, TW_UNSET, 4); /* last_step already behind the restored step */
  assert_int_equal(train(s, &plan, 100), 1);
  assert_int_equal(global_step(s), 11);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void B15_never_stops_if_the_step_does_not_advance(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_AUTO_INCREMENT_GLOBAL_STEP, 0), TW_OK);
  tw_session *s = open_with(opts, TW_UNSET, 3);
  assert_int_equal(train(s, &plan, 25), 25);
  assert_int_equal(tw_session_should_stop(s), 0);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B11_argument_errors),
      cmocka_unit_test(B14_stops_after_the_run_reaching_last_step),
      cmocka_unit_test(B13_num_steps_counts_from_the_starting_step),
      cmocka_unit_test(B13_recovery_does_not_extend_the_target),
      cmocka_unit_test(B15_at_least_one_run_happens),
      cmocka_unit_test(B15_never_stops_if_the_step_does_not_advance),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
