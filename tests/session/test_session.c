/* MonitoredSession lifecycle, written only against the public header. Test names cite the behaviours of
 * docs/tf-semantics.md (H…, W…, S…). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "recorder.h"

static event_log g_log;
static recorder g_a, g_b;

static tw_options *fast_options(void) {
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_RECOVERY_BACKOFF_SECS, 0.0), TW_OK);
  return opts;
}

/* Two recorder hooks a, b in one session; the caller keeps no hook references. */
static tw_session *open_ab(tw_options *opts, int singular) {
  tw_hook *hooks[2];
  tw_session *s = NULL;
  log_clear(&g_log);
  hooks[0] = make_recorder(&g_a, "a", &g_log);
  hooks[1] = make_recorder(&g_b, "b", &g_log);
  assert_non_null(hooks[0]);
  assert_non_null(hooks[1]);
  tw_status st = singular ? tw_singular_monitored_session_create(&s, opts, hooks, 2)
                          : tw_monitored_session_create(&s, opts, hooks, 2);
  assert_int_equal(st, TW_OK);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
  return s;
}

static void H6_H9_H12_lifecycle_order(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  assert_string_equal(g_log.text, "a.begin b.begin a.acs b.acs");
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_string_equal(g_log.text, "a.before b.before step a.after b.after a.before b.before step a.after b.after");
  log_clear(&g_log);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_string_equal(g_log.text, "a.end b.end");
  assert_int_equal(g_a.destroyed, 1); /* the session held the last reference */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(g_a.destroyed, 1);
  assert_int_equal(g_b.destroyed, 1);
}

/* H5: the same run context goes to every hook's before_run and after_run of one run. */
static tw_run_context *g_seen[4];
static int g_seen_count;
static tw_status remember_ctx(void *u, tw_run_context *ctx) {
  (void)u;
  if (g_seen_count < 4) g_seen[g_seen_count++] = ctx;
  return TW_OK;
}
static void H5_one_context_per_run(void **state) {
  (void)state;
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, remember_ctx, remember_ctx, NULL, NULL, NULL};
  tw_hook *hooks[2];
  tw_session *s = NULL;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  assert_int_equal(tw_hook_create(&hooks[0], "x", &cb, NULL), TW_OK);
  assert_int_equal(tw_hook_create(&hooks[1], "y", &cb, NULL), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, NULL, hooks, 2), TW_OK);
  g_seen_count = 0;
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(g_seen_count, 4);
  assert_ptr_equal(g_seen[0], g_seen[1]);
  assert_ptr_equal(g_seen[1], g_seen[2]);
  assert_ptr_equal(g_seen[2], g_seen[3]);
  assert_ptr_equal(tw_run_context_session(g_seen[0]), s);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
}

