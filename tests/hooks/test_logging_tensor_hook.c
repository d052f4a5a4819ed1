/* LoggingTensorHook (B6–B10): configurations, trigger runs, the line format and its elapsed-time suffix,
 * tags, the formatter, at_end, and values of every dtype and shape. Against the public header only. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hook_test_util.h"

static const char *const kLossAndW[] = {"loss", "w"};

/* A LoggingTensorHook on `names` with every_n_iter / every_n_secs / at_end; NULL on error. */
static tw_hook *logging_hook(const char *const *names, const char *const *tags, size_t n, int64_t every_n_iter,
                             double every_n_secs, int at_end) {
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, every_n_iter), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_EVERY_N_SECS, every_n_secs), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_LOG_AT_END, at_end), TW_OK);
  tw_status st = tw_logging_tensor_hook_create(&hook, names, tags, n, opts, NULL, NULL, NULL);
  tw_options_destroy(opts);
  return st == TW_OK ? hook : NULL;
}

static tw_status create_status(int64_t every_n_iter, double every_n_secs, int at_end) {
  tw_hook *hook = logging_hook(kLossAndW, NULL, 2, every_n_iter, every_n_secs, at_end);
  if (hook == NULL) return -1;
  tw_hook_destroy(hook);
  return TW_OK;
}

static void B6_valid_and_invalid_configurations(void **state) {
  (void)state;
  assert_int_equal(create_status(TW_UNSET, TW_UNSET_SECS, 1), TW_OK); /* at_end alone */
  assert_int_equal(create_status(5, TW_UNSET_SECS, 0), TW_OK);
  assert_int_equal(create_status(TW_UNSET, 2.0, 1), TW_OK);
  assert_int_equal(create_status(TW_UNSET, TW_UNSET_SECS, 0), -1);
  assert_string_equal(tw_last_error_message(),
                      "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.");
  assert_int_equal(create_status(5, 2.0, 1), -1); /* T3: both is an error, with or without at_end */
  assert_string_equal(tw_last_error_message(),
                      "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.");
  assert_int_equal(create_status(0, TW_UNSET_SECS, 0), -1);
  assert_string_equal(tw_last_error_message(), "invalid every_n_iter=0.");
  assert_int_equal(create_status(-3, TW_UNSET_SECS, 1), -1);
  assert_string_equal(tw_last_error_message(), "invalid every_n_iter=-3.");
}

/* Runs `runs` steps of a session [hook] starting at global step `initial`, capturing the log. */
static void run_with(tw_hook *hook, int runs, int64_t initial, publisher *p) {
  tw_options *opts = NULL;
  assert_non_null(hook);
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_INITIAL_GLOBAL_STEP, initial), TW_OK);
  tw_session *s = open_session(&hook, 1, opts);
  tw_options_destroy(opts);
  assert_non_null(s);
  start_capture();
  for (int i = 0; i < runs; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publish_values, p), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  stop_capture();
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void B8_B9_every_n_local_runs_with_tf_line_format(void **state) {
  (void)state;
  publisher p = make_publisher();
  /* B8: counts local runs from 0 whatever the global step (100 here): runs 0, 3, 6 of 7 */
  run_with(logging_hook(kLossAndW, NULL, 2, 3, TW_UNSET_SECS, 0), 7, 100, &p);
  assert_int_equal(g_captured.count, 3);
  /* B9: "tag = value" in the given order; no suffix on the first line */
  assert_string_equal(g_captured.lines[0], "loss = 0.5, w = [1. 2.5 -3. 0.]");
  assert_int_equal(g_captured.levels[0], TW_LOG_INFO);
  assert_true(strncmp(g_captured.lines[1], "loss = 0.125, w = [1. 2.5 -3. 0.] (", 35) == 0); /* run 3 */
  assert_true(ends_with(g_captured.lines[1], " sec)"));
  assert_true(strncmp(g_captured.lines[2], "loss = 0.071428575, w = ", 24) == 0); /* run 6: float32 repr */
}

static void B8_secs_mode(void **state) {
  (void)state;
  publisher p = make_publisher();
  run_with(logging_hook(kLossAndW, NULL, 2, TW_UNSET, 0.0, 0), 4, 0, &p); /* 0 s: every new run */
  assert_int_equal(g_captured.count, 4);
  run_with(logging_hook(kLossAndW, NULL, 2, TW_UNSET, 1e9, 0), 4, 0, &p); /* only the first run */
  assert_int_equal(g_captured.count, 1);
}

static void B7_tag_pairs_print_sorted_by_tag(void **state) {
  (void)state;
  static const char *const names[] = {"loss", "w", "global_step"};
  static const char *const tags[] = {"z_loss", "a_weights", "m_step"};
  publisher p = make_publisher();
  run_with(logging_hook(names, tags, 3, 10, TW_UNSET_SECS, 0), 1, 42, &p);
  assert_int_equal(g_captured.count, 1);
  assert_string_equal(g_captured.lines[0], "a_weights = [1. 2.5 -3. 0.], m_step = 42, z_loss = 0.5");
}

