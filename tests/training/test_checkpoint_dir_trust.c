/* MonitoredTrainingSession over a checkpoint directory it cannot lose (S5, C12, C16, C19):
 * a restart after a flipped byte in the state file resumes from the newest step and overwrites no
 * checkpoint; a standalone Saver's checkpoint (no global_step inside) is restored with the step of its
 * name; a second chief of a live directory — in this process or another — fails at creation, while a
 * worker (which writes nothing) does not take the lock. Against the public header only. */
#include "scratch_dir.h" /* first: it selects the POSIX feature level */

#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <trainwatch.h>

static scratch_dir g_scratch; /* each test's directory (tests/common/scratch_dir.h) */
static float g_w[2];
static const int64_t g_shape[1] = {2};

static int setup_dir(void **state) {
  (void)state;
  tw_set_log_level(TW_LOG_ERROR); /* the warnings these tests provoke are expected */
  alarm(120);
  return scratch_dir_create(&g_scratch);
}
static int remove_dir(void **state) {
  (void)state;
  alarm(0);
  tw_set_log_level(TW_LOG_INFO);
  scratch_dir_destroy(&g_scratch);
  return 0;
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

static tw_options *mts_options(int is_chief) {
  tw_options *opts = NULL;
  tw_tensor var = variable();
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, g_scratch.path), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_IS_CHIEF, is_chief), TW_OK);
  assert_int_equal(tw_options_add_variable(opts, &var), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 5), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, 0), TW_OK);
  return opts;
}

static tw_status step(void *user_data, tw_step_context *ctx) {
  (void)user_data;
  (void)ctx;
  g_w[0] += 1.0f;
  return TW_OK;
}

static tw_session *open_chief(void) {
  tw_session *s = NULL;
  tw_options *opts = mts_options(1);
  assert_int_equal(tw_monitored_training_session_create(&s, opts, NULL, 0, NULL, 0), TW_OK);
  tw_options_destroy(opts);
  return s;
}

static int64_t global_step(tw_session *s) {
  int64_t value = -1;
  value = tw_session_global_step(s);
  return value;
}

static void run_to(tw_session *s, int64_t target) {
  while (global_step(s) < target) assert_int_equal(tw_session_run(s, NULL, 0, step, NULL), TW_OK);
}

static void path_of(const char *name, char *out, size_t size) { snprintf(out, size, "%s/%s", g_scratch.path, name); }

static struct stat stat_of(const char *name) {
  char path[512];
  struct stat st;
  path_of(name, path, sizeof(path));
  assert_int_equal(stat(path, &st), 0);
  return st;
}

/* Item 2 (S5): a flipped byte in the state file used to make the restarted chief start at step 0 and
 * overwrite model.ckpt-5 and -10 as it reached those steps again. */
static void flipped_state_byte_resumes_from_the_newest_step(void **state) {
  char path[512];
  struct stat ckpt5;
  tw_session *s;
  (void)state;
  g_w[0] = 0.0f;
  s = open_chief();
  run_to(s, 10);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  ckpt5 = stat_of("model.ckpt-5");

  path_of("checkpoint", path, sizeof(path));
  {
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 3, SEEK_SET);
    fputc('\xff', f);
    fclose(f);
  }
  g_w[0] = -100.0f;
  s = open_chief();
  assert_int_equal(global_step(s), 10);
  assert_true(g_w[0] == 10.0f);
  run_to(s, 12);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  /* model.ckpt-5 was never overwritten (each save renames a new file into place: a new inode);
   * model.ckpt-10 is saved again at the restored step, as TF's after_create_session does, with the
   * restored values — not step 10 of a run started over. */
  assert_true(stat_of("model.ckpt-5").st_ino == ckpt5.st_ino);
  {
    float saved[2] = {0, 0};
    char ckpt[512];
    tw_tensor dest = variable();
    dest.data = saved;
    path_of("model.ckpt-10", ckpt, sizeof(ckpt));
    assert_int_equal(tw_checkpoint_load_variable(ckpt, &dest), TW_OK);
    assert_true(saved[0] == 10.0f);
  }
  { /* the state file was rewritten: latest_checkpoint works again */
    char latest[512], expected[512];
    assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), g_scratch.path), TW_OK);
    path_of("model.ckpt-12", expected, sizeof(expected));
    assert_string_equal(latest, expected);
  }
}

/* Item 2: a checkpoint written by a standalone Saver holds no global_step; the session restores it
 * and takes the step from the "-<step>" name instead of skipping it and re-initializing. */
static void standalone_saver_checkpoint_gives_the_step_of_its_name(void **state) {
  char prefix[512];
  tw_saver *saver = NULL;
  tw_tensor var = variable();
  tw_session *s;
  (void)state;
  g_w[0] = 42.0f;
  g_w[1] = 43.0f;
  path_of("model.ckpt", prefix, sizeof(prefix));
  assert_int_equal(tw_saver_create(&saver, &var, 1), TW_OK);
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 7), TW_OK);
  tw_saver_destroy(saver); /* releases the directory for the session */
  g_w[0] = g_w[1] = 0.0f;
  s = open_chief();
  assert_int_equal(global_step(s), 7);
  assert_true(g_w[0] == 42.0f && g_w[1] == 43.0f);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* Item 7: two writers of one directory. */
static void second_chief_of_a_live_directory_fails_at_creation(void **state) {
  tw_session *first, *second = NULL, *worker = NULL;
  tw_options *opts;
  pid_t child;
  int status = 0;
  (void)state;
  first = open_chief();
  run_to(first, 5);

  opts = mts_options(1);
  assert_int_equal(tw_monitored_training_session_create(&second, opts, NULL, 0, NULL, 0), TW_FAILED_PRECONDITION);
  assert_null(second);
  assert_non_null(strstr(tw_last_error_message(), g_scratch.path));
  assert_non_null(strstr(tw_last_error_message(), "is in use"));

  child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    tw_session *other = NULL;
    const tw_status st = tw_monitored_training_session_create(&other, opts, NULL, 0, NULL, 0);
    if (st != TW_FAILED_PRECONDITION) _exit(10 + st);
    if (strstr(tw_last_error_message(), "another process") == NULL) _exit(2);
    _exit(0);
  }
  waitpid(child, &status, 0);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  tw_options_destroy(opts);

  /* A worker writes nothing: it takes no lock and is not refused. */
  opts = mts_options(0);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_MAX_WAIT_SECS, 0.0), TW_OK);
  assert_int_equal(tw_monitored_training_session_create(&worker, opts, NULL, 0, NULL, 0), TW_OK);
  assert_int_equal(tw_session_close(worker), TW_OK);
  assert_int_equal(tw_session_destroy(worker), TW_OK);
  tw_options_destroy(opts);

  /* Closing the first releases the directory. */
  assert_int_equal(tw_session_close(first), TW_OK);
  second = open_chief();
  assert_int_equal(global_step(second), 5);
  assert_int_equal(tw_session_close(second), TW_OK);
  assert_int_equal(tw_session_destroy(second), TW_OK);
  assert_int_equal(tw_session_destroy(first), TW_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(flipped_state_byte_resumes_from_the_newest_step, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(standalone_saver_checkpoint_gives_the_step_of_its_name, setup_dir, remove_dir),
      cmocka_unit_test_setup_teardown(second_chief_of_a_live_directory_fails_at_creation, setup_dir, remove_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
