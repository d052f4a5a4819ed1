/* Crash safety through the C API: a save killed with SIGKILL at random points, and a save that hits
 * the file size limit (RLIMIT_FSIZE, the ENOSPC stand-in), always leave the previous checkpoint
 * restorable and latest_checkpoint valid. */
#include "scratch_dir.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <trainwatch.h>

#define N_WEIGHTS (1 << 20) /* 4 MiB of float32: a save takes a few milliseconds to ~100 ms */

static float g_weights[N_WEIGHTS];
static int64_t g_step_value;

static tw_saver *make_saver(void) {
  static const int64_t shape[1] = {N_WEIGHTS};
  tw_tensor vars[2] = {TW_TENSOR_INIT, TW_TENSOR_INIT};
  tw_saver *saver = NULL;
  vars[0].name = "weights";
  vars[0].dtype = TW_FLOAT32;
  vars[0].ndim = 1;
  vars[0].shape = shape;
  vars[0].data = g_weights;
  vars[1].name = "global_step";
  vars[1].dtype = TW_INT64;
  vars[1].data = &g_step_value;
  assert_int_equal(tw_saver_create(&saver, vars, 2), TW_OK);
  return saver;
}

/* Model state at step s: every weight derived from s, so a restore proves which step it came from. */
static void fill(int64_t step) {
  uint32_t x = (uint32_t)step * 2654435761u + 1;
  for (int i = 0; i < N_WEIGHTS; ++i) {
    x = x * 1664525u + 1013904223u;
    g_weights[i] = (float)((int32_t)x >> 8) * 1e-9f + (float)step;
  }
  g_step_value = step;
}

/* Restores the latest checkpoint of `dir` and checks it is a complete, consistent step. */
static int64_t restore_latest_and_check(const char *dir) {
  char latest[1024];
  tw_saver *saver = make_saver();
  int64_t step;
  float expected_first;
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), dir), TW_OK);
  assert_int_equal(tw_checkpoint_verify(latest), TW_OK);
  memset(g_weights, 0, sizeof(g_weights));
  assert_int_equal(tw_saver_restore(saver, latest), TW_OK);
  step = g_step_value;
  expected_first = g_weights[N_WEIGHTS - 1];
  fill(step); /* what that step's weights must be */
  assert_true(g_weights[N_WEIGHTS - 1] == expected_first);
  tw_saver_destroy(saver);
  return step;
}

static void killed_saves_leave_the_previous_checkpoint(void **state) {
  scratch_dir dir;
  char prefix[600];
  int trial;
  tw_saver *saver;
  (void)state;
  assert_int_equal(scratch_dir_create(&dir), 0);
  scratch_dir_join(&dir, "model.ckpt", prefix, sizeof(prefix));
  saver = make_saver();
  fill(1);
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 1), TW_OK);
  tw_saver_destroy(saver);
  srand((unsigned)time(NULL));
  for (trial = 0; trial < 30; ++trial) {
    int64_t before = restore_latest_and_check(dir.path), after;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* saves steps before+1, before+2, … until killed */
      tw_saver *s = make_saver();
      int64_t step;
      assert_int_equal(tw_saver_recover_last_checkpoints(s, dir.path), TW_OK);
      for (step = before + 1;; ++step) {
        fill(step);
        if (tw_saver_save(NULL, s, prefix, step) != TW_OK) _exit(1);
      }
    }
    usleep((useconds_t)(rand() % 150000)); /* anywhere in the first few saves */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    after = restore_latest_and_check(dir.path);
    assert_true(after >= before);
  }
  /* The next saver start-up removes the killed saves' temporary files. */
  saver = make_saver();
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, dir.path), TW_OK);
  assert_int_equal(scratch_dir_count_temporary(&dir), 0);
  assert_true(tw_saver_last_checkpoint_count(saver) <= 5);
  tw_saver_destroy(saver);
  scratch_dir_destroy(&dir);
}

static void a_full_disk_fails_cleanly(void **state) {
  scratch_dir dir;
  char prefix[600];
  tw_saver *saver;
  int status = 0;
  pid_t child;
  (void)state;
  assert_int_equal(scratch_dir_create(&dir), 0);
  scratch_dir_join(&dir, "model.ckpt", prefix, sizeof(prefix));
  saver = make_saver();
  fill(1);
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 1), TW_OK);
  tw_saver_destroy(saver);
  child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    /* Files may not grow past 64 KiB: write() fails with EFBIG, as it would with ENOSPC. */
    struct rlimit limit = {64 << 10, 64 << 10};
    tw_status s;
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &limit);
    saver = make_saver();
    assert_int_equal(tw_saver_recover_last_checkpoints(saver, dir.path), TW_OK);
    fill(2);
    s = tw_saver_save(NULL, saver, prefix, 2);
    if (s != TW_RESOURCE_EXHAUSTED) _exit(10 + s);
    if (strstr(tw_last_error_message(), "Saving checkpoint") == NULL) _exit(3);
    if (strstr(tw_last_error_message(), "File too large") == NULL) _exit(4);
    _exit(0);
  }
  waitpid(child, &status, 0);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(restore_latest_and_check(dir.path), 1); /* the previous checkpoint, intact */
  assert_int_equal(scratch_dir_count_temporary(&dir), 0);  /* no temporary file left */
  assert_int_equal(scratch_dir_count_entries(&dir, "model.ckpt-2"), 0);
  scratch_dir_destroy(&dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(killed_saves_leave_the_previous_checkpoint),
      cmocka_unit_test(a_full_disk_fails_cleanly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
