/* MonitoredTrainingSession: TF's T1–T11 — argument resolution, the chief's default hooks in TF's order,
 * nothing extra for workers, recovery, the files it writes and what its summaries hold. Against the
 * public header only. */
#include "scratch_dir.h" /* first: it selects the POSIX feature level */

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "recorder.h"

static scratch_dir g_scratch; /* each test's directory (tests/common/scratch_dir.h) */
static event_log g_log;

static int setup_dir(void **state) {
  (void)state;
  tw_set_log_level(TW_LOG_WARNING); /* keep INFO lines of the default hooks out of the output */
  return scratch_dir_create(&g_scratch);
}
static int remove_dir(void **state) {
  (void)state;
  tw_set_log_level(TW_LOG_INFO);
  scratch_dir_destroy(&g_scratch);
  return 0;
}

/* The session's hook names, space-separated. */
static void hook_names(tw_session *s, char *out, size_t size) {
  out[0] = '\0';
  for (size_t i = 0; i < tw_session_hook_count(s); ++i) {
    tw_hook *hook = NULL;
    assert_int_equal(tw_session_hook_at(&hook, s, i), TW_OK);
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s%s", used ? " " : "", tw_hook_name(hook));
  }
}

/* Creates an MTS with a user hook "user" and a chief-only hook "chief", returns its hook names. */
static recorder g_user, g_chief; /* outlive the sessions that call them */

static tw_status open_mts(tw_options *opts, tw_session **s, char *names, size_t size) {
  tw_hook *user_hook = make_recorder(&g_user, "user", &g_log);
  tw_hook *chief_hook = make_recorder(&g_chief, "chief", &g_log);
  tw_status st = tw_monitored_training_session_create(s, opts, &user_hook, 1, &chief_hook, 1);
  tw_hook_destroy(user_hook);
  tw_hook_destroy(chief_hook);
  if (st == TW_OK) hook_names(*s, names, size);
  return st;
}

static tw_options *with_dir(void) {
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, g_scratch.path), TW_OK);
  return opts;
}

