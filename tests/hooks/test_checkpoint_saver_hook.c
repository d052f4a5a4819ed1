/* CheckpointSaverHook and listeners (B17–B24), restore on session creation and on recovery (S5, W10),
 * the corrupt-latest fallback, retention through the session's options, async saving, and the
 * NanTensorHook's rollback. Against the public header only. */
#include "scratch_dir.h" /* first: it selects the POSIX feature level */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "recorder.h"

static scratch_dir g_scratch; /* each test's directory (tests/common/scratch_dir.h) */

static int setup_dir(void **state) {
  (void)state;
  return scratch_dir_create(&g_scratch);
}
static int remove_dir(void **state) {
  (void)state;
  scratch_dir_destroy(&g_scratch);
  return 0;
}

static int exists(const char *name) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof(path), "%s/%s", g_scratch.path, name);
  return stat(path, &st) == 0;
}

/* The model: four weights the step moves by +1 each run, and the loss it publishes. */
typedef struct model {
  float w[4];
  int calls;
  int nan_on_call;       /* the step turns w into NaN on this call (1-based; 0 = never) */
  int nan_loss_on_call;  /* the step publishes a NaN loss on this call, w stays finite */
  tw_status fail_status; /* returned on fail_on_call */
  int fail_on_call;
  float loss;
} model;

static tw_status train_step(void *u, tw_step_context *ctx) {
  model *m = u;
  tw_tensor loss = TW_TENSOR_INIT;
  m->calls++;
  for (int i = 0; i < 4; ++i) m->w[i] += 1.0f;
  if (m->nan_on_call == m->calls) m->w[1] = NAN;
  m->loss = m->nan_loss_on_call == m->calls ? NAN : m->w[0] + m->w[1];
  loss.name = "loss";
  loss.dtype = TW_FLOAT32;
  loss.data = &m->loss;
  if (tw_step_context_publish(ctx, &loss) != TW_OK) return TW_INTERNAL;
  if (m->fail_on_call == m->calls) return tw_set_error(m->fail_status, "preempted on purpose");
  return TW_OK;
}

static tw_options *options_for(model *m, int async, int64_t save_steps) {
  static const int64_t shape[1] = {4};
  tw_options *opts = NULL;
  tw_tensor var = TW_TENSOR_INIT;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  var.name = "w";
  var.dtype = TW_FLOAT32;
  var.data = m->w;
  var.ndim = 1;
  var.shape = shape;
  assert_int_equal(tw_options_add_variable(opts, &var), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, g_scratch.path), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, save_steps), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, async), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_RECOVERY_BACKOFF_SECS, 0.0), TW_OK);
  return opts;
}

/* A listener that logs its calls, and asks to stop after saving `stop_at`. */
typedef struct listener_log {
  event_log log;
  int64_t stop_at;
  int destroyed;
} listener_log;
static tw_status l_begin(void *u) {
  log_event(&((listener_log *)u)->log, "begin");
  return TW_OK;
}
static tw_status l_before(void *u, tw_session *s, int64_t step) {
  char e[32];
  (void)s;
  snprintf(e, sizeof(e), "before(%lld)", (long long)step);
  log_event(&((listener_log *)u)->log, e);
  return TW_OK;
}
static tw_status l_after(void *u, tw_session *s, int64_t step, int *stop) {
  listener_log *l = u;
  char e[32];
  (void)s;
  snprintf(e, sizeof(e), "after(%lld)", (long long)step);
  log_event(&l->log, e);
  *stop = step == l->stop_at;
  return TW_OK;
}
static tw_status l_end(void *u, tw_session *s, int64_t step) {
  char e[32];
  (void)s;
  snprintf(e, sizeof(e), "end(%lld)", (long long)step);
  log_event(&((listener_log *)u)->log, e);
  return TW_OK;
}
static void l_destroy(void *u) { ((listener_log *)u)->destroyed++; }

static tw_session *open_session(tw_options *opts, listener_log *l, tw_hook *extra) {
  static const tw_checkpoint_listener_callbacks cb = {sizeof(cb), l_begin, l_before, l_after, l_end, l_destroy};
  tw_checkpoint_listener *listener = NULL;
  tw_hook *hooks[2];
  size_t n = 1;
  tw_session *s = NULL;
  if (l != NULL) assert_int_equal(tw_checkpoint_listener_create(&listener, "log", &cb, l), TW_OK);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hooks[0], g_scratch.path, opts, &listener, l != NULL), TW_OK);
  tw_checkpoint_listener_destroy(listener);
  if (extra != NULL) hooks[n++] = extra;
  assert_int_equal(tw_monitored_session_create(&s, opts, hooks, n), TW_OK);
  for (size_t i = 0; i < n; ++i) tw_hook_destroy(hooks[i]);
  return s;
}