static void H10_H20_H21_results_routed_per_hook(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  g_a.fetch = "loss";
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(g_a.results_seen, 1);
  assert_true(g_a.last_result == 0.5);
  assert_int_equal(g_b.results_seen, 0); /* requested nothing: TF's results == None */
  g_b.fetch = "loss";                    /* H21: both may fetch the same name */
  plan.loss = 2.0f;
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_true(g_a.last_result == 2.0);
  assert_true(g_b.last_result == 2.0);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H11_H28_stop_in_before_run_does_not_cancel(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  g_a.stop_in_before = 1;
  log_clear(&g_log);
  assert_int_equal(tw_session_should_stop(s), 0);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_string_equal(g_log.text, "a.before b.before step a.after b.after");
  assert_int_equal(tw_session_should_stop(s), 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H29_run_after_stop_is_an_error(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  g_b.stop_in_after = 1;
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_FAILED_PRECONDITION);
  assert_string_equal(tw_last_error_message(), "Run called even after should_stop requested.");
  assert_string_equal(g_log.text, "");          /* no hook was called */
  assert_int_equal(tw_session_close(s), TW_OK); /* not a failure: end still runs */
  assert_string_equal(g_log.text, "a.end b.end");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H13_step_failure_skips_after_run_and_end(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_INVALID_ARGUMENT, 0, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "step failed on purpose");
  assert_string_equal(g_log.text, "a.before b.before step a.error(TW_INVALID_ARGUMENT) b.error(TW_INVALID_ARGUMENT)");
  assert_int_equal(tw_session_should_stop(s), 1);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_FAILED_PRECONDITION);
  log_clear(&g_log);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_string_equal(g_log.text, ""); /* end skipped: the hooks heard on_error instead */
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H13_H15_out_of_range_is_a_clean_end(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OUT_OF_RANGE, 2, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OUT_OF_RANGE);
  assert_string_equal(g_log.text, "a.before b.before step"); /* no after_run, no on_error */
  log_clear(&g_log);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_string_equal(g_log.text, "a.end b.end");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H14_after_run_failure_skips_later_hooks(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  g_a.fail_phase = PH_AFTER;
  g_a.fail_status = TW_NAN_LOSS;
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_NAN_LOSS);
  assert_string_equal(tw_last_error_message(), "hook 'a' after_run: recorder failed on purpose");
  assert_string_equal(g_log.text, "a.before b.before step a.after a.error(TW_NAN_LOSS) b.error(TW_NAN_LOSS)");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H18_end_failure_stops_later_ends_but_closes(void **state) {
  (void)state;
  tw_session *s = open_ab(NULL, 0);
  g_a.fail_phase = PH_END;
  g_a.fail_status = TW_INTERNAL;
  log_clear(&g_log);
  assert_int_equal(tw_session_close(s), TW_INTERNAL);
  assert_string_equal(g_log.text, "a.end");
  assert_int_equal(tw_session_should_stop(s), 1);
  assert_int_equal(tw_session_close(s), TW_FAILED_PRECONDITION); /* W18 */
  assert_string_equal(tw_last_error_message(), "Session is already closed.");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H22_two_hooks_feeding_one_name(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  recorder c;
  tw_hook *hooks[3];
  tw_session *s = NULL;
  log_clear(&g_log);
  hooks[0] = make_recorder(&g_a, "a", &g_log);
  hooks[1] = make_recorder(&g_b, "b", &g_log);
  hooks[2] = make_recorder(&c, "c", &g_log);
  g_a.feed_name = "x";
  g_b.feed_name = "x";
  assert_int_equal(tw_monitored_session_create(&s, NULL, hooks, 3), TW_OK);
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(),
                      "hook 'b' before_run: Same tensor is fed by two hooks. Conflict(s): ['x']");
  /* raised at once: c's before_run, the step and every after_run are skipped */
  assert_string_equal(g_log.text,
                      "a.before b.before a.error(TW_INVALID_ARGUMENT) b.error(TW_INVALID_ARGUMENT) "
                      "c.error(TW_INVALID_ARGUMENT)");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  for (int i = 0; i < 3; ++i) tw_hook_destroy(hooks[i]);
}

static void H23_hook_and_user_feeding_one_name(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  float value = 1.0f;
  tw_tensor feed = TW_TENSOR_INIT;
  tw_session *s = open_ab(NULL, 0);
  g_b.feed_name = "x";
  feed.name = "x";
  feed.dtype = TW_FLOAT32;
  feed.data = &value;
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, &feed, 1, recording_step, &plan), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Same tensor is fed by a SessionRunHook and user. Conflict(s): ['x']");
  assert_string_equal(g_log.text, "a.before b.before a.error(TW_INVALID_ARGUMENT) b.error(TW_INVALID_ARGUMENT)");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* H23: without a conflict the step sees hook feeds and user feeds together. */
static tw_status check_feeds_step(void *u, tw_step_context *ctx) {
  tw_tensor t = TW_TENSOR_INIT;
  int *ok = u;
  *ok = tw_step_context_feed_count(ctx) == 2 && tw_step_context_get_feed(&t, ctx, "hook_x") == TW_OK &&
        *(float *)t.data == 3.0f && tw_step_context_get_feed(&t, ctx, "user_y") == TW_OK && *(float *)t.data == 7.0f &&
        tw_step_context_get_feed(&t, ctx, "nope") == TW_NOT_FOUND;
  return TW_OK;
}
static void H23_feeds_are_merged(void **state) {
  (void)state;
  float value = 7.0f;
  int ok = 0;
  tw_tensor feed = TW_TENSOR_INIT;
  tw_session *s = open_ab(NULL, 0);
  g_a.feed_name = "hook_x";
  g_a.feed_value = 3.0f;
  feed.name = "user_y";
  feed.dtype = TW_FLOAT32;
  feed.data = &value;
  assert_int_equal(tw_session_run(s, &feed, 1, check_feeds_step, &ok), TW_OK);
  assert_true(ok);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H19_W9_W10_H8_recovery_retries_the_whole_run(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_ABORTED, 1, 0, 0.5f};
  tw_options *opts = fast_options();
  tw_session *s = open_ab(opts, 0);
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_string_equal(g_log.text, "a.before b.before step a.acs b.acs a.before b.before step a.after b.after");
  assert_int_equal(g_a.calls[PH_BEGIN], 1); /* begin is not re-run */
  assert_int_equal(tw_session_creation_count(s), 2);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void H19_recoverable_status_from_a_hook(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_options *opts = fast_options();
  tw_session *s = open_ab(opts, 0);
  g_b.fail_phase = PH_AFTER;
  g_b.fail_on_call = 1;
  g_b.fail_status = TW_UNAVAILABLE;
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_string_equal(g_log.text,
                      "a.before b.before step a.after b.after a.acs b.acs a.before b.before step a.after b.after");
  assert_int_equal(plan.calls, 2); /* the step executed twice, as in TF */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void bounded_recovery_gives_up(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_ABORTED, 0, 0, 0.5f};
  tw_options *opts = fast_options();
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_MAX_RECOVERY_ATTEMPTS, 3), TW_OK);
  tw_session *s = open_ab(opts, 0);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_ABORTED);
  assert_non_null(strstr(tw_last_error_message(), "gave up after 3 recoveries"));
  assert_non_null(strstr(tw_last_error_message(), "step failed on purpose"));
  assert_int_equal(plan.calls, 4);
  assert_int_equal(tw_session_creation_count(s), 4);
  assert_int_equal(g_a.last_error, TW_ABORTED); /* on_error heard the final status */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void W7_only_the_recoverable_set_recovers(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_DEADLINE_EXCEEDED, 1, 0, 0.5f};
  tw_options *opts = fast_options();
  tw_session *s = open_ab(opts, 0);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_DEADLINE_EXCEEDED);
  assert_int_equal(tw_session_creation_count(s), 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);

  /* the set is configurable: DATA_LOSS in, ABORTED out */
  assert_int_equal(tw_options_set_recoverable(opts, TW_DATA_LOSS, 1), TW_OK);
  assert_int_equal(tw_options_set_recoverable(opts, TW_ABORTED, 0), TW_OK);
  s = open_ab(opts, 0);
  plan.calls = 0;
  plan.result = TW_DATA_LOSS;
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(tw_session_creation_count(s), 2);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  s = open_ab(opts, 0);
  plan.calls = 0;
  plan.result = TW_ABORTED;
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_ABORTED);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void W1_W26_singular_session_does_not_recover(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_ABORTED, 1, 0, 0.5f};
  tw_session *s = open_ab(NULL, 1);
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_ABORTED);
  assert_string_equal(g_log.text, "a.before b.before step a.error(TW_ABORTED) b.error(TW_ABORTED)");
  assert_int_equal(tw_session_creation_count(s), 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void W6_W18_use_after_close(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_FAILED_PRECONDITION);
  assert_string_equal(tw_last_error_message(), "Session is closed.");
  assert_int_equal(tw_session_run_without_hooks(s, NULL, 0, recording_step, &plan), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_session_request_stop(s), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_session_close(s), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_session_should_stop(s), 1); /* W4 */
  assert_int_equal(plan.calls, 0);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* W20–W23: the step's request_stop ends the run like StopIteration and sets no stop flag. */
static tw_status stopping_step(void *u, tw_step_context *ctx) {
  (void)u;
  return tw_step_context_request_stop(ctx);
}
static void W21_W23_step_request_stop(void **state) {
  (void)state;
  tw_session *s = open_ab(NULL, 0);
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, stopping_step, NULL), TW_STOP_ITERATION);
  assert_string_equal(tw_last_error_message(), "step_fn has requested the iterations to stop.");
  assert_string_equal(g_log.text, "a.before b.before");
  assert_int_equal(tw_session_should_stop(s), 0);
  log_clear(&g_log);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_string_equal(g_log.text, "a.end b.end"); /* H15: a clean end */
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* W21: step_context.session runs without hooks; a nested run with hooks is refused. */
static tw_status inner_step(void *u, tw_step_context *ctx) {
  (void)ctx;
  ++*(int *)u;
  return TW_OK;
}
static tw_status outer_step(void *u, tw_step_context *ctx) {
  tw_session *s = tw_step_context_session(ctx);
  tw_status st = tw_session_run_without_hooks(s, NULL, 0, inner_step, u);
  if (st != TW_OK) return st;
  if (tw_session_run(s, NULL, 0, inner_step, u) != TW_FAILED_PRECONDITION) return TW_INTERNAL;
  return TW_OK;
}
static void W21_step_context_session_runs_without_hooks(void **state) {
  (void)state;
  int inner_calls = 0;
  tw_session *s = open_ab(NULL, 0);
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, outer_step, &inner_calls), TW_OK);
  assert_int_equal(inner_calls, 1);
  assert_string_equal(g_log.text, "a.before b.before a.after b.after");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* A run without hooks keeps recovery and leaves global_step alone (docs/ARCHITECTURE.md, decisions). */
