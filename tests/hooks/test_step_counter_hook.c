/* StepCounterHook (B26–B30): configuration, trigger steps of global_step/sec in the log and in the event
 * file (read back with CRCs checked), the "not increased" warning bounded at 5, and a global step going
 * backwards. Against the public header only. */
#define _POSIX_C_SOURCE 200809L
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hook_test_util.h"
#include "period_options.h"

static tw_status plain_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

static void B26_exactly_one_period(void **state) {
  (void)state;
  tw_hook *hook = (tw_hook *)0x1;
  assert_int_equal(step_counter_hook(&hook, TW_UNSET, TW_UNSET_SECS, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "exactly one of every_n_steps and every_n_secs should be provided.");
  assert_int_equal(step_counter_hook(&hook, 100, 5.0, NULL, NULL), TW_INVALID_ARGUMENT); /* T3 */
  assert_string_equal(tw_last_error_message(), "exactly one of every_n_steps and every_n_secs should be provided.");
  assert_int_equal(step_counter_hook(&hook, 100, 0.0, NULL, NULL), TW_INVALID_ARGUMENT); /* 0 is given */
  assert_ptr_equal(hook, (tw_hook *)0x1);
  assert_int_equal(step_counter_hook(NULL, 100, TW_UNSET_SECS, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(step_counter_hook(&hook, TW_UNSET, 2.5, NULL, NULL), TW_OK);
  assert_string_equal(tw_hook_name(hook), "StepCounterHook");
  tw_hook_destroy(hook);
}

/* B26: TF's every_n_steps=100 is TW_OPT_EVERY_N_STEPS left at its default: no options are a valid
 * hook, and a period in seconds alone is TF's "exactly one" error unless steps is set to None. */
static void B26_every_n_steps_defaults_to_100(void **state) {
  (void)state;
  tw_hook *hook = NULL;
  tw_options *opts = NULL;
  assert_int_equal(tw_step_counter_hook_create(&hook, NULL, NULL), TW_OK);
  tw_hook_destroy(hook);
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_EVERY_N_SECS, 2.5), TW_OK);
  assert_int_equal(tw_step_counter_hook_create(&hook, opts, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "exactly one of every_n_steps and every_n_secs should be provided.");
  assert_int_equal(tw_options_set_none(opts, TW_OPT_EVERY_N_STEPS), TW_OK);
  assert_int_equal(tw_step_counter_hook_create(&hook, opts, NULL), TW_OK);
  tw_hook_destroy(hook);
  tw_options_destroy(opts);
}

static void B28_rate_at_the_real_step_first_trigger_primes(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[512];
  read_value values[32];
  tw_hook *hook = NULL;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  assert_int_equal(step_counter_hook(&hook, 2, TW_UNSET_SECS, dir, NULL), TW_OK);
  tw_session *s = open_session(&hook, 1, NULL);
  start_capture();
  for (int i = 0; i < 7; ++i) assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  stop_capture();
  /* run 1 primes at step 1; rates at steps 3, 5, 7 */
  assert_int_equal(count_lines_starting("global_step/sec: "), 3);
  assert_int_equal(g_captured.levels[0], TW_LOG_INFO);
  assert_true(atof(line_starting("global_step/sec: ", 0) + 17) > 0);
  assert_int_equal(tw_session_close(s), TW_OK); /* flushes the writer */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_true(find_event_file(dir, 0, path, sizeof(path)));
  const int n = read_events(path, values, 32);
  assert_int_equal(n, 4); /* file_version + 3 scalars */
  assert_int_equal(values[0].kind, TW_EVENT_FILE_VERSION);
  for (int i = 1; i < 4; ++i) {
    assert_int_equal(values[i].kind, TW_EVENT_SUMMARY);
    assert_string_equal(values[i].tag, "global_step/sec");
    assert_int_equal(values[i].value_kind, TW_SUMMARY_VALUE_SCALAR);
    assert_int_equal(values[i].step, 1 + 2 * i);
    assert_true(values[i].scalar > 0);
  }
  scratch_dir_destroy(&scratch);
}

static void B27_given_writer_and_log_only(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[512];
  read_value values[8];
  tw_summary_writer *writer = NULL;
  tw_hook *hooks[2];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  assert_int_equal(tw_summary_writer_open(&writer, dir), TW_OK);
  assert_int_equal(step_counter_hook(&hooks[0], 1, TW_UNSET_SECS, NULL, writer), TW_OK);
  assert_int_equal(step_counter_hook(&hooks[1], 1, TW_UNSET_SECS, NULL, NULL), TW_OK); /* log only */
  tw_session *s = open_session(hooks, 2, NULL);
  start_capture();
  for (int i = 0; i < 3; ++i) assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  stop_capture();
  assert_int_equal(count_lines_starting("global_step/sec: "), 4); /* 2 per hook */
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(tw_summary_writer_flush(writer), TW_OK);
  assert_int_equal(read_events(tw_summary_writer_path(writer), values, 8), 3); /* only the first hook's */
  assert_int_equal(values[1].step, 2);
  assert_int_equal(values[2].step, 3);
  tw_summary_writer_destroy(writer);
  assert_true(find_event_file(dir, 0, path, sizeof(path)));
  assert_false(find_event_file(dir, 1, path, sizeof(path))); /* one shared file */
  scratch_dir_destroy(&scratch);
}

static void B29_not_increasing_warning_first_five_only(void **state) {
  (void)state;
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_AUTO_INCREMENT_GLOBAL_STEP, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_INITIAL_GLOBAL_STEP, 7), TW_OK);
  assert_int_equal(step_counter_hook(&hook, 10, TW_UNSET_SECS, NULL, NULL), TW_OK);
  tw_session *s = open_session(&hook, 1, opts);
  tw_options_destroy(opts);
  start_capture();
  for (int i = 0; i < 9; ++i) assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  stop_capture();
  assert_int_equal(count_lines_starting("It seems that global step"), 5); /* 8 occurrences, 5 logged */
  assert_string_equal(line_starting("It seems", 0),
                      "It seems that global step (tf.train.get_global_step) has not been increased. Current value "
                      "(could be stable): 7 vs previous value: 7. You could increase the global step by passing "
                      "tf.train.get_global_step() to Optimizer.apply_gradients or Optimizer.minimize.");
  assert_int_equal(g_captured.levels[0], TW_LOG_WARNING);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void B30_step_going_backwards_restarts_without_negative_rate(void **state) {
  (void)state;
  tw_hook *hook = NULL;
  assert_int_equal(step_counter_hook(&hook, TW_UNSET, 0.0, NULL, NULL), TW_OK); /* secs mode, B4 */
  tw_session *s = open_session(&hook, 1, NULL);
  start_capture();
  for (int i = 0; i < 5; ++i) assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  assert_int_equal(tw_session_set_global_step(s, 2), TW_OK); /* e.g. a restore */
  for (int i = 0; i < 4; ++i) assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  stop_capture();
  assert_int_equal(count_lines_starting("Global step went backwards"), 1);
  assert_string_equal(line_starting("Global step went backwards", 0),
                      "Global step went backwards from 4 to 2; restarting the global_step/sec measurement.");
  /* rates: runs 2-5, then the jump re-primes, then 3 more; none negative */
  assert_int_equal(count_lines_starting("global_step/sec: "), 7);
  for (int i = 0; i < 7; ++i) assert_true(atof(line_starting("global_step/sec: ", i) + 17) >= 0);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B26_exactly_one_period),
      cmocka_unit_test(B26_every_n_steps_defaults_to_100),
      cmocka_unit_test(B28_rate_at_the_real_step_first_trigger_primes),
      cmocka_unit_test(B27_given_writer_and_log_only),
      cmocka_unit_test(B29_not_increasing_warning_first_five_only),
      cmocka_unit_test(B30_step_going_backwards_restarts_without_negative_rate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
