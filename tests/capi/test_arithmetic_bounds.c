/* Arithmetic and bounds, against the public header: global steps at the int64
 * limits through every step-driven hook (no overflow, which the UBSan build turns into a failure),
 * StopAtStepHook(num_steps=INT64_MAX) (B13: its target saturates instead of wrapping into the past),
 * option keys outside the enum, the tensor rank limit and stride spans, and TF's meaning of
 * save_checkpoint_steps = 0 for CheckpointSaverHook (B18: SecondOrStepTimer(every_steps=0)). */
#include "scratch_dir.h" /* first: it selects the POSIX feature level */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <trainwatch.h>
#include "../hooks/period_options.h"

static float g_loss = 0.5f;

static tw_status publish_loss(void *user_data, tw_step_context *ctx) {
  (void)user_data;
  tw_tensor loss = TW_TENSOR_INIT;
  loss.dtype = TW_FLOAT32;
  loss.name = "loss";
  loss.data = &g_loss;
  return tw_step_context_publish(ctx, &loss);
}

static int64_t global_step(const tw_session *s) {
  int64_t step = 0;
  step = tw_session_global_step(s);
  return step;
}

/* Runs until should_stop, at most `limit` runs; returns the runs made. */
static int train(tw_session *s, int limit) {
  int runs = 0;
  while (!tw_session_should_stop(s) && runs < limit) {
    assert_int_equal(tw_session_run(s, NULL, 0, publish_loss, NULL), TW_OK);
    ++runs;
  }
  return runs;
}

/* A chief MonitoredTrainingSession saving checkpoints, summaries, step rates and timelines every step,
 * with NaN checks and a StopAtStepHook of `num_steps`, starting at `initial`. */
static tw_session *open_every_step(const scratch_dir *dir, int64_t initial, int64_t num_steps) {
  static float w[4];
  int64_t shape[1] = {4};
  tw_tensor variable = TW_TENSOR_INIT;
  variable.dtype = TW_FLOAT32, variable.name = "w", variable.ndim = 1, variable.shape = shape, variable.data = w;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_INITIAL_GLOBAL_STEP, initial), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, dir->path), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, 0), TW_OK);
  assert_int_equal(tw_options_add_variable(opts, &variable), TW_OK);
  tw_hook *hooks[3];
  assert_int_equal(tw_stop_at_step_hook_create(&hooks[0], num_steps, TW_UNSET), TW_OK);
  assert_int_equal(tw_nan_tensor_hook_create(&hooks[1], "loss", 1), TW_OK);
  assert_int_equal(profiler_hook(&hooks[2], 1, -1.0, dir->path), TW_OK);
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_training_session_create(&s, opts, hooks, 3, NULL, 0), TW_OK);
  for (int i = 0; i < 3; ++i) tw_hook_destroy(hooks[i]);
  tw_options_destroy(opts);
  return s;
}

/* B13 with a target past INT64_MAX: it saturates, so training reaches INT64_MAX and stops there (it
 * used to wrap to a negative target and stop after one run). The global step then saturates too. */
static void B13_num_steps_int64_max_saturates_the_target(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  tw_session *s = open_every_step(&dir, INT64_MAX - 2, INT64_MAX);
  assert_int_equal(train(s, 10), 2);
  assert_int_equal(global_step(s), INT64_MAX);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  /* The newest checkpoint carries the largest step in its name. */
  char latest[1024];
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), dir.path), TW_OK);
  assert_non_null(strstr(latest, "model.ckpt-9223372036854775807"));
  scratch_dir_destroy(&dir);

  /* From step 0, num_steps = INT64_MAX does not stop early. */
  assert_int_equal(scratch_dir_create(&dir), 0);
  s = open_every_step(&dir, 0, INT64_MAX);
  assert_int_equal(train(s, 5), 5);
  assert_false(tw_session_should_stop(s));
  assert_int_equal(global_step(s), 5);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&dir);
}

/* The automatic increment saturates at INT64_MAX (documented at TW_OPT_AUTO_INCREMENT_GLOBAL_STEP), from
 * the initial step and from tw_session_set_global_step; the lowest step counts up without trouble. */
static void global_step_increment_saturates_at_int64_max(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  tw_session *s = open_every_step(&dir, INT64_MAX, 100);
  assert_int_equal(train(s, 3), 1); /* already at the (saturated) target: one run, then stop */
  assert_int_equal(global_step(s), INT64_MAX);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&dir);

  assert_int_equal(scratch_dir_create(&dir), 0);
  s = open_every_step(&dir, INT64_MIN + 1, 3);
  assert_int_equal(train(s, 10), 3);
  assert_int_equal(global_step(s), INT64_MIN + 4);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&dir);

  tw_session *plain = NULL;
  assert_int_equal(tw_monitored_session_create(&plain, NULL, NULL, 0), TW_OK);
  assert_int_equal(tw_session_set_global_step(plain, INT64_MAX), TW_OK);
  assert_int_equal(tw_session_run(plain, NULL, 0, publish_loss, NULL), TW_OK);
  assert_int_equal(tw_session_run(plain, NULL, 0, publish_loss, NULL), TW_OK);
  assert_int_equal(global_step(plain), INT64_MAX);
  assert_int_equal(tw_session_destroy(plain), TW_OK);
}

/* Keys outside the enum's values (negative ones included, which C++ cannot hold in a tw_option) are
 * rejected by every function taking a key, naming the key. */