static void run_without_hooks_keeps_recovery(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_ABORTED, 1, 0, 0.5f};
  tw_options *opts = fast_options();
  int64_t step = -1;
  tw_session *s = open_ab(opts, 0);
  log_clear(&g_log);
  assert_int_equal(tw_session_run_without_hooks(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_string_equal(g_log.text, "step a.acs b.acs step");
  step = tw_session_global_step(s);
  assert_int_equal(step, 0);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

/* global_step: the fetched value is the start-of-run value; the session's is already updated in
 * after_run; the step may set it; auto-increment can be turned off. */
typedef struct gs_probe {
  int64_t fetched, real;
} gs_probe;
static tw_status gs_before(void *u, tw_run_context *ctx) {
  (void)u;
  return tw_run_context_request_fetch(ctx, "global_step");
}
static tw_status gs_after(void *u, tw_run_context *ctx) {
  gs_probe *p = u;
  tw_tensor t = TW_TENSOR_INIT;
  tw_status st = tw_run_context_get_result(&t, ctx, "global_step");
  if (st != TW_OK) return st;
  if (t.dtype != TW_INT64 || t.ndim != 0) return TW_INTERNAL;
  p->fetched = *(int64_t *)t.data;
  p->real = tw_session_global_step(tw_run_context_session(ctx));
  return TW_OK;
}
static tw_status set_step_to_100(void *u, tw_step_context *ctx) {
  (void)u;
  return tw_step_context_set_global_step(ctx, 100);
}
static void global_step_semantics(void **state) {
  (void)state;
  gs_probe probe = {-1, -1};
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, gs_before, gs_after, NULL, NULL, NULL};
  tw_hook *hook = NULL;
  tw_session *s = NULL;
  tw_options *opts = fast_options();
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_INITIAL_GLOBAL_STEP, 7), TW_OK);
  assert_int_equal(tw_hook_create(&hook, "gs", &cb, &probe), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, opts, &hook, 1), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(probe.fetched, 7);
  assert_int_equal(probe.real, 8);
  assert_int_equal(tw_session_run(s, NULL, 0, set_step_to_100, NULL), TW_OK);
  assert_int_equal(probe.fetched, 8);
  assert_int_equal(probe.real, 100);
  assert_int_equal(tw_session_destroy(s), TW_OK);

  assert_int_equal(tw_options_set_int64(opts, TW_OPT_AUTO_INCREMENT_GLOBAL_STEP, 0), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, opts, &hook, 1), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(probe.fetched, 7);
  assert_int_equal(probe.real, 7);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(hook);
  tw_options_destroy(opts);
}

