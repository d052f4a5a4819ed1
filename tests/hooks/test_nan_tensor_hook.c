/* NanTensorHook (B31–B34) and what trainwatch adds: Inf, patterns, an interval, actions, messages that
 * say where; and the session's check_numerics option. Against the public header only. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "recorder.h"

static event_log g_log;

/* A step that publishes "loss" (a scalar) and "grad/w", "grad/b" (vectors of 4), whose values the
 * test sets per call through a schedule. */
typedef struct values {
  float loss[8]; /* loss for call i (clamped to the last entry) */
  float grad_w[4], grad_b[4];
  int calls;
  int publish_loss; /* 0: skip publishing loss */
} values;

static tw_status publishing_step(void *u, tw_step_context *ctx) {
  values *v = u;
  static const int64_t shape4[1] = {4};
  tw_tensor t = TW_TENSOR_INIT;
  const int i = v->calls < 8 ? v->calls : 7;
  v->calls++;
  t.dtype = TW_FLOAT32;
  if (v->publish_loss) {
    t.name = "loss";
    t.data = &v->loss[i];
    if (tw_step_context_publish(ctx, &t) != TW_OK) return TW_INTERNAL;
  }
  t.ndim = 1;
  t.shape = shape4;
  t.name = "grad/w";
  t.data = v->grad_w;
  if (tw_step_context_publish(ctx, &t) != TW_OK) return TW_INTERNAL;
  t.name = "grad/b";
  t.data = v->grad_b;
  return tw_step_context_publish(ctx, &t) == TW_OK ? TW_OK : TW_INTERNAL;
}

static values finite_values(void) {
  values v;
  memset(&v, 0, sizeof(v));
  v.publish_loss = 1;
  for (int i = 0; i < 8; ++i) v.loss[i] = 1.0f / (float)(i + 1);
  return v;
}

/* Session with [recorder "a", hook]; consumes the caller's reference to `hook`. */
static tw_session *open_with(tw_hook *hook, recorder *a, tw_options *opts) {
  tw_hook *hooks[2];
  tw_session *s = NULL;
  log_clear(&g_log);
  hooks[0] = make_recorder(a, "a", &g_log);
  hooks[1] = hook;
  assert_int_equal(tw_monitored_session_create(&s, opts, hooks, 2), TW_OK);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hook);
  return s;
}

static char g_lines[4][512];
static tw_log_level g_levels[4];
static int g_line_count;
static void capture(void *u, tw_log_level level, const char *message) {
  (void)u;
  if (g_line_count < 4) {
    g_levels[g_line_count] = level;
    snprintf(g_lines[g_line_count++], sizeof(g_lines[0]), "%s", message);
  }
}
static void start_capture(void) {
  g_line_count = 0;
  tw_set_log_sink(capture, NULL);
}