static void run_n(tw_session *s, model *m, int n) {
  for (int i = 0; i < n; ++i) assert_int_equal(tw_session_run(s, NULL, 0, train_step, m), TW_OK);
}

static void check_saves(int async) {
  model m;
  listener_log l;
  char latest[512], expected[512];
  memset(&m, 0, sizeof(m));
  memset(&l, 0, sizeof(l));
  l.stop_at = -1;
  tw_options *opts = options_for(&m, async, 2);
  tw_session *s = open_session(opts, &l, NULL);
  assert_true(exists("model.ckpt-0") || async); /* B21: saved at creation (maybe still being written) */
  run_n(s, &m, 5);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
  assert_int_equal(l.destroyed, 1);
  /* B21 at creation, B22 at 2 and 4, B23 at end (5) */
  assert_string_equal(l.log.text,
                      "begin before(0) after(0) before(2) after(2) before(4) after(4) before(5) after(5) end(5)");
  assert_true(exists("model.ckpt-0") && exists("model.ckpt-2") && exists("model.ckpt-4") && exists("model.ckpt-5"));
  assert_false(exists("model.ckpt-1"));
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), g_scratch.path), TW_OK);
  snprintf(expected, sizeof(expected), "%s/model.ckpt-5", g_scratch.path);
  assert_string_equal(latest, expected);
  assert_int_equal(tw_checkpoint_verify(latest), TW_OK);
}

static void B21_B22_B23_B24_save_schedule_sync(void **state) {
  (void)state;
  check_saves(0);
}
static void save_schedule_async(void **state) {
  (void)state;
  check_saves(1);
}

static void B24_listener_can_request_stop(void **state) {
  (void)state;
  model m;
  listener_log l;
  memset(&m, 0, sizeof(m));
  memset(&l, 0, sizeof(l));
  l.stop_at = 2;
  tw_options *opts = options_for(&m, 0, 2);
  tw_session *s = open_session(opts, &l, NULL);
  run_n(s, &m, 1);
  assert_int_equal(tw_session_should_stop(s), 0);
  run_n(s, &m, 1);
  assert_int_equal(tw_session_should_stop(s), 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

/* B22: with async saving (the default), a listener that asks to stop after the save of step 4 ends
 * training after the run of step 4, as TF's synchronous save does: the hook waits for the write there. */
static int runs_until_stop(tw_options *opts, model *m, listener_log *l) {
  tw_session *s = open_session(opts, l, NULL);
  int runs = 0;
  while (!tw_session_should_stop(s) && runs < 20) {
    assert_int_equal(tw_session_run(s, NULL, 0, train_step, m), TW_OK);
    runs++;
  }
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return runs;
}

static void B22_async_listener_stops_the_saving_run(void **state) {
  (void)state;
  model m;
  listener_log l;
  memset(&m, 0, sizeof(m));
  memset(&l, 0, sizeof(l));
  l.stop_at = 4;
  tw_options *opts = options_for(&m, 1, 2);
  assert_int_equal(runs_until_stop(opts, &m, &l), 4);
  assert_string_equal(l.log.text, "begin before(0) after(0) before(2) after(2) before(4) after(4) end(4)");
  tw_options_destroy(opts);
}

/* TW_OPT_DEFERRED_CHECKPOINT_LISTENERS: the write stays in the background, so after_save of step 4 (and
 * its stop) comes in a later run: the run of step 5 or 6, whichever first finds the write finished. */
static void B22_deferred_listeners_stop_later(void **state) {
  (void)state;
  model m;
  listener_log l;
  memset(&m, 0, sizeof(m));
  memset(&l, 0, sizeof(l));
  l.stop_at = 4;
  tw_options *opts = options_for(&m, 1, 2);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_DEFERRED_CHECKPOINT_LISTENERS, 1), TW_OK);
  const int runs = runs_until_stop(opts, &m, &l);
  assert_true(runs == 5 || runs == 6);
  assert_non_null(strstr(l.log.text, "before(4) after(4)"));
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_DEFERRED_CHECKPOINT_LISTENERS, 2), TW_INVALID_ARGUMENT);
  tw_options_destroy(opts);
}

/* A listener cannot destroy the session that calls it: refused, and the session carries on. */
static tw_status destroying_after_save(void *u, tw_session *s, int64_t step, int *stop) {
  (void)step;
  (void)stop;
  tw_status *seen = u;
  *seen = tw_session_destroy(s);
  return TW_OK;
}