/* Variables are fetched zero copy; patterns match published outputs and variables. */
typedef struct var_probe {
  const void *w_data;
  int grads;
  int requested_grad;
} var_probe;
static tw_status var_before(void *u, tw_run_context *ctx) {
  (void)u;
  tw_status st = tw_run_context_request_fetch(ctx, "w");
  if (st == TW_OK) st = tw_run_context_request_fetch(ctx, "grad/*");
  if (st == TW_OK) st = tw_run_context_request_fetch(ctx, "nothing/*"); /* matches nothing: fine */
  return st;
}
static tw_status var_after(void *u, tw_run_context *ctx) {
  var_probe *p = u;
  tw_tensor t = TW_TENSOR_INIT;
  tw_status st = tw_run_context_get_result(&t, ctx, "w");
  if (st != TW_OK) return st;
  p->w_data = t.data;
  p->grads = 0;
  for (size_t i = 0; i < tw_run_context_result_count(ctx); ++i) {
    if (tw_run_context_result_at(&t, ctx, i) != TW_OK) return TW_INTERNAL;
    if (strncmp(t.name, "grad/", 5) == 0) p->grads++;
  }
  return TW_OK;
}
static tw_status grads_step(void *u, tw_step_context *ctx) {
  static float g1 = 1.0f, g2 = 2.0f;
  tw_tensor t = TW_TENSOR_INIT;
  var_probe *p = u;
  p->requested_grad = tw_step_context_is_requested(ctx, "grad/w") + tw_step_context_is_requested(ctx, "loss");
  t.dtype = TW_FLOAT32;
  t.name = "grad/w";
  t.data = &g1;
  if (tw_step_context_publish(ctx, &t) != TW_OK) return TW_INTERNAL;
  t.name = "grad/b";
  t.data = &g2;
  if (tw_step_context_publish(ctx, &t) != TW_OK) return TW_INTERNAL;
  t.name = "w"; /* a variable's name cannot be published */
  return tw_step_context_publish(ctx, &t) == TW_INVALID_ARGUMENT ? TW_OK : TW_INTERNAL;
}
static void variables_and_patterns(void **state) {
  (void)state;
  float w[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  tw_tensor var = TW_TENSOR_INIT;
  tw_tensor got = TW_TENSOR_INIT;
  var_probe probe = {NULL, 0, 0};
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, var_before, var_after, NULL, NULL, NULL};
  tw_hook *hook = NULL;
  tw_session *s = NULL;
  tw_options *opts = fast_options();
  var.name = "w";
  var.dtype = TW_FLOAT32;
  var.data = w;
  var.ndim = 2;
  var.shape = shape;
  assert_int_equal(tw_options_add_variable(opts, &var), TW_OK);
  tw_options *twice = fast_options();
  assert_int_equal(tw_options_add_variable(twice, &var), TW_OK);
  assert_int_equal(tw_options_add_variable(twice, &var), TW_ALREADY_EXISTS);
  /* The failed registration stays on the options: a session from them fails with it. */
  assert_int_equal(tw_monitored_session_create(&s, twice, NULL, 0), TW_ALREADY_EXISTS);
  assert_null(s);
  tw_options_destroy(twice);
  assert_int_equal(tw_hook_create(&hook, "vars", &cb, &probe), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, opts, &hook, 1), TW_OK);
  tw_options_destroy(opts); /* the session copied what it needs */
  assert_int_equal(tw_session_run(s, NULL, 0, grads_step, &probe), TW_OK);
  assert_ptr_equal(probe.w_data, w); /* zero copy */
  assert_int_equal(probe.grads, 2);
  assert_int_equal(probe.requested_grad, 1);
  assert_int_equal(tw_session_variable_count(s), 1);
  assert_int_equal(tw_session_get_variable(&got, s, "w"), TW_OK);
  assert_ptr_equal(got.data, w);
  assert_int_equal(got.ndim, 2);
  assert_int_equal(got.shape[1], 3);
  assert_string_equal(got.name, "w");
  assert_int_equal(tw_session_get_variable(&got, s, "nope"), TW_NOT_FOUND);
  assert_int_equal(tw_session_variable_at(&got, s, 1), TW_OUT_OF_RANGE);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(hook);
}