static void B7_bad_names_and_tags(void **state) {
  (void)state;
  static const char *const pattern[] = {"grad/*"};
  static const char *const twice[] = {"loss", "w"};
  static const char *const same_tags[] = {"t", "t"};
  static const char *const empty[] = {""};
  tw_hook *hook = (tw_hook *)0x1;
  assert_null(logging_hook(pattern, NULL, 1, 1, TW_UNSET_SECS, 0));
  assert_non_null(strstr(tw_last_error_message(), "'grad/*' is a pattern"));
  assert_null(logging_hook(twice, same_tags, 2, 1, TW_UNSET_SECS, 0));
  assert_string_equal(tw_last_error_message(), "LoggingTensorHook: tag 't' is given twice");
  assert_null(logging_hook(empty, NULL, 1, 1, TW_UNSET_SECS, 0));
  assert_int_equal(tw_logging_tensor_hook_create(&hook, kLossAndW, NULL, 0, NULL, NULL, NULL, NULL),
                   TW_INVALID_ARGUMENT);
  assert_int_equal(tw_logging_tensor_hook_create(&hook, NULL, NULL, 1, NULL, NULL, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_ptr_equal(hook, (tw_hook *)0x1); /* untouched on error */
}

/* A formatter that prints "loss is <v> over <n> values" padded to `pad` characters. */
typedef struct formatter_state {
  int calls;
  int pad;
  int destroyed;
  tw_status fail;
} formatter_state;

static tw_status format_values(void *u, const tw_tensor *const *values, size_t n, char *buffer, size_t size,
                               size_t *length) {
  formatter_state *f = u;
  f->calls++;
  if (f->fail != TW_OK) return tw_set_error(f->fail, "formatter refused");
  assert_string_equal(values[0]->name, "the_loss"); /* tags, not names */
  int written =
      snprintf(buffer, size, "loss is %g over %zu values%*s", (double)*(const float *)values[0]->data, n, f->pad, "");
  *length = (size_t)written;
  return TW_OK;
}
static void formatter_destroy(void *u) { ((formatter_state *)u)->destroyed++; }

static tw_hook *formatted_hook(formatter_state *f) {
  static const char *const names[] = {"loss"};
  static const char *const tags[] = {"the_loss"};
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_logging_tensor_hook_create(&hook, names, tags, 1, opts, format_values, f, formatter_destroy),
                   TW_OK);
  tw_options_destroy(opts);
  return hook;
}

static void B9_formatter_line_is_logged_as_written(void **state) {
  (void)state;
  formatter_state f = {0, 300, 0, TW_OK}; /* longer than the first buffer: called again with room */
  publisher p = make_publisher();
  run_with(formatted_hook(&f), 2, 0, &p);
  assert_int_equal(g_captured.count, 2);
  assert_true(strncmp(g_captured.lines[0], "loss is 0.5 over 1 values", 25) == 0);
  assert_true(ends_with(g_captured.lines[0], "   ")); /* the formatter's padding, nothing after it */
  assert_true(strncmp(g_captured.lines[1], "loss is 0.25 over 1 values", 26) == 0);
  assert_true(ends_with(g_captured.lines[1], "   ")); /* no " (x sec)" suffix with a formatter, as TF */
  assert_int_equal(f.calls, 4);
  assert_int_equal(f.destroyed, 1);
}

static void formatter_failure_fails_the_run(void **state) {
  (void)state;
  formatter_state f = {0, 0, 0, TW_UNAVAILABLE};
  publisher p = make_publisher();
  tw_hook *hook = formatted_hook(&f);
  tw_session *s = NULL;
  assert_int_equal(tw_singular_monitored_session_create(&s, NULL, &hook, 1), TW_OK);
  tw_hook_destroy(hook);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_UNAVAILABLE);
  assert_string_equal(tw_last_error_message(), "LoggingTensorHook formatter: formatter refused");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(f.destroyed, 1);
}

static void B10_at_end_logs_the_last_values(void **state) {
  (void)state;
  publisher p = make_publisher();
  run_with(logging_hook(kLossAndW, NULL, 2, TW_UNSET, TW_UNSET_SECS, 1), 3, 0, &p);
  assert_int_equal(g_captured.count, 1);                                              /* nothing during the runs */
  assert_string_equal(g_captured.lines[0], "loss = 0.16666667, w = [1. 2.5 -3. 0.]"); /* run 2's loss */
  /* with a period as well: lines during the run, then the last values with a suffix */
  run_with(logging_hook(kLossAndW, NULL, 2, 10, TW_UNSET_SECS, 1), 2, 0, &p);
  assert_int_equal(g_captured.count, 2);
  assert_true(strncmp(g_captured.lines[1], "loss = 0.1, w = [1. 2.5 -3. 0.] (", 33) == 0); /* run 4 (p goes on) */
}

static tw_status failing_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return tw_set_error(TW_INTERNAL, "boom");
}