static void destroy_in_a_listener_is_refused(void **state) {
  (void)state;
  static const tw_checkpoint_listener_callbacks cb = {sizeof(cb), NULL, NULL, destroying_after_save, NULL, NULL};
  model m;
  tw_status seen = TW_OK;
  tw_checkpoint_listener *listener = NULL;
  tw_hook *hook = NULL;
  tw_session *s = NULL;
  memset(&m, 0, sizeof(m));
  tw_options *opts = options_for(&m, 1, 1);
  assert_int_equal(tw_checkpoint_listener_create(&listener, "destroyer", &cb, &seen), TW_OK);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, g_scratch.path, opts, &listener, 1), TW_OK);
  tw_checkpoint_listener_destroy(listener);
  assert_int_equal(tw_monitored_session_create(&s, opts, &hook, 1), TW_OK);
  tw_hook_destroy(hook);
  assert_int_equal(seen, TW_FAILED_PRECONDITION); /* after_save of the save at creation (B21) */
  seen = TW_OK;
  run_n(s, &m, 2);
  assert_int_equal(seen, TW_FAILED_PRECONDITION);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_true(exists("model.ckpt-2"));
  tw_options_destroy(opts);
}

static void S5_chief_restores_on_creation(void **state) {
  (void)state;
  model m, fresh;
  int64_t step = -1;
  memset(&m, 0, sizeof(m));
  tw_options *opts = options_for(&m, 1, 100);
  tw_session *s = open_session(opts, NULL, NULL);
  run_n(s, &m, 3);
  assert_int_equal(tw_session_close(s), TW_OK); /* final save at step 3: w = 3 */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);

  memset(&fresh, 0, sizeof(fresh));
  opts = options_for(&fresh, 1, 100);
  s = open_session(opts, NULL, NULL);
  step = tw_session_global_step(s);
  assert_int_equal(step, 3);
  for (int i = 0; i < 4; ++i) assert_true(fresh.w[i] == 3.0f); /* written in place */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void W10_recovery_restores_the_latest_checkpoint(void **state) {
  (void)state;
  model m;
  int64_t step = -1;
  memset(&m, 0, sizeof(m));
  m.fail_on_call = 4; /* the 4th step is preempted after moving w */
  m.fail_status = TW_ABORTED;
  tw_options *opts = options_for(&m, 0, 2);
  tw_session *s = open_session(opts, NULL, NULL);
  run_n(s, &m, 3); /* saves at 0 and 2; w = 3 */
  assert_int_equal(tw_session_run(s, NULL, 0, train_step, &m), TW_OK);
  /* recovery restored model.ckpt-2 (w = 2, step 2) and re-ran the step: w = 3, step 3; and the
   * re-created session saved at once (B21), at step 2 */
  assert_int_equal(tw_session_creation_count(s), 2);
  assert_true(m.w[0] == 3.0f);
  step = tw_session_global_step(s);
  assert_int_equal(step, 3);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static int g_warnings;
static char g_warning[512];
static void capture_warnings(void *u, tw_log_level level, const char *message) {
  (void)u;
  if (level == TW_LOG_WARNING) {
    g_warnings++;
    snprintf(g_warning, sizeof(g_warning), "%s", message);
  }
}

static void corrupt_latest_falls_back_to_the_previous(void **state) {
  (void)state;
  model m, fresh;
  char path[512];
  int64_t step = -1;
  memset(&m, 0, sizeof(m));
  tw_options *opts = options_for(&m, 0, 2);
  tw_session *s = open_session(opts, NULL, NULL);
  run_n(s, &m, 4); /* checkpoints 0, 2, 4 */
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);

  snprintf(path, sizeof(path), "%s/model.ckpt-4", g_scratch.path);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, size / 2, SEEK_SET);
  int byte = fgetc(f);
  fseek(f, size / 2, SEEK_SET);
  fputc(byte ^ 0x55, f);
  fclose(f);

  memset(&fresh, 0, sizeof(fresh));
  opts = options_for(&fresh, 0, 2);
  g_warnings = 0;
  tw_set_log_sink(capture_warnings, NULL);
  s = open_session(opts, NULL, NULL);
  tw_set_log_sink(NULL, NULL);
  assert_true(g_warnings >= 1);
  assert_non_null(strstr(g_warning, "model.ckpt-4"));
  step = tw_session_global_step(s);
  assert_int_equal(step, 2);
  assert_true(fresh.w[0] == 2.0f);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void retention_follows_max_to_keep(void **state) {
  (void)state;
  model m;
  memset(&m, 0, sizeof(m));
  tw_options *opts = options_for(&m, 1, 1);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_MAX_TO_KEEP, 2), TW_OK);
  tw_session *s = open_session(opts, NULL, NULL);
  run_n(s, &m, 6);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
  assert_true(exists("model.ckpt-5") && exists("model.ckpt-6"));
  assert_false(exists("model.ckpt-4"));
  assert_false(exists("model.ckpt-0"));
}