static void unknown_fetch_fails_the_run(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_session *s = open_ab(NULL, 0);
  g_b.fetch = "accuracy";
  log_clear(&g_log);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_NOT_FOUND);
  assert_string_equal(tw_last_error_message(),
                      "hook 'b' requested 'accuracy', which is neither an output the step "
                      "published, a variable, nor global_step");
  assert_string_equal(g_log.text, "a.before b.before step a.error(TW_NOT_FOUND) b.error(TW_NOT_FOUND)");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* S5/S7/W10: the chief initializes when nothing is restored, on creation and every recovery; a worker
 * never does and waits for readiness instead (S2, S10). */
static int g_init_calls, g_init_destroyed, g_ready_polls;
static tw_status count_init(void *u, tw_session *s) {
  (void)u;
  (void)s;
  g_init_calls++;
  return TW_OK;
}
static void count_destroy(void *u) {
  (void)u;
  g_init_destroyed++;
}
static tw_status ready_on_third_poll(void *u, tw_session *s, int *ready) {
  (void)u;
  (void)s;
  *ready = ++g_ready_polls >= 3;
  return TW_OK;
}
static tw_status never_ready(void *u, tw_session *s, int *ready) {
  (void)u;
  (void)s;
  g_ready_polls++;
  *ready = 0;
  return TW_OK;
}
static void S7_W10_chief_runs_init_fn_on_every_creation(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_ABORTED, 1, 0, 0.5f};
  tw_options *opts = fast_options();
  g_init_calls = g_init_destroyed = 0;
  assert_int_equal(tw_options_set_init_fn(opts, count_init, NULL, count_destroy), TW_OK);
  tw_session *s = open_ab(opts, 0);
  assert_int_equal(g_init_calls, 1);
  assert_int_equal(tw_session_is_chief(s), 1);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(g_init_calls, 2);
  tw_options_destroy(opts);
  assert_int_equal(g_init_destroyed, 0); /* the session still holds the init function */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(g_init_destroyed, 1);
}
static void S2_S10_worker_waits_until_ready(void **state) {
  (void)state;
  tw_options *opts = fast_options();
  g_init_calls = g_ready_polls = 0;
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_IS_CHIEF, 0), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_RECOVERY_WAIT_SECS, 0.001), TW_OK);
  assert_int_equal(tw_options_set_init_fn(opts, count_init, NULL, NULL), TW_OK);
  assert_int_equal(tw_options_set_ready_fn(opts, ready_on_third_poll, NULL, NULL), TW_OK);
  tw_session *s = open_ab(opts, 0);
  assert_int_equal(g_ready_polls, 3);
  assert_int_equal(g_init_calls, 0);
  assert_int_equal(tw_session_is_chief(s), 0);
  assert_int_equal(tw_session_destroy(s), TW_OK);

  g_ready_polls = 0;
  assert_int_equal(tw_options_set_ready_fn(opts, never_ready, NULL, NULL), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_MAX_WAIT_SECS, 0.02), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_RECOVERY_WAIT_SECS, 0.005), TW_OK);
  tw_hook *hook = make_recorder(&g_a, "a", &g_log);
  tw_session *none = NULL;
  log_clear(&g_log);
  assert_int_equal(tw_monitored_session_create(&none, opts, &hook, 1), TW_DEADLINE_EXCEEDED);
  assert_string_equal(tw_last_error_message(), "Session was not ready after waiting 0 secs.");
  assert_null(none);
  assert_true(g_ready_polls >= 2);
  assert_string_equal(g_log.text, "a.begin a.error(TW_DEADLINE_EXCEEDED)");
  tw_hook_destroy(hook);
  assert_int_equal(g_a.destroyed, 1);

  /* S10: max_wait_secs below recovery_wait_secs makes exactly one attempt */
  g_ready_polls = 0;
  assert_int_equal(tw_options_set_double(opts, TW_OPT_RECOVERY_WAIT_SECS, 30.0), TW_OK);
  assert_int_equal(tw_monitored_session_create(&none, opts, NULL, 0), TW_DEADLINE_EXCEEDED);
  assert_int_equal(g_ready_polls, 1);
  tw_options_destroy(opts);
}

