/* Only a writer locks a checkpoint directory, and a refused writer is told who holds it (tf-semantics
 * C24, C16); a standalone saver releases the directory when destroyed (C25). A session that only
 * restores leaves the directory to the program's own saver, TF1's pattern of a hook calling
 * scaffold.saver.save beside a restoring ChiefSessionCreator. Against the public header only. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmocka.h>
#include <trainwatch.h>

static char g_dir[256];
static float g_w[2];
static const int64_t g_shape[1] = {2};

static int setup_dir(void **state) {
  (void)state;
  snprintf(g_dir, sizeof(g_dir), "/tmp/tw_writer_lock_XXXXXX");
  tw_set_log_level(TW_LOG_ERROR); /* the refusals these tests provoke are expected */
  alarm(120);
  return mkdtemp(g_dir) == NULL ? -1 : 0;
}

static int remove_dir(void **state) {
  char command[300];
  (void)state;
  alarm(0);
  tw_set_log_level(TW_LOG_INFO);
  snprintf(command, sizeof(command), "rm -rf '%s'", g_dir);
  return system(command) == 0 ? 0 : -1;
}

static tw_tensor variable(void) {
  tw_tensor var = TW_TENSOR_INIT;
  var.name = "w";
  var.dtype = TW_FLOAT32;
  var.data = g_w;
  var.ndim = 1;
  var.shape = g_shape;
  return var;
}

static void prefix_of(char *out, size_t size) { snprintf(out, size, "%s/model.ckpt", g_dir); }

static tw_saver *new_saver(void) {
  tw_saver *saver = NULL;
  tw_tensor var = variable();
  assert_int_equal(tw_saver_create(&saver, &var, 1), TW_OK);
  return saver;
}

/* A chief's options over the directory; `saves_every_n_steps` 0: MonitoredTrainingSession adds no
 * CheckpointSaverHook. */
static tw_options *chief_options(int64_t saves_every_n_steps) {
  tw_options *opts = NULL;
  tw_tensor var = variable();
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, g_dir), TW_OK);
  assert_int_equal(tw_options_add_variable(opts, &var), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, saves_every_n_steps), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, 0), TW_OK);
  return opts;
}

static int64_t global_step(const tw_session *s) { return tw_session_global_step(s); }

static void close_and_destroy(tw_session *s) {
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* Nobody holds the directory's lock: the lock file is absent, or this test can take it. */
static void assert_lock_free(void) {
  char path[512];
  int fd;
  snprintf(path, sizeof(path), "%s/.trainwatch.lock", g_dir);
  fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
  close(fd); /* releases it */
}

/* C24: MonitoredSession(ChiefSessionCreator(checkpoint_dir=d)) with no CheckpointSaverHook restores
 * the newest checkpoint and takes no lock: the program's own saver saves into d while it runs. */
static void a_session_that_only_restores_leaves_the_directory_to_the_program_c24(void **state) {
  char prefix[512];
  const char *path = NULL;
  tw_saver *saver;
  tw_session *s = NULL;
  tw_options *opts = chief_options(0);
  (void)state;
  prefix_of(prefix, sizeof(prefix));
  g_w[0] = 4.0f;
  saver = new_saver();
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 7), TW_OK);
  tw_saver_destroy(saver); /* C25: releases the directory at once */

  g_w[0] = 0.0f;
  assert_int_equal(tw_monitored_session_create(&s, opts, NULL, 0), TW_OK);
  assert_int_equal(global_step(s), 7); /* restored, the step from the standalone saver's name */
  assert_true(g_w[0] == 4.0f);
  assert_lock_free();

  saver = new_saver(); /* the program's own saver, as a hook's scaffold.saver.save */
  assert_int_equal(tw_saver_save(&path, saver, prefix, 8), TW_OK);
  assert_non_null(strstr(path, "model.ckpt-8"));
  close_and_destroy(s);
  tw_saver_destroy(saver);

  /* MonitoredTrainingSession with checkpoint saving off is a reader too. */
  s = NULL;
  assert_int_equal(tw_monitored_training_session_create(&s, opts, NULL, 0, NULL, 0), TW_OK);
  assert_int_equal(global_step(s), 8);
  assert_lock_free();
  close_and_destroy(s);
  tw_options_destroy(opts);
}

/* C24: a writer refused by a live Saver is told that a Saver holds the directory, and one refused by
 * a session that saves is told that it is a session with a CheckpointSaverHook. */
