/* TF's protected methods that subclasses override, as C extension points: LoggingTensorHook.
 * _log_tensors (B9), StepCounterHook._log_and_record (B28), CheckpointSaverHook._save (B22, B24), each
 * with its built-in callable from inside the override (super()._x). Against the public header only. */
#define TW_EXPERIMENTAL_API /* the hook extension points (trainwatch/common.h, "Experimental API") */
#define _DEFAULT_SOURCE     /* scandir */
#include "scratch_dir.h"    /* first after the feature macros: it selects the POSIX feature level */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "hook_test_util.h"
#include "period_options.h"

/* What an override saw, and whether it calls the built-in. */
typedef struct override_log {
  int calls;
  int call_default; /* 1: always; 2: on even calls (0, 2, …) only */
  int64_t steps[8]; /* elapsed_steps / save step, per call */
  int64_t global_steps[8];
  char tags[8][32];
  float values[8];
  int stop_at_step; /* save: request stop from this step on (0: never) */
  tw_status default_status;
  int destroyed;
} override_log;

static int wants_default(const override_log *o) {
  return o->call_default == 1 || (o->call_default == 2 && o->calls % 2 == 0);
}

static void override_destroy(void *u) { ((override_log *)u)->destroyed++; }

/* ---- LoggingTensorHook._log_tensors ---- */

static tw_status my_log_tensors(void *u, tw_hook *hook, const tw_tensor *const *values, size_t n_values) {
  override_log *o = u;
  if (o->calls < 8 && n_values == 1) {
    snprintf(o->tags[o->calls], sizeof(o->tags[0]), "%s", values[0]->name);
    o->values[o->calls] = *(const float *)values[0]->data;
  }
  if (wants_default(o)) o->default_status = tw_logging_tensor_hook_log_tensors(hook, values, n_values);
  o->calls++;
  return o->default_status;
}

static tw_hook *logging_hook_every(int64_t n) {
  static const char *const names[] = {"loss"};
  static const char *const tags[] = {"my_loss"};
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, n), TW_OK);
  assert_int_equal(tw_logging_tensor_hook_create(&hook, names, tags, 1, opts, NULL, NULL, NULL), TW_OK);
  tw_options_destroy(opts);
  return hook;
}

/* B9 via super(): the override sees the values under their tags; calling the built-in logs TF's line
 * and moves the timer, so with every_n_iter=2 the override runs on runs 0 and 2 of four. */