static void begin_failure_fails_creation(void **state) {
  (void)state;
  tw_hook *hooks[2];
  tw_session *s = NULL;
  log_clear(&g_log);
  hooks[0] = make_recorder(&g_a, "a", &g_log);
  hooks[1] = make_recorder(&g_b, "b", &g_log);
  g_b.fail_phase = PH_BEGIN;
  g_b.fail_status = TW_INVALID_ARGUMENT;
  assert_int_equal(tw_monitored_session_create(&s, NULL, hooks, 2), TW_INVALID_ARGUMENT);
  assert_null(s);
  assert_string_equal(g_log.text, "a.begin b.begin a.error(TW_INVALID_ARGUMENT) b.error(TW_INVALID_ARGUMENT)");
  assert_int_equal(g_a.destroyed, 0);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
  assert_int_equal(g_a.destroyed, 1);
  assert_int_equal(g_b.destroyed, 1);
}

/* Destruction order of sessions and hooks does not matter; destroy runs exactly once. */
static void destroy_in_any_order(void **state) {
  (void)state;
  tw_hook *hook = make_recorder(&g_a, "a", &g_log);
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_session_create(&s, NULL, &hook, 1), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK); /* abandoned open session: no end, no on_error */
  assert_int_equal(g_a.calls[PH_END], 0);
  assert_int_equal(g_a.destroyed, 0);
  tw_hook_destroy(hook);
  assert_int_equal(g_a.destroyed, 1);
}

