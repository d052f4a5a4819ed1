/* GlobalStepWaiterHook (B41–B42): waits in the first before_run only, TF's log lines, the poll callback
 * or the session's step, and the bound (TW_DEADLINE_EXCEEDED) TF lacks. Against the public header only. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hook_test_util.h"

/* Another worker's progress: the shared step advances by `stride` at every read. */
typedef struct shared_step {
  int64_t value;
  int64_t stride;
  int reads;
  int destroyed;
  tw_status fail;
} shared_step;

static tw_status read_shared(void *u, tw_session *session, int64_t *out) {
  shared_step *p = u;
  (void)session;
  if (p->fail != TW_OK) return tw_set_error(p->fail, "parameter server gone");
  *out = p->value;
  p->value += p->stride;
  p->reads++;
  return TW_OK;
}
static void shared_destroy(void *u) { ((shared_step *)u)->destroyed++; }

static tw_status plain_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

static tw_hook *waiter(int64_t target, double poll, double max_wait, shared_step *p) {
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_WAIT_POLL_SECS, poll), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_WAIT_MAX_SECS, max_wait), TW_OK);
  assert_int_equal(
      tw_global_step_waiter_hook_create(&hook, target, opts, p ? read_shared : NULL, p, p ? shared_destroy : NULL),
      TW_OK);
  tw_options_destroy(opts);
  return hook;
}

static void B42_waits_in_the_first_run_with_tf_lines(void **state) {
  (void)state;
  shared_step p = {0, 600, 0, 0, TW_OK};
  tw_hook *hook = waiter(2500, 0.001, -1, &p);
  tw_session *s = open_session(&hook, 1, NULL);
  start_capture();
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  stop_capture();
  assert_int_equal(p.reads, 6); /* 0, 600, 1200, 1800, 2400, 3000 */
  assert_int_equal(g_captured.count, 3);
  assert_string_equal(g_captured.lines[0], "Waiting for global step 2500 before starting training.");
  /* a progress line each time the step moved by more than 1000 since the last one */
  assert_string_equal(g_captured.lines[1],
                      "Waiting for global step 2500 before starting training. Current step is 1200.");
  assert_string_equal(g_captured.lines[2],
                      "Waiting for global step 2500 before starting training. Current step is 2400.");
  assert_int_equal(g_captured.levels[1], TW_LOG_INFO);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  assert_int_equal(p.reads, 6); /* later runs do nothing */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(p.destroyed, 1);
}

static void B42_no_wait_for_a_target_reached_or_not_positive(void **state) {
  (void)state;
  tw_options *opts = NULL;
  shared_step p = {0, 1, 0, 0, TW_OK};
  tw_hook *hooks[2] = {waiter(0, 0.5, -1, &p), waiter(5, 0.5, -1, NULL)}; /* session's step: starts at 10 */
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_INITIAL_GLOBAL_STEP, 10), TW_OK);
  tw_session *s = open_session(hooks, 2, opts);
  tw_options_destroy(opts);
  start_capture();
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  stop_capture();
  assert_int_equal(p.reads, 0);
  assert_int_equal(g_captured.count, 1); /* only the second hook announces its (immediate) wait */
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void bounded_wait_gives_deadline_exceeded(void **state) {
  (void)state;
  shared_step p = {7, 0, 0, 0, TW_OK}; /* never advances */
  tw_hook *hook = waiter(100, 0.005, 0.03, &p);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_DEADLINE_EXCEEDED);
  assert_string_equal(tw_last_error_message(),
                      "Global step did not reach 100 within 0.03 secs (TW_OPT_WAIT_MAX_SECS); last read 7.");
  assert_true(p.reads >= 2);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void poll_callback_errors_fail_the_run(void **state) {
  (void)state;
  shared_step p = {0, 0, 0, 0, TW_INTERNAL};
  tw_hook *hook = waiter(100, 0.001, -1, &p);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_INTERNAL);
  assert_string_equal(tw_last_error_message(), "GlobalStepWaiterHook global step function: parameter server gone");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B42_waits_in_the_first_run_with_tf_lines),
      cmocka_unit_test(B42_no_wait_for_a_target_reached_or_not_positive),
      cmocka_unit_test(bounded_wait_gives_deadline_exceeded),
      cmocka_unit_test(poll_callback_errors_fail_the_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
