/* Bad input to every hook constructor of trainwatch/hooks.h added with the periodic hooks: one row
 * each, the status it must return, and *out left untouched. Against the public header only. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>
#include "period_options.h"

static const char *const kNames[] = {"loss"};
static const char *const kNullName[] = {NULL};
static const char *const kEmptyName[] = {""};
static const char *const kTwoNames[] = {"loss", "loss"};
static const char *const kNullTag[] = {"x", NULL};

static tw_status feed(void *u, const tw_tensor **f, size_t *n) {
  (void)u;
  *f = NULL;
  *n = 0;
  return TW_OK;
}
static tw_status step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

static tw_options *opts_with(tw_option key, int64_t value) {
  tw_options *opts = NULL;
  if (tw_options_create(&opts) != TW_OK || tw_options_set_int64(opts, key, value) != TW_OK) return NULL;
  return opts;
}

typedef tw_status (*row_fn)(tw_hook **out);

#define ROW(NAME, ...) \
  static tw_status NAME(tw_hook **out) { __VA_ARGS__ }

ROW(logging_null_names, return tw_logging_tensor_hook_create(out, NULL, NULL, 1, NULL, NULL, NULL, NULL);)
ROW(logging_zero_names, return tw_logging_tensor_hook_create(out, kNames, NULL, 0, NULL, NULL, NULL, NULL);)
ROW(logging_null_entry, tw_options *o = opts_with(TW_OPT_EVERY_N_STEPS, 1);
    tw_status st = tw_logging_tensor_hook_create(out, kNullName, NULL, 1, o, NULL, NULL, NULL); tw_options_destroy(o);
    return st;)
ROW(logging_empty_entry, tw_options *o = opts_with(TW_OPT_EVERY_N_STEPS, 1);
    tw_status st = tw_logging_tensor_hook_create(out, kEmptyName, NULL, 1, o, NULL, NULL, NULL); tw_options_destroy(o);
    return st;)
ROW(logging_null_tag, tw_options *o = opts_with(TW_OPT_EVERY_N_STEPS, 1);
    tw_status st = tw_logging_tensor_hook_create(out, kTwoNames, kNullTag, 2, o, NULL, NULL, NULL);
    tw_options_destroy(o); return st;)
ROW(logging_no_period, return tw_logging_tensor_hook_create(out, kNames, NULL, 1, NULL, NULL, NULL, NULL);)
ROW(logging_negative_iter, tw_options *o = opts_with(TW_OPT_EVERY_N_STEPS, -1);
    tw_status st = tw_logging_tensor_hook_create(out, kNames, NULL, 1, o, NULL, NULL, NULL); tw_options_destroy(o);
    return st;)
ROW(logging_null_out, (void)out; return tw_logging_tensor_hook_create(NULL, kNames, NULL, 1, NULL, NULL, NULL, NULL);)
ROW(step_counter_neither, return step_counter_hook(out, TW_UNSET, TW_UNSET_SECS, NULL, NULL);)
ROW(step_counter_both, return step_counter_hook(out, 1, 1.0, NULL, NULL);)
ROW(step_counter_nan_secs_and_steps, return step_counter_hook(out, TW_UNSET, -5.0, "x", NULL);)
ROW(saver_no_output, tw_options *o = opts_with(TW_OPT_EVERY_N_STEPS, 5);
    tw_status st = tw_summary_saver_hook_create(out, kNames, 1, o, NULL); tw_options_destroy(o); return st;)
ROW(saver_null_names, return tw_summary_saver_hook_create(out, NULL, 3, NULL, NULL);)
ROW(saver_empty_name, return tw_summary_saver_hook_create(out, kEmptyName, 1, NULL, NULL);)
ROW(saver_no_period, return tw_summary_saver_hook_create(out, kNames, 1, NULL, NULL);)
ROW(feed_null_fn, return tw_feed_fn_hook_create(out, NULL, NULL, NULL);)
ROW(feed_null_out, (void)out; return tw_feed_fn_hook_create(NULL, feed, NULL, NULL);)
ROW(final_null_step, return tw_final_ops_hook_create(out, NULL, 0, NULL, NULL, NULL);)
ROW(final_null_feeds, return tw_final_ops_hook_create(out, NULL, 2, step, NULL, NULL);)
ROW(final_unnamed_feed, float v = 0; tw_tensor f = TW_TENSOR_INIT; f.dtype = TW_FLOAT32; f.data = &v;
    return tw_final_ops_hook_create(out, &f, 1, step, NULL, NULL);)
ROW(final_bad_dtype_feed, float v = 0; tw_tensor f = TW_TENSOR_INIT; f.name = "x"; f.dtype = 99; f.data = &v;
    return tw_final_ops_hook_create(out, &f, 1, step, NULL, NULL);)
ROW(final_repeated_feed, float v = 0; tw_tensor f[2] = {TW_TENSOR_INIT, TW_TENSOR_INIT}; f[0].name = f[1].name = "x";
    f[0].dtype = f[1].dtype = TW_FLOAT32; f[0].data = f[1].data = &v;
    return tw_final_ops_hook_create(out, f, 2, step, NULL, NULL);)
ROW(waiter_null_out, (void)out; return tw_global_step_waiter_hook_create(NULL, 5, NULL, NULL, NULL, NULL);)
ROW(profiler_both, return profiler_hook(out, 5, 5.0, NULL);)
ROW(profiler_neither, return profiler_hook(out, TW_UNSET, -1.0, NULL);)

typedef struct bad_row {
  const char *name;
  row_fn fn;
  tw_status expected;
} bad_row;

#define R(fn, status) \
  { #fn, fn, status }
static const bad_row kRows[] = {
    R(logging_null_names, TW_INVALID_ARGUMENT),
    R(logging_zero_names, TW_INVALID_ARGUMENT),
    R(logging_null_entry, TW_INVALID_ARGUMENT),
    R(logging_empty_entry, TW_INVALID_ARGUMENT),
    R(logging_null_tag, TW_INVALID_ARGUMENT),
    R(logging_no_period, TW_INVALID_ARGUMENT),
    R(logging_negative_iter, TW_INVALID_ARGUMENT),
    R(logging_null_out, TW_INVALID_ARGUMENT),
    R(step_counter_neither, TW_INVALID_ARGUMENT),
    R(step_counter_both, TW_INVALID_ARGUMENT),
    R(step_counter_nan_secs_and_steps, TW_INVALID_ARGUMENT),
    R(saver_no_output, TW_INVALID_ARGUMENT),
    R(saver_null_names, TW_INVALID_ARGUMENT),
    R(saver_empty_name, TW_INVALID_ARGUMENT),
    R(saver_no_period, TW_INVALID_ARGUMENT),
    R(feed_null_fn, TW_INVALID_ARGUMENT),
    R(feed_null_out, TW_INVALID_ARGUMENT),
    R(final_null_step, TW_INVALID_ARGUMENT),
    R(final_null_feeds, TW_INVALID_ARGUMENT),
    R(final_unnamed_feed, TW_INVALID_ARGUMENT),
    R(final_bad_dtype_feed, TW_INVALID_ARGUMENT),
    R(final_repeated_feed, TW_INVALID_ARGUMENT),
    R(waiter_null_out, TW_INVALID_ARGUMENT),
    R(profiler_both, TW_INVALID_ARGUMENT),
    R(profiler_neither, TW_INVALID_ARGUMENT),
};

static void every_bad_row_is_rejected(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kRows) / sizeof(kRows[0]); ++i) {
    tw_hook *out = (tw_hook *)0x1;
    const tw_status st = kRows[i].fn(&out);
    if (st != kRows[i].expected || out != (tw_hook *)0x1 || tw_last_error_message()[0] == '\0') {
      fail_msg("row %s: got %s (%s), out %p", kRows[i].name, tw_status_name(st), tw_last_error_message(), (void *)out);
    }
  }
}

static void option_values_out_of_range(void **state) {
  (void)state;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_LOG_AT_END, 2), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_LOG_MAX_ELEMENTS, -1), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_HISTOGRAMS, -1), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_WAIT_POLL_SECS, -0.5), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_EVERY_N_STEPS, 1.0), TW_INVALID_ARGUMENT); /* wrong type */
  assert_int_equal(tw_options_set_double(opts, TW_OPT_EVERY_N_SECS, -1.0), TW_OK);               /* unset */
  assert_int_equal(tw_options_set_string(opts, TW_OPT_EVERY_N_SECS, "x"), TW_INVALID_ARGUMENT);
  double secs = 0;
  int64_t steps = 0;
  assert_int_equal(tw_options_get_double(&secs, opts, TW_OPT_WAIT_MAX_SECS), TW_OK);
  assert_true(secs < 0); /* forever by default, as TF */
  assert_int_equal(tw_options_get_int64(&steps, opts, TW_OPT_EVERY_N_STEPS), TW_OK);
  assert_true(steps == TW_UNSET);
  tw_options_destroy(opts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_bad_row_is_rejected),
      cmocka_unit_test(option_values_out_of_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