static void test_log_tensors_override_calling_the_builtin_B9(void **state) {
  (void)state;
  override_log o;
  memset(&o, 0, sizeof(o));
  o.call_default = 1;
  tw_hook_callbacks nothing;
  tw_hook *inner = logging_hook_every(2), *hook = NULL;
  memset(&nothing, 0, sizeof(nothing));
  nothing.struct_size = sizeof(nothing);
  assert_int_equal(tw_logging_tensor_hook_set_log_fn(inner, my_log_tensors, &o, override_destroy), TW_OK);
  /* A subclass overriding _log_tensors only: the wrapper passes every callback through. */
  assert_int_equal(tw_hook_wrap(&hook, "MyLoggingHook", inner, &nothing, NULL), TW_OK);
  publisher p = make_publisher();
  tw_session *s = open_session(&hook, 1, NULL);
  assert_non_null(s);
  /* The inner is in the session through its wrapper: too late to change its function. */
  assert_int_equal(tw_logging_tensor_hook_set_log_fn(inner, NULL, NULL, NULL), TW_FAILED_PRECONDITION);
  start_capture();
  for (int i = 0; i < 4; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  stop_capture();
  tw_hook_destroy(inner);
  assert_int_equal(o.calls, 2);
  assert_string_equal(o.tags[0], "my_loss");
  assert_true(o.values[0] == p.loss[0] && o.values[1] == p.loss[2]);
  assert_int_equal(count_lines_starting("my_loss = 0.5"), 1);
  assert_int_equal(count_lines_starting("my_loss = "), 2);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(o.destroyed, 1);
}

/* TF's quirk kept: an override that never calls the built-in never moves the timer, so it runs on
 * every run, and nothing is logged by the hook. */
static void test_log_tensors_override_alone_replaces_the_line_B9(void **state) {
  (void)state;
  override_log o;
  memset(&o, 0, sizeof(o));
  tw_hook *hook = logging_hook_every(2);
  assert_int_equal(tw_logging_tensor_hook_set_log_fn(hook, my_log_tensors, &o, override_destroy), TW_OK);
  publisher p = make_publisher();
  tw_session *s = open_session(&hook, 1, NULL);
  assert_non_null(s);
  start_capture();
  for (int i = 0; i < 4; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  stop_capture();
  assert_int_equal(o.calls, 4);
  assert_int_equal(count_lines_starting("my_loss"), 0);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* ---- StepCounterHook._log_and_record ---- */

static tw_status my_log_and_record(void *u, tw_hook *hook, int64_t elapsed_steps, double elapsed_time,
                                   int64_t global_step) {
  override_log *o = u;
  if (o->calls < 8) {
    o->steps[o->calls] = elapsed_steps;
    o->global_steps[o->calls] = global_step;
  }
  if (elapsed_time <= 0) return TW_INTERNAL;
  if (wants_default(o))
    o->default_status = tw_step_counter_hook_log_and_record(hook, elapsed_steps, elapsed_time, global_step);
  o->calls++;
  return o->default_status;
}

/* B28: the first trigger primes the timer; every later one calls _log_and_record(1, t, step after the
 * run). The built-in, called on calls 0 and 2, writes "global_step/sec" twice. */
static void test_log_and_record_override_B28(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[512];
  read_value values[16];
  override_log o;
  tw_hook *hook = NULL;
  memset(&o, 0, sizeof(o));
  o.call_default = 2;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  assert_int_equal(step_counter_hook(&hook, 1, TW_UNSET_SECS, dir, NULL), TW_OK);
  assert_int_equal(tw_step_counter_hook_set_record_fn(hook, my_log_and_record, &o, override_destroy), TW_OK);
  publisher p = make_publisher();
  tw_session *s = open_session(&hook, 1, NULL);
  assert_non_null(s);
  for (int i = 0; i < 4; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(o.calls, 3);
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(o.steps[i], 1);
    assert_int_equal(o.global_steps[i], i + 2);
  }
  assert_int_equal(o.destroyed, 1);
  assert_true(find_event_file(dir, 0, path, sizeof(path)));
  const int n = read_events(path, values, 16);
  int rates = 0;
  for (int i = 0; i < n; ++i) rates += strcmp(values[i].tag, "global_step/sec") == 0;
  assert_int_equal(rates, 2);
  scratch_dir_destroy(&scratch);
}

/* ---- CheckpointSaverHook._save ---- */

static scratch_dir g_scratch; /* tests/common/scratch_dir.h */

static int checkpoint_exists(int64_t step) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof(path), "%s/model.ckpt-%lld", g_scratch.path, (long long)step);
  return stat(path, &st) == 0;
}

static tw_status my_save(void *u, tw_hook *hook, tw_session *session, int64_t step, int *stop) {
  override_log *o = u;
  int listeners_stop = 0;
  if (o->calls < 8) o->steps[o->calls] = step;
  if (wants_default(o)) o->default_status = tw_checkpoint_saver_hook_save(&listeners_stop, hook, session, step);
  o->calls++;
  *stop = o->stop_at_step > 0 && step >= o->stop_at_step;
  return o->default_status;
}

static tw_hook *sync_saver_every_step(void) {
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, 0), TW_OK);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, g_scratch.path, opts, NULL, 0), TW_OK);
  tw_options_destroy(opts);
  return hook;
}

/* B21/B22/B24: _save runs at creation and on every trigger; the built-in, called on even calls only,
 * writes those checkpoints only; a true return requests stop in that very run (TF's request_stop). */