static void nan_rollback_restores_and_continues(void **state) {
  (void)state;
  model m;
  int64_t step = -1;
  const char *watch[] = {"loss"};
  tw_hook *guard = NULL;
  memset(&m, 0, sizeof(m));
  m.nan_on_call = 4; /* step 3 diverges once */
  tw_options *opts = options_for(&m, 0, 1);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_ROLLBACK), TW_OK);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&guard, watch, 1, opts, NULL, NULL, NULL), TW_OK);
  tw_set_log_level(TW_LOG_ERROR);
  tw_session *s = open_session(opts, NULL, guard);
  run_n(s, &m, 3);                                                     /* w = 3, checkpoints every step */
  assert_int_equal(tw_session_run(s, NULL, 0, train_step, &m), TW_OK); /* NaN → rolled back to step 3 */
  tw_set_log_level(TW_LOG_INFO);
  step = tw_session_global_step(s);
  assert_int_equal(step, 3);
  assert_false(isnan(m.w[1]));
  assert_true(m.w[0] == 3.0f && m.w[1] == 3.0f);
  assert_false(exists("model.ckpt-4")); /* the diverged state was never saved */
  run_n(s, &m, 2);
  assert_true(m.w[0] == 5.0f);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

/* B48: the NaN is in the loss only, on a save step. CheckpointSaverHook's after_run runs first and
 * saves the state after that run (its variables are finite); the rollback must not land there but on
 * the checkpoint before, and the bad one is neither listed nor left on disk. */