static void T6_chief_default_hooks_in_tf_order(void **state) {
  (void)state;
  char names[256];
  tw_session *s = NULL;
  tw_options *opts = with_dir();
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_string_equal(names, "chief StepCounterHook SummarySaverHook CheckpointSaverHook user");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void T5_worker_gets_the_user_hooks_only(void **state) {
  (void)state;
  char names[256];
  tw_session *s = NULL;
  tw_options *opts = with_dir();
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_IS_CHIEF, 0), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_string_equal(names, "user");
  assert_int_equal(tw_session_is_chief(s), 0);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void T7_no_directory_no_default_hooks(void **state) {
  (void)state;
  char names[256];
  tw_session *s = NULL;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_string_equal(names, "chief user");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  /* summary_dir alone: step counter and summaries, no checkpoints */
  assert_int_equal(tw_options_set_string(opts, TW_OPT_SUMMARY_DIR, g_scratch.path), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_string_equal(names, "chief StepCounterHook SummarySaverHook user");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void T2_checkpoint_frequency_resolution(void **state) {
  (void)state;
  char names[256];
  tw_session *s = NULL;
  tw_options *opts = with_dir();
  /* save_checkpoint_steps=None alone: secs becomes None too, so no CheckpointSaverHook */
  assert_int_equal(tw_options_set_none(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_string_equal(names, "chief StepCounterHook SummarySaverHook user");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  /* steps given alone: a step-based saver (secs None) */
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 50), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_non_null(strstr(names, "CheckpointSaverHook"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  /* 0 is "not > 0": no saver */
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_null(strstr(names, "CheckpointSaverHook"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void T3_both_secs_and_steps_is_an_error(void **state) {
  (void)state;
  char names[256];
  tw_session *s = NULL;
  tw_options *opts = with_dir();
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 50), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_CHECKPOINT_EVERY_N_SECS, 60.0), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Can not provide both every_secs and every_steps.");
  tw_options_destroy(opts);

  opts = with_dir();
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 10), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_SUMMARY_EVERY_N_SECS, 5.0), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Can not provide both every_secs and every_steps.");
  tw_options_destroy(opts);
}

static void T1_summary_frequency_and_step_counter(void **state) {
  (void)state;
  char names[256];
  tw_session *s = NULL;
  tw_options *opts = with_dir();
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 0), TW_OK); /* secs → None */
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_string_equal(names, "chief CheckpointSaverHook user");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_SUMMARY_EVERY_N_SECS, 30.0), TW_OK);
  assert_int_equal(tw_options_set_none(opts, TW_OPT_SUMMARY_EVERY_N_STEPS), TW_OK);
  assert_int_equal(open_mts(opts, &s, names, sizeof(names)), TW_OK);
  assert_string_equal(names, "chief SummarySaverHook CheckpointSaverHook user");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

/* A training run: T8 recovery, restore on the next start, and the files on disk. */
typedef struct model {
  float w[2];
  float loss;
  int calls;
  int abort_on_call;
} model;
static tw_status step(void *u, tw_step_context *ctx) {
  model *m = u;
  tw_tensor loss = TW_TENSOR_INIT;
  m->calls++;
  m->w[0] += 1.0f;
  m->loss = 1.0f / (float)m->calls;
  loss.name = "loss";
  loss.dtype = TW_FLOAT32;
  loss.data = &m->loss;
  if (tw_step_context_publish(ctx, &loss) != TW_OK) return TW_INTERNAL;
  return m->calls == m->abort_on_call ? tw_set_error(TW_ABORTED, "preempted") : TW_OK;
}
static int count_files(const char *prefix) {
  int n = 0;
  DIR *d = opendir(g_scratch.path);
  struct dirent *e;
  assert_non_null(d);
  while ((e = readdir(d)) != NULL) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  closedir(d);
  return n;
}
static void T8_T6_a_training_run_resumes(void **state) {
  (void)state;
  static const int64_t shape[1] = {2};
  model m;
  tw_tensor var = TW_TENSOR_INIT;
  tw_hook *stop = NULL;
  tw_session *s = NULL;
  int64_t step_value = -1;
  memset(&m, 0, sizeof(m));
  m.abort_on_call = 3;
  tw_options *opts = with_dir();
  var.name = "w";
  var.dtype = TW_FLOAT32;
  var.data = m.w;
  var.ndim = 1;
  var.shape = shape;
  assert_int_equal(tw_options_add_variable(opts, &var), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 5), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 5), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_RECOVERY_BACKOFF_SECS, 0.0), TW_OK);
  assert_int_equal(tw_stop_at_step_hook_create(&stop, TW_UNSET, 12), TW_OK);
  assert_int_equal(tw_monitored_training_session_create(&s, opts, &stop, 1, NULL, 0), TW_OK);
  while (!tw_session_should_stop(s)) assert_int_equal(tw_session_run(s, NULL, 0, step, &m), TW_OK);
  assert_int_equal(tw_session_creation_count(s), 2); /* T8: the abort was recovered */
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_true(count_files("model.ckpt-12") == 1);
  assert_true(count_files("events.out.tfevents.") >= 1);
  assert_int_equal(count_files("checkpoint"), 1);

  /* a second start restores step 12 and its weights; the StopAtStepHook (num_steps=3) goes to 15 */
  float restored_w0 = m.w[0];
  memset(&m, 0, sizeof(m));
  tw_hook_destroy(stop);
  assert_int_equal(tw_stop_at_step_hook_create(&stop, 3, TW_UNSET), TW_OK);
  assert_int_equal(tw_monitored_training_session_create(&s, opts, &stop, 1, NULL, 0), TW_OK);
  step_value = tw_session_global_step(s);
  assert_int_equal(step_value, 12);
  assert_true(m.w[0] == restored_w0);
  while (!tw_session_should_stop(s)) assert_int_equal(tw_session_run(s, NULL, 0, step, &m), TW_OK);
  step_value = tw_session_global_step(s);
  assert_int_equal(step_value, 15);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(stop);
  tw_options_destroy(opts);
}

/* Counts the summary values of kind `value_kind` in the event files of `dir`. */
static int count_summary_values(const char *dir, int value_kind) {
  char path[512];
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  assert_non_null(d);
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "events.out.tfevents.", 20) != 0) continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    tw_event_reader *reader = NULL;
    tw_event event = TW_EVENT_INIT;
    tw_status st;
    assert_int_equal(tw_event_reader_open(&reader, path), TW_OK);
    while ((st = tw_event_reader_next(&event, reader)) == TW_OK) {
      for (size_t i = 0; event.kind == TW_EVENT_SUMMARY && i < event.value_count; ++i) {
        n += event.values[i]->kind == value_kind;
      }
    }
    assert_int_equal(st, TW_OUT_OF_RANGE);
    tw_event_reader_destroy(reader);
  }
  closedir(d);
  return n;
}