static void option_keys_outside_the_enum_are_invalid_arguments(void **state) {
  (void)state;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  const int keys[] = {-1, INT32_MIN, 0, 50, 99, 9999, INT32_MAX};
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); ++i) {
    const tw_option key = (tw_option)keys[i];
    char expected[64];
    snprintf(expected, sizeof(expected), "unknown option key %d", keys[i]);
    int64_t i64 = 7;
    double f64 = 7;
    const char *str = "x";
    tw_option_state option_state = TW_OPTION_DEFAULT;
    const tw_status statuses[] = {
        tw_options_set_int64(opts, key, 1),
        tw_options_set_double(opts, key, 1.0),
        tw_options_set_string(opts, key, "x"),
        tw_options_set_none(opts, key),
        tw_options_get_state(&option_state, opts, key),
        tw_options_get_int64(&i64, opts, key),
        tw_options_get_double(&f64, opts, key),
        tw_options_get_string(&str, opts, key),
    };
    for (size_t k = 0; k < sizeof(statuses) / sizeof(statuses[0]); ++k)
      assert_int_equal(statuses[k], TW_INVALID_ARGUMENT);
    assert_non_null(strstr(tw_last_error_message(), expected));
    assert_int_equal(i64, 7); /* out-params untouched */
    assert_string_equal(str, "x");
  }
  tw_options_destroy(opts);
}

/* The other enum arguments, given a negative value, are read as the int they are (no invalid enum load,
 * which the UBSan build would report): an invalid dtype and an invalid session log status. */
static void negative_enum_arguments_are_rejected(void **state) {
  (void)state;
  assert_int_equal(tw_dtype_size((tw_dtype)-1), 0);
  assert_string_equal(tw_dtype_name((tw_dtype)INT32_MIN), "invalid");
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  tw_summary_writer *writer = NULL;
  assert_int_equal(tw_summary_writer_open(&writer, dir.path), TW_OK);
  assert_int_equal(tw_summary_writer_add_session_log(writer, 1, (tw_session_log_status)-1, NULL, NULL),
                   TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "status -1 is not a tw_session_log_status"));
  assert_int_equal(tw_summary_writer_close(writer), TW_OK);
  tw_summary_writer_destroy(writer);
  scratch_dir_destroy(&dir);
}

/* TW_MAX_RANK dimensions are accepted, one more is not; a stride whose reach (stride x (extent - 1),
 * summed, times the element size) overflows int64 is rejected, as is an element count whose bytes do. */
static void tensor_rank_limit_and_stride_overflow(void **state) {
  (void)state;
  int64_t ones[TW_MAX_RANK + 1];
  for (int i = 0; i <= TW_MAX_RANK; ++i) ones[i] = 1;
  float value = 1.0f;
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32, t.name = "t", t.data = &value, t.shape = ones;
  t.ndim = TW_MAX_RANK;
  assert_int_equal(tw_tensor_element_count(&t), 1);
  t.ndim = TW_MAX_RANK + 1;
  assert_int_equal(tw_tensor_element_count(&t), -1);
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_add_variable(opts, &t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "more than TW_MAX_RANK (64)"));

  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {3, 1};
  float data[6] = {0};
  t.ndim = 2, t.shape = shape, t.strides = strides, t.data = data;
  assert_int_equal(tw_tensor_element_count(&t), 6);
  const int64_t bad_strides[][2] = {
      {INT64_MAX, 1}, {INT64_MIN, 1}, {INT64_MAX / 4 + 1, 1}, {INT64_MAX / 8, INT64_MAX / 8}};
  for (size_t i = 0; i < sizeof(bad_strides) / sizeof(bad_strides[0]); ++i) {
    strides[0] = bad_strides[i][0], strides[1] = bad_strides[i][1];
    assert_int_equal(tw_tensor_element_count(&t), -1);
    assert_int_equal(tw_options_add_variable(opts, &t), TW_INVALID_ARGUMENT);
    assert_non_null(strstr(tw_last_error_message(), "overflow int64"));
  }
  strides[0] = -3, strides[1] = -1; /* negative strides of a sane size stay valid views */
  assert_int_equal(tw_tensor_element_count(&t), 6);
  int64_t huge[1] = {INT64_MAX / 4 + 1};
  t.ndim = 1, t.shape = huge, t.strides = NULL;
  assert_int_equal(tw_tensor_element_count(&t), -1);
  tw_options_destroy(opts);
}

/* B18/T2: TF's CheckpointSaverHook(save_steps=0) builds SecondOrStepTimer(every_steps=0), which fires
 * on every step after the last one saved (MonitoredTrainingSession with 0 adds no hook at all:
 * T2_checkpoint_frequency_resolution). */
static void checkpoint_saver_hook_with_zero_steps_saves_every_run(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  static float w[2];
  int64_t shape[1] = {2};
  tw_tensor variable = TW_TENSOR_INIT;
  variable.dtype = TW_FLOAT32, variable.name = "w", variable.ndim = 1, variable.shape = shape, variable.data = w;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_MAX_TO_KEEP, 0), TW_OK); /* keep every file */
  assert_int_equal(tw_options_add_variable(opts, &variable), TW_OK);
  tw_hook *hook = NULL;
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, dir.path, opts, NULL, 0), TW_OK);
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_session_create(&s, opts, &hook, 1), TW_OK);
  tw_hook_destroy(hook);
  assert_int_equal(train(s, 3), 3);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
  /* model.ckpt-0 (session creation), -1, -2 and -3 (every run) */
  assert_int_equal(scratch_dir_count_entries(&dir, "model.ckpt-"), 4);
  scratch_dir_destroy(&dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B13_num_steps_int64_max_saturates_the_target),
      cmocka_unit_test(global_step_increment_saturates_at_int64_max),
      cmocka_unit_test(option_keys_outside_the_enum_are_invalid_arguments),
      cmocka_unit_test(negative_enum_arguments_are_rejected),
      cmocka_unit_test(tensor_rank_limit_and_stride_overflow),
      cmocka_unit_test(checkpoint_saver_hook_with_zero_steps_saves_every_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