static void check_rollback_skips_the_diverged_runs_save(int async, int64_t max_to_keep) {
  model m;
  int64_t step = -1;
  char latest[512], expected[512];
  const char *watch[] = {"loss"};
  tw_hook *guard = NULL;
  memset(&m, 0, sizeof(m));
  m.nan_loss_on_call = 4; /* the run from step 3: it ends at step 4, a save step */
  tw_options *opts = options_for(&m, async, 2);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_MAX_TO_KEEP, max_to_keep), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_ROLLBACK), TW_OK);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&guard, watch, 1, opts, NULL, NULL, NULL), TW_OK);
  tw_set_log_level(TW_LOG_ERROR);
  tw_session *s = open_session(opts, NULL, guard); /* the CheckpointSaverHook first, as in TF */
  run_n(s, &m, 2);                                 /* model.ckpt-2 holds w = 2 */
  float saved[4];
  memcpy(saved, m.w, sizeof saved);
  run_n(s, &m, 2); /* NaN loss at step 4, saved first, then rolled back */
  tw_set_log_level(TW_LOG_INFO);
  step = tw_session_global_step(s);
  assert_int_equal(step, 2);
  assert_memory_equal(m.w, saved, sizeof saved);
  assert_false(exists("model.ckpt-4"));
  if (max_to_keep > 0) {
    assert_int_equal(tw_latest_checkpoint(latest, sizeof latest, g_scratch.path), TW_OK);
    snprintf(expected, sizeof expected, "%s/model.ckpt-2", g_scratch.path);
    assert_string_equal(latest, expected);
  } else { /* the state file named only the diverged save: it went with it */
    assert_int_equal(tw_latest_checkpoint(latest, sizeof latest, g_scratch.path), TW_NOT_FOUND);
  }
  run_n(s, &m, 4); /* training goes on from step 2; its timer fired at step 4 already (B22): next at 6 */
  assert_true(m.w[0] == 6.0f);
  assert_int_equal(tw_session_close(s), TW_OK); /* an async write finished */
  assert_true(exists("model.ckpt-6"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void B48_rollback_skips_the_diverged_runs_save_sync(void **state) {
  (void)state;
  check_rollback_skips_the_diverged_runs_save(0, 5);
}

static void B48_rollback_skips_the_diverged_runs_save_async(void **state) {
  (void)state;
  check_rollback_skips_the_diverged_runs_save(1, 5);
}

/* C9: nothing tracked, the state file names only the newest save: the diverged one. */
static void B48_rollback_skips_the_diverged_runs_save_untracked(void **state) {
  (void)state;
  check_rollback_skips_the_diverged_runs_save(0, 0);
}

static void nan_rollback_is_bounded(void **state) {
  (void)state;
  model m;
  const char *watch[] = {"loss"};
  tw_hook *guard = NULL;
  memset(&m, 0, sizeof(m));
  tw_options *opts = options_for(&m, 0, 1);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_ROLLBACK), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_MAX_ROLLBACKS, 2), TW_OK);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&guard, watch, 1, opts, NULL, NULL, NULL), TW_OK);
  tw_set_log_level(TW_LOG_ERROR + 1);
  tw_session *s = open_session(opts, NULL, guard);
  run_n(s, &m, 2);
  m.nan_on_call = 3;
  assert_int_equal(tw_session_run(s, NULL, 0, train_step, &m), TW_OK);
  m.nan_on_call = 4;
  assert_int_equal(tw_session_run(s, NULL, 0, train_step, &m), TW_OK);
  m.nan_on_call = 5;
  assert_int_equal(tw_session_run(s, NULL, 0, train_step, &m), TW_NAN_LOSS);
  tw_set_log_level(TW_LOG_INFO);
  assert_non_null(strstr(tw_last_error_message(), "not rolled back: 2 rollbacks already"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

/* The directory vanished before the save, or under a write in flight (create or rename then fail):
 * either way the message names the failed save and the directory. */
static void assert_save_failed_in_g_dir(const char *message) {
  assert_non_null(strstr(message, "failed"));
  assert_non_null(strstr(message, g_scratch.path));
}

static void background_failure_surfaces(void **state) {
  (void)state;
  model m;
  char command[400];
  int failures = 0;
  memset(&m, 0, sizeof(m));
  tw_options *opts = options_for(&m, 1, 1);
  tw_session *s = open_session(opts, NULL, NULL);
  run_n(s, &m, 1);
  char gone[300];
  snprintf(gone, sizeof(gone), "%s.gone", g_scratch.path);
  assert_int_equal(rename(g_scratch.path, gone), 0); /* atomic, even with a write in flight */
  tw_set_log_level(TW_LOG_ERROR + 1);
  for (int i = 0; i < 3; ++i) {
    if (tw_session_run(s, NULL, 0, train_step, &m) != TW_OK) {
      failures++;
      assert_save_failed_in_g_dir(tw_last_error_message());
      break;
    }
  }
  if (tw_session_close(s) != TW_OK) {
    failures++;
    assert_save_failed_in_g_dir(tw_last_error_message());
  }
  tw_set_log_level(TW_LOG_INFO);
  assert_int_equal(failures, 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
  snprintf(command, sizeof(command), "rm -rf '%s'", gone);
  assert_int_equal(system(command), 0);
  assert_int_equal(mkdir(g_scratch.path, 0700), 0);
}

static void B18_bad_arguments(void **state) {
  (void)state;
  tw_hook *hook = NULL;
  tw_options *opts = NULL;
  tw_checkpoint_listener *none[1] = {NULL};
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, g_scratch.path, opts, NULL, 0), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Either every_secs or every_steps should be provided.");
  /* The hook's period is TW_OPT_EVERY_N_* as every periodic hook's: MonitoredTrainingSession's key
   * alone is refused with a message that names the right one. */
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 10), TW_OK);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, g_scratch.path, opts, NULL, 0), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "reads TW_OPT_EVERY_N_STEPS / TW_OPT_EVERY_N_SECS"));
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 10), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_EVERY_N_SECS, 0.0), TW_OK);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, g_scratch.path, opts, NULL, 0), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Can not provide both every_secs and every_steps.");
  assert_int_equal(tw_options_set_none(opts, TW_OPT_EVERY_N_SECS), TW_OK);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, "", opts, NULL, 0), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, g_scratch.path, opts, none, 1), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "listeners[0] is NULL");
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, g_scratch.path, opts, NULL, 2), TW_INVALID_ARGUMENT);
  assert_null(hook);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hook, g_scratch.path, opts, NULL, 0), TW_OK);
  tw_hook_destroy(hook);
  tw_options_destroy(opts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(B21_B22_B23_B24_save_schedule_sync, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(save_schedule_async, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(B24_listener_can_request_stop, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(B22_async_listener_stops_the_saving_run, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(B22_deferred_listeners_stop_later, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(destroy_in_a_listener_is_refused, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(S5_chief_restores_on_creation, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(W10_recovery_restores_the_latest_checkpoint, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(corrupt_latest_falls_back_to_the_previous, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(retention_follows_max_to_keep, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(nan_rollback_restores_and_continues, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(B48_rollback_skips_the_diverged_runs_save_sync, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(B48_rollback_skips_the_diverged_runs_save_async, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(B48_rollback_skips_the_diverged_runs_save_untracked, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(nan_rollback_is_bounded, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(background_failure_surfaces, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(B18_bad_arguments, setup_dir, remove_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