/* T11: the default SummarySaverHook writes scalars (the published loss), no histogram of a registered
 * variable unless TW_OPT_SUMMARY_HISTOGRAM_NAMES asks for it. */
static void T11_default_summaries_write_histograms_only_when_asked(void **state) {
  (void)state;
  static const int64_t shape[1] = {2};
  char summary_dir[300];
  tw_tensor var = TW_TENSOR_INIT;
  var.name = "w";
  var.dtype = TW_FLOAT32;
  var.ndim = 1;
  var.shape = shape;
  for (int asked = 0; asked < 2; ++asked) {
    model m;
    tw_session *s = NULL;
    memset(&m, 0, sizeof(m));
    var.data = m.w;
    snprintf(summary_dir, sizeof(summary_dir), "%s/summaries%d", g_scratch.path, asked);
    tw_options *opts = with_dir();
    assert_int_equal(tw_options_set_string(opts, TW_OPT_SUMMARY_DIR, summary_dir), TW_OK);
    assert_int_equal(tw_options_add_variable(opts, &var), TW_OK);
    if (asked) assert_int_equal(tw_options_set_string(opts, TW_OPT_SUMMARY_HISTOGRAM_NAMES, "w"), TW_OK);
    assert_int_equal(tw_monitored_training_session_create(&s, opts, NULL, 0, NULL, 0), TW_OK);
    assert_int_equal(tw_session_run(s, NULL, 0, step, &m), TW_OK); /* the first run writes summaries */
    assert_int_equal(tw_session_close(s), TW_OK);
    assert_int_equal(tw_session_destroy(s), TW_OK);
    tw_options_destroy(opts);
    assert_int_equal(count_summary_values(summary_dir, TW_SUMMARY_VALUE_SCALAR), 1); /* loss */
    assert_int_equal(count_summary_values(summary_dir, TW_SUMMARY_VALUE_HISTOGRAM), asked);
  }
  tw_options *opts = with_dir();
  tw_session *s = NULL;
  assert_int_equal(tw_options_set_string(opts, TW_OPT_SUMMARY_HISTOGRAM_NAMES, ","), TW_OK);
  assert_int_equal(tw_monitored_training_session_create(&s, opts, NULL, 0, NULL, 0), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "TW_OPT_SUMMARY_HISTOGRAM_NAMES \",\": an entry is empty");
  tw_options_destroy(opts);
}

static void bad_arguments(void **state) {
  (void)state;
  tw_session *s = NULL;
  tw_hook *none[1] = {NULL};
  assert_int_equal(tw_monitored_training_session_create(NULL, NULL, NULL, 0, NULL, 0), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_monitored_training_session_create(&s, NULL, NULL, 1, NULL, 0), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_monitored_training_session_create(&s, NULL, NULL, 0, NULL, 2), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "chief_only_hooks is NULL but n_chief_only_hooks is 2");
  assert_int_equal(tw_monitored_training_session_create(&s, NULL, none, 1, NULL, 0), TW_INVALID_ARGUMENT);
  assert_null(s);
  assert_int_equal(tw_session_hook_count(NULL), 0);
  assert_int_equal(tw_monitored_training_session_create(&s, NULL, NULL, 0, NULL, 0), TW_OK);
  tw_hook *hook = NULL;
  assert_int_equal(tw_session_hook_at(&hook, s, 0), TW_OUT_OF_RANGE);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_hook_at(&hook, s, 0), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(T6_chief_default_hooks_in_tf_order, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(T5_worker_gets_the_user_hooks_only, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(T7_no_directory_no_default_hooks, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(T2_checkpoint_frequency_resolution, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(T3_both_secs_and_steps_is_an_error, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(T1_summary_frequency_and_step_counter, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(T8_T6_a_training_run_resumes, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(T11_default_summaries_write_histograms_only_when_asked, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(bad_arguments, setup_dir, remove_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