static void a_hook_serves_one_open_session(void **state) {
  (void)state;
  tw_hook *hook = make_recorder(&g_a, "a", &g_log);
  tw_session *s1 = NULL, *s2 = NULL;
  assert_int_equal(tw_monitored_session_create(&s1, NULL, &hook, 1), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s2, NULL, &hook, 1), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "already belongs to another open session"));
  assert_int_equal(tw_session_close(s1), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s2, NULL, &hook, 1), TW_OK); /* free again after close */
  assert_int_equal(tw_session_destroy(s2), TW_OK);
  assert_int_equal(tw_session_destroy(s1), TW_OK);
  tw_hook_destroy(hook);
  assert_int_equal(g_a.destroyed, 1);
}

/* Log lines reach a user sink; recovery announces itself at INFO as TF does. */
static int g_info_lines;
static char g_last_line[512];
static void capture_log(void *u, tw_log_level level, const char *message) {
  (void)u;
  if (level == TW_LOG_INFO) g_info_lines++;
  snprintf(g_last_line, sizeof(g_last_line), "%s", message);
}
static void recovery_is_logged_through_the_sink(void **state) {
  (void)state;
  step_plan plan = {&g_log, TW_ABORTED, 1, 0, 0.5f};
  tw_options *opts = fast_options();
  tw_session *s = open_ab(opts, 0);
  g_info_lines = 0;
  tw_set_log_sink(capture_log, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  tw_set_log_sink(NULL, NULL);
  assert_int_equal(g_info_lines, 1);
  assert_non_null(strstr(g_last_line, "a new session will be created"));
  assert_non_null(strstr(g_last_line, "step failed on purpose"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

/* A hook may run auxiliary work without hooks from its callbacks (TF's run_context.session.run). */
static tw_status aux_after(void *u, tw_run_context *ctx) {
  return tw_session_run_without_hooks(tw_run_context_session(ctx), NULL, 0, inner_step, u);
}
static void hooks_may_run_without_hooks(void **state) {
  (void)state;
  int aux_calls = 0;
  step_plan plan = {&g_log, TW_OK, 0, 0, 0.5f};
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, NULL, aux_after, NULL, NULL, NULL};
  tw_hook *hook = NULL;
  tw_session *s = NULL;
  assert_int_equal(tw_hook_create(&hook, "aux", &cb, &aux_calls), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, NULL, &hook, 1), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(aux_calls, 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(hook);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(H6_H9_H12_lifecycle_order),
      cmocka_unit_test(H5_one_context_per_run),
      cmocka_unit_test(H10_H20_H21_results_routed_per_hook),
      cmocka_unit_test(H11_H28_stop_in_before_run_does_not_cancel),
      cmocka_unit_test(H29_run_after_stop_is_an_error),
      cmocka_unit_test(H13_step_failure_skips_after_run_and_end),
      cmocka_unit_test(H13_H15_out_of_range_is_a_clean_end),
      cmocka_unit_test(H14_after_run_failure_skips_later_hooks),
      cmocka_unit_test(H18_end_failure_stops_later_ends_but_closes),
      cmocka_unit_test(H22_two_hooks_feeding_one_name),
      cmocka_unit_test(H23_hook_and_user_feeding_one_name),
      cmocka_unit_test(H23_feeds_are_merged),
      cmocka_unit_test(H19_W9_W10_H8_recovery_retries_the_whole_run),
      cmocka_unit_test(H19_recoverable_status_from_a_hook),
      cmocka_unit_test(bounded_recovery_gives_up),
      cmocka_unit_test(W7_only_the_recoverable_set_recovers),
      cmocka_unit_test(W1_W26_singular_session_does_not_recover),
      cmocka_unit_test(W6_W18_use_after_close),
      cmocka_unit_test(W21_W23_step_request_stop),
      cmocka_unit_test(W21_step_context_session_runs_without_hooks),
      cmocka_unit_test(run_without_hooks_keeps_recovery),
      cmocka_unit_test(global_step_semantics),
      cmocka_unit_test(variables_and_patterns),
      cmocka_unit_test(unknown_fetch_fails_the_run),
      cmocka_unit_test(S7_W10_chief_runs_init_fn_on_every_creation),
      cmocka_unit_test(S2_S10_worker_waits_until_ready),
      cmocka_unit_test(begin_failure_fails_creation),
      cmocka_unit_test(destroy_in_any_order),
      cmocka_unit_test(a_hook_serves_one_open_session),
      cmocka_unit_test(recovery_is_logged_through_the_sink),
      cmocka_unit_test(hooks_may_run_without_hooks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