static void B10_at_end_skipped_after_a_failed_run(void **state) {
  (void)state;
  publisher p = make_publisher();
  tw_hook *hook = logging_hook(kLossAndW, NULL, 2, TW_UNSET, TW_UNSET_SECS, 1);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, failing_step, &p), TW_INTERNAL);
  start_capture();
  assert_int_equal(tw_session_close(s), TW_OK);
  stop_capture();
  assert_int_equal(count_lines_starting("loss ="), 0);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void B8_missing_name_fails_the_triggering_run(void **state) {
  (void)state;
  static const char *const names[] = {"not_published"};
  publisher p = make_publisher();
  tw_hook *hook = logging_hook(names, NULL, 1, 2, TW_UNSET_SECS, 0);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_NOT_FOUND);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* ---- values of every dtype and shape ---- */

typedef struct typed_values {
  int32_t matrix[2][3];
  uint8_t flags[2];
  uint16_t half; /* float16 0.1 */
  double tiny, huge, whole;
  int64_t big;
  float large[100];
  float column[3][2]; /* viewed transposed through strides */
} typed_values;

static tw_status publish_typed(void *u, tw_step_context *ctx) {
  static const int64_t shape23[2] = {2, 3}, shape2[1] = {2}, shape100[1] = {100}, shape_t[2] = {2, 3},
                       strides_t[2] = {1, 2};
  typed_values *v = u;
  tw_tensor t = TW_TENSOR_INIT;
  tw_status st;
#define PUBLISH(NAME, DTYPE, DATA, NDIM, SHAPE, STRIDES)                                              \
  t.name = NAME, t.dtype = DTYPE, t.data = DATA, t.ndim = NDIM, t.shape = SHAPE, t.strides = STRIDES; \
  if ((st = tw_step_context_publish(ctx, &t)) != TW_OK) return st;
  PUBLISH("matrix", TW_INT32, v->matrix, 2, shape23, NULL);
  PUBLISH("flags", TW_BOOL, v->flags, 1, shape2, NULL);
  PUBLISH("half", TW_FLOAT16, &v->half, 0, NULL, NULL);
  PUBLISH("tiny", TW_FLOAT64, &v->tiny, 0, NULL, NULL);
  PUBLISH("huge", TW_FLOAT64, &v->huge, 0, NULL, NULL);
  PUBLISH("whole", TW_FLOAT64, &v->whole, 0, NULL, NULL);
  PUBLISH("big", TW_INT64, &v->big, 0, NULL, NULL);
  PUBLISH("large", TW_FLOAT32, v->large, 1, shape100, NULL);
  PUBLISH("transposed", TW_FLOAT32, v->column, 2, shape_t, strides_t);
#undef PUBLISH
  return TW_OK;
}

static void values_of_every_dtype_print_numpy_style(void **state) {
  (void)state;
  static const char *const names[] = {"matrix", "flags", "half", "tiny", "huge", "whole", "big", "large", "transposed"};
  typed_values v = {{{1, -2, 3}, {4, 5, 6}}, {1, 0}, 0x2E66, 1e-5, 1e20, 3.0, INT64_MAX, {0}, {{1, 2}, {3, 4}, {5, 6}}};
  for (int i = 0; i < 100; ++i) v.large[i] = (float)i;
  v.large[7] = NAN;
  v.large[8] = -INFINITY;
  tw_hook *hook = logging_hook(names, NULL, 9, 1, TW_UNSET_SECS, 0);
  tw_session *s = open_session(&hook, 1, NULL);
  start_capture();
  assert_int_equal(tw_session_run(s, NULL, 0, publish_typed, &v), TW_OK);
  stop_capture();
  assert_int_equal(g_captured.count, 1);
  assert_string_equal(g_captured.lines[0],
                      "matrix = [[1 -2 3] [4 5 6]], flags = [True False], half = 0.1, tiny = 1e-05, huge = 1e+20, "
                      "whole = 3.0, big = 9223372036854775807, "
                      "large = <float32 (100,) min=0 max=99 mean=50.3571 nan=1 +inf=0 -inf=1>, "
                      "transposed = [[1. 3. 5.] [2. 4. 6.]]");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B6_valid_and_invalid_configurations),
      cmocka_unit_test(B8_B9_every_n_local_runs_with_tf_line_format),
      cmocka_unit_test(B8_secs_mode),
      cmocka_unit_test(B7_tag_pairs_print_sorted_by_tag),
      cmocka_unit_test(B7_bad_names_and_tags),
      cmocka_unit_test(B9_formatter_line_is_logged_as_written),
      cmocka_unit_test(formatter_failure_fails_the_run),
      cmocka_unit_test(B10_at_end_logs_the_last_values),
      cmocka_unit_test(B10_at_end_skipped_after_a_failed_run),
      cmocka_unit_test(B8_missing_name_fails_the_triggering_run),
      cmocka_unit_test(values_of_every_dtype_print_numpy_style),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