static void test_save_override_stops_in_that_run_B22_B24(void **state) {
  (void)state;
  override_log o;
  memset(&o, 0, sizeof(o));
  o.call_default = 2;
  o.stop_at_step = 2;
  assert_int_equal(scratch_dir_create(&g_scratch), 0);
  tw_hook *hook = sync_saver_every_step();
  assert_int_equal(tw_checkpoint_saver_hook_set_save_fn(hook, my_save, &o, override_destroy), TW_OK);
  publisher p = make_publisher();
  tw_session *s = open_session(&hook, 1, NULL);
  assert_non_null(s);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_false(tw_session_should_stop(s));
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_true(tw_session_should_stop(s));
  assert_int_equal(tw_session_close(s), TW_OK); /* B23: step 2 was handed to _save: no final save */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(o.calls, 3);
  assert_int_equal(o.steps[0], 0);
  assert_int_equal(o.steps[1], 1);
  assert_int_equal(o.steps[2], 2);
  assert_int_equal(o.default_status, TW_OK);
  assert_true(checkpoint_exists(0) && checkpoint_exists(2));
  assert_false(checkpoint_exists(1));
  assert_int_equal(o.destroyed, 1);
  scratch_dir_destroy(&g_scratch);
}

/* ---- rules shared by the three ---- */

static void test_extension_points_reject_misuse(void **state) {
  (void)state;
  override_log o;
  tw_hook *logging = logging_hook_every(1), *nan = NULL, *counter = NULL;
  tw_tensor value = TW_TENSOR_INIT;
  int stop = 0;
  memset(&o, 0, sizeof(o));
  assert_int_equal(scratch_dir_create(&g_scratch), 0);
  tw_hook *saver = sync_saver_every_step();
  assert_int_equal(tw_nan_tensor_hook_create(&nan, "loss", 1), TW_OK);
  assert_int_equal(step_counter_hook(&counter, 1, TW_UNSET_SECS, NULL, NULL), TW_OK);
  /* Wrong kind, NULL. */
  assert_int_equal(tw_logging_tensor_hook_set_log_fn(nan, my_log_tensors, &o, NULL), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "hook 'NanTensorHook' is not a LoggingTensorHook"));
  assert_int_equal(tw_step_counter_hook_set_record_fn(logging, my_log_and_record, &o, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_checkpoint_saver_hook_set_save_fn(counter, my_save, &o, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_checkpoint_saver_hook_set_save_fn(NULL, my_save, &o, NULL), TW_INVALID_ARGUMENT);
  /* The built-ins outside their override. */
  value.name = "loss";
  value.dtype = TW_FLOAT32;
  value.data = &o.values[0];
  const tw_tensor *value_list[] = {&value};
  assert_int_equal(tw_logging_tensor_hook_log_tensors(logging, value_list, 1), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_step_counter_hook_log_and_record(counter, 1, 1.0, 1), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_checkpoint_saver_hook_save(&stop, saver, NULL, 1), TW_INVALID_ARGUMENT);
  /* Replacing destroys the previous user_data; NULL restores the built-in. */
  assert_int_equal(tw_logging_tensor_hook_set_log_fn(logging, my_log_tensors, &o, override_destroy), TW_OK);
  assert_int_equal(tw_logging_tensor_hook_set_log_fn(logging, NULL, NULL, NULL), TW_OK);
  assert_int_equal(o.destroyed, 1);
  /* Not once the hook is in an open session. */
  tw_session *s = open_session(&logging, 1, NULL);
  assert_non_null(s);
  tw_hook *in_session = NULL;
  assert_int_equal(tw_session_hook_at(&in_session, s, 0), TW_OK);
  assert_int_equal(tw_logging_tensor_hook_set_log_fn(in_session, my_log_tensors, &o, NULL), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "belongs to an open session"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(nan);
  tw_hook_destroy(counter);
  tw_hook_destroy(saver);
  scratch_dir_destroy(&g_scratch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_log_tensors_override_calling_the_builtin_B9),
      cmocka_unit_test(test_log_tensors_override_alone_replaces_the_line_B9),
      cmocka_unit_test(test_log_and_record_override_B28),
      cmocka_unit_test(test_save_override_stops_in_that_run_B22_B24),
      cmocka_unit_test(test_extension_points_reject_misuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