static void B31_loss_is_fetched_on_every_run(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  tw_hook *hook = NULL;
  assert_int_equal(tw_nan_tensor_hook_create(&hook, "loss", 1), TW_OK);
  assert_string_equal(tw_hook_name(hook), "NanTensorHook");
  tw_session *s = open_with(hook, &a, NULL);
  for (int i = 0; i < 5; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  v.publish_loss = 0; /* the hook asks for "loss" on this run too */
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_NOT_FOUND);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void B33_nan_fails_the_run_and_says_where(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  tw_hook *hook = NULL;
  v.loss[2] = NAN;
  assert_int_equal(tw_nan_tensor_hook_create(&hook, "loss", 1), TW_OK);
  tw_session *s = open_with(hook, &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  start_capture();
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_NAN_LOSS);
  tw_set_log_sink(NULL, NULL);
  assert_string_equal(tw_last_error_message(),
                      "NaN loss during training. (tensor 'loss', step 2: 1 NaN, 0 +Inf, 0 -Inf, first at index 0)");
  assert_true(g_line_count >= 1);
  assert_int_equal(g_levels[0], TW_LOG_ERROR);
  assert_non_null(strstr(g_lines[0], "Model diverged with loss = NaN."));
  /* not OutOfRange: end() is skipped, the other hooks hear on_error (B33) */
  assert_int_equal(a.last_error, TW_NAN_LOSS);
  log_clear(&g_log);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_string_equal(g_log.text, "");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void B32_tf_mode_lets_inf_through(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  tw_hook *hook = NULL;
  v.loss[0] = INFINITY;
  assert_int_equal(tw_nan_tensor_hook_create(&hook, "loss", 1), TW_OK);
  tw_session *s = open_with(hook, &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void B34_no_fail_warns_and_stops_cleanly(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  tw_hook *hook = NULL;
  v.loss[1] = NAN;
  assert_int_equal(tw_nan_tensor_hook_create(&hook, "loss", 0), TW_OK);
  tw_session *s = open_with(hook, &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  start_capture();
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  tw_set_log_sink(NULL, NULL);
  assert_int_equal(g_levels[0], TW_LOG_WARNING);
  assert_non_null(strstr(g_lines[0], "Model diverged with loss = NaN. (tensor 'loss', step 1"));
  assert_int_equal(tw_session_should_stop(s), 1);
  log_clear(&g_log);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_string_equal(g_log.text, "a.end"); /* a clean stop: end() runs */
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static tw_hook *guard(const char *const *watch, size_t n, tw_options *opts) {
  tw_hook *hook = NULL;
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, watch, n, opts, NULL, NULL, NULL), TW_OK);
  return hook;
}

static void inf_is_detected_by_default(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  const char *watch[] = {"loss"};
  v.loss[0] = -INFINITY;
  tw_session *s = open_with(guard(watch, 1, NULL), &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_NAN_LOSS);
  assert_non_null(strstr(tw_last_error_message(), "(tensor 'loss', step 0: 0 NaN, 0 +Inf, 1 -Inf, first at index 0)"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void patterns_watch_many_tensors_and_count(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  const char *watch[] = {"loss", "grad/*"};
  tw_session *s = open_with(guard(watch, 2, NULL), &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  v.grad_b[1] = NAN;
  v.grad_b[2] = INFINITY;
  v.grad_b[3] = NAN;
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_NAN_LOSS);
  assert_non_null(
      strstr(tw_last_error_message(), "(tensor 'grad/b', step 1: 2 NaN, 1 +Inf, 0 -Inf, first at index 1)"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void every_n_steps_checks_only_those_steps(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  const char *watch[] = {"loss"};
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_EVERY_N_STEPS, 3), TW_OK);
  v.loss[1] = NAN; /* step 1: not checked */
  v.loss[3] = NAN; /* step 3: checked */
  tw_session *s = open_with(guard(watch, 1, opts), &a, NULL);
  for (int i = 0; i < 3; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_NAN_LOSS);
  assert_non_null(strstr(tw_last_error_message(), "step 3:"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void stop_action_stops(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  const char *watch[] = {"grad/*"};
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_STOP), TW_OK);
  v.grad_w[0] = INFINITY;
  tw_session *s = open_with(guard(watch, 1, opts), &a, NULL);
  tw_set_log_level(TW_LOG_ERROR); /* keep the expected warning out of the test output */
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  tw_set_log_level(TW_LOG_INFO);
  assert_int_equal(tw_session_should_stop(s), 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

typedef struct seen {
  int calls;
  tw_nan_event last;
  char name[32];
  tw_status reply;
  int destroyed;
} seen;
static tw_status on_nan(void *u, tw_session *session, const tw_nan_event *event) {
  seen *s = u;
  s->calls++;
  s->last = *event;
  snprintf(s->name, sizeof(s->name), "%s", event->tensor_name);
  if (s->reply == TW_OK) return tw_session_request_stop(session);
  return tw_set_error(s->reply, "user gave up");
}
static void free_seen(void *u) { ((seen *)u)->destroyed++; }

static void callback_action_decides(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  const char *watch[] = {"grad/*"};
  seen info;
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  memset(&info, 0, sizeof(info));
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_CALLBACK), TW_OK);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, watch, 1, opts, NULL, NULL, NULL),
                   TW_INVALID_ARGUMENT);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, watch, 1, opts, on_nan, &info, free_seen), TW_OK);
  v.grad_w[3] = NAN;
  tw_session *s = open_with(hook, &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  assert_int_equal(info.calls, 1);
  assert_string_equal(info.name, "grad/w");
  assert_int_equal(info.last.nan_count, 1);
  assert_int_equal(info.last.first_nonfinite_index, 3);
  assert_int_equal(info.last.global_step, 0);
  assert_int_equal(tw_session_should_stop(s), 1); /* the callback asked for it */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(info.destroyed, 1);

  /* a callback that returns an error fails the run with it */
  memset(&info, 0, sizeof(info));
  info.reply = TW_CANCELLED;
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, watch, 1, opts, on_nan, &info, NULL), TW_OK);
  s = open_with(hook, &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_CANCELLED);
  assert_non_null(strstr(tw_last_error_message(), "user gave up"));
  assert_non_null(strstr(tw_last_error_message(), "tensor 'grad/w'"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

/* bfloat16 and float64 values are watched too. */
static tw_status bf16_step(void *u, tw_step_context *ctx) {
  tw_tensor t = TW_TENSOR_INIT;
  t.name = "loss";
  t.dtype = TW_BFLOAT16;
  t.data = u;
  return tw_step_context_publish(ctx, &t);
}
static void any_float_dtype(void **state) {
  (void)state;
  recorder a;
  uint16_t bf16 = 0x3F80; /* 1.0 */
  tw_hook *hook = NULL;
  assert_int_equal(tw_nan_tensor_hook_create(&hook, "loss", 1), TW_OK);
  tw_session *s = open_with(hook, &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, bf16_step, &bf16), TW_OK);
  bf16 = 0xFFC1; /* a negative NaN payload */
  assert_int_equal(tw_session_run(s, NULL, 0, bf16_step, &bf16), TW_NAN_LOSS);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* The "custom NaN hook" pattern: a hook of one's own that scans in after_run and acts. */
typedef struct repair {
  float *weights;
  int repairs;
} repair;
static tw_status repair_before(void *u, tw_run_context *ctx) {
  (void)u;
  return tw_run_context_request_fetch(ctx, "loss");
}
static tw_status repair_after(void *u, tw_run_context *ctx) {
  repair *r = u;
  tw_tensor loss = TW_TENSOR_INIT;
  tw_scan_result scan;
  tw_status st = tw_run_context_get_result(&loss, ctx, "loss");
  if (st != TW_OK) return st;
  tw_scan_result_init(&scan);
  if ((st = tw_scan(&scan, &loss)) != TW_OK) return st;
  if (scan.first_nonfinite_index >= 0) {
    r->weights[0] = 0.0f;
    r->repairs++;
  }
  return TW_OK;
}
static void custom_hook_can_take_its_own_action(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  float weights[1] = {5.0f};
  repair r = {weights, 0};
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, repair_before, repair_after, NULL, NULL, NULL};
  tw_hook *hook = NULL;
  v.loss[1] = NAN;
  assert_int_equal(tw_hook_create(&hook, "repair", &cb, &r), TW_OK);
  tw_session *s = open_with(hook, &a, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  assert_int_equal(r.repairs, 1);
  assert_true(weights[0] == 0.0f);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void check_numerics_option_names_output_and_step(void **state) {
  (void)state;
  recorder a;
  values v = finite_values();
  const char *watch[] = {"never/*"};
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECK_NUMERICS, 1), TW_OK);
  tw_session *s = open_with(guard(watch, 1, NULL), &a, opts);
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_OK);
  v.grad_w[0] = INFINITY;
  v.grad_w[1] = NAN;
  assert_int_equal(tw_session_run(s, NULL, 0, publishing_step, &v), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "output 'grad/w' at step 1 : Tensor had Inf and NaN values");
  assert_int_equal(a.last_error, TW_INVALID_ARGUMENT);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void bad_arguments(void **state) {
  (void)state;
  tw_hook *hook = NULL;
  tw_options *opts = NULL;
  const char *empty[] = {""};
  assert_int_equal(tw_nan_tensor_hook_create(NULL, "loss", 1), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_nan_tensor_hook_create(&hook, NULL, 1), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "loss_name is NULL or empty");
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, NULL, 0, NULL, NULL, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, empty, 1, NULL, NULL, NULL, NULL),
                   TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "watch[0] is NULL or empty");
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, 7), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_EVERY_N_STEPS, 0), TW_INVALID_ARGUMENT);
  tw_options_destroy(opts);
  assert_null(hook);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B31_loss_is_fetched_on_every_run),
      cmocka_unit_test(B33_nan_fails_the_run_and_says_where),
      cmocka_unit_test(B32_tf_mode_lets_inf_through),
      cmocka_unit_test(B34_no_fail_warns_and_stops_cleanly),
      cmocka_unit_test(inf_is_detected_by_default),
      cmocka_unit_test(patterns_watch_many_tensors_and_count),
      cmocka_unit_test(every_n_steps_checks_only_those_steps),
      cmocka_unit_test(stop_action_stops),
      cmocka_unit_test(callback_action_decides),
      cmocka_unit_test(any_float_dtype),
      cmocka_unit_test(custom_hook_can_take_its_own_action),
      cmocka_unit_test(check_numerics_option_names_output_and_step),
      cmocka_unit_test(bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