static void a_refused_writer_is_told_who_holds_the_directory_c24(void **state) {
  char prefix[512];
  tw_saver *saver = new_saver();
  tw_session *s = NULL;
  tw_options *saving = chief_options(5);
  (void)state;
  prefix_of(prefix, sizeof(prefix));
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 1), TW_OK);
  assert_int_equal(tw_monitored_training_session_create(&s, saving, NULL, 0, NULL, 0), TW_FAILED_PRECONDITION);
  assert_null(s);
  assert_non_null(strstr(tw_last_error_message(), "is in use: a Saver of this process"));
  tw_saver_destroy(saver);

  assert_int_equal(tw_monitored_training_session_create(&s, saving, NULL, 0, NULL, 0), TW_OK);
  saver = new_saver();
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 2), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "is in use: a session with a CheckpointSaverHook of this process"));
  tw_saver_destroy(saver);
  close_and_destroy(s);
  tw_options_destroy(saving);
}

/* C24, D10: a session that saves on preemption signals writes the directory: it locks at creation even
 * without a CheckpointSaverHook, and says so. */
static void a_session_saving_on_preemption_locks_at_creation_c24(void **state) {
  char prefix[512];
  tw_saver *saver;
  tw_session *s = NULL;
  tw_options *opts = chief_options(0);
  (void)state;
  prefix_of(prefix, sizeof(prefix));
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CATCH_PREEMPTION_SIGNALS, 1), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, opts, NULL, 0), TW_OK);
  saver = new_saver();
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 3), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "a session saving on preemption of this process"));
  close_and_destroy(s);
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 3), TW_OK); /* closing the session released it */
  tw_saver_destroy(saver);
  tw_options_destroy(opts);
}

static tw_status no_op_step(void *user_data, tw_step_context *ctx) {
  (void)user_data;
  (void)ctx;
  return TW_OK;
}

/* C24, D10: a session that only restored and is told of a preemption all the same saves, taking the
 * lock then, and keeps listing the checkpoint it restored from beside the new one. */
static void a_reader_told_of_a_preemption_saves_and_keeps_the_list_c24(void **state) {
  char prefix[512];
  tw_saver *saver = new_saver();
  tw_session *s = NULL;
  tw_options *opts = chief_options(0);
  (void)state;
  prefix_of(prefix, sizeof(prefix));
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 7), TW_OK);
  tw_saver_destroy(saver);
  assert_int_equal(tw_monitored_session_create(&s, opts, NULL, 0), TW_OK);
  assert_lock_free();
  assert_int_equal(tw_session_notify_preemption(s), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, no_op_step, NULL), TW_OK);
  assert_int_equal(tw_session_preempted(s), 1);
  close_and_destroy(s);
  saver = new_saver();
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, g_dir), TW_OK);
  assert_int_equal(tw_saver_last_checkpoint_count(saver), 2); /* model.ckpt-7 and the preemption's -8 */
  tw_saver_destroy(saver);
  tw_options_destroy(opts);
}

/* C24, B48: a NanTensorHook that rolls back writes the directory (it takes the diverged run's
 * checkpoints off the state file), so its session locks at creation; one that fails on NaN does not. */
static void a_session_rolling_back_on_nan_locks_at_creation_c24(void **state) {
  char prefix[512];
  const char *watch[] = {"loss"};
  tw_saver *saver = new_saver();
  tw_session *s = NULL;
  tw_hook *hook = NULL;
  tw_options *opts = chief_options(0);
  (void)state;
  prefix_of(prefix, sizeof(prefix));
  assert_int_equal(tw_nan_tensor_hook_create(&hook, "loss", 1), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, opts, &hook, 1), TW_OK);
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 1), TW_OK); /* failing on NaN writes nothing */
  tw_saver_destroy(saver);
  close_and_destroy(s);
  tw_hook_destroy(hook);

  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_ROLLBACK), TW_OK);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, watch, 1, opts, NULL, NULL, NULL), TW_OK);
  s = NULL;
  assert_int_equal(tw_monitored_session_create(&s, opts, &hook, 1), TW_OK);
  saver = new_saver();
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 2), TW_FAILED_PRECONDITION);
  assert_non_null(
      strstr(tw_last_error_message(), "a session with a NanTensorHook that rolls back on NaN of this process"));
  tw_saver_destroy(saver);
  close_and_destroy(s);
  tw_hook_destroy(hook);
  tw_options_destroy(opts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_session_that_only_restores_leaves_the_directory_to_the_program_c24, setup_dir,
                                      remove_dir),
      cmocka_unit_test_setup_teardown(a_refused_writer_is_told_who_holds_the_directory_c24, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(a_session_saving_on_preemption_locks_at_creation_c24, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(a_session_rolling_back_on_nan_locks_at_creation_c24, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(a_reader_told_of_a_preemption_saves_and_keeps_the_list_c24, setup_dir,
                                      remove_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
