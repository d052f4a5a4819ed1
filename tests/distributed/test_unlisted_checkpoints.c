/* A save cut short between its checkpoint's commit and the state file's update (C14):
 * a child process is SIGKILLed there (fault_points.h), leaving a complete checkpoint the state file does
 * not list — a single-process checkpoint renamed into place, or a sharded one's index and every part.
 * The restore still takes the state file's newest (C8; in a job of 4 thread ranks, the restore vote,
 * D16), and the next save into the directory removes the unlisted checkpoint — as it deletes one that a
 * save cut short after its state file evicted it (C9) left behind. Only what the saver wrote
 * goes: a file, FIFO or directory left in its place stays with a warning; a checkpoint of another prefix
 * or one kept by keep_checkpoint_every_n_hours (C10) stays; a checkpoint the state file lists stays. */
#define _DEFAULT_SOURCE  /* mkfifo */
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <dirent.h>
#include <pthread.h>
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

#include "fault_points.h"
#include "thread_world.h"

static char g_warnings[16384];
static pthread_mutex_t g_warnings_lock = PTHREAD_MUTEX_INITIALIZER; /* ranks log from their threads */

static void capture(void *user_data, tw_log_level level, const char *message) {
  (void)user_data;
  if (level < TW_LOG_WARNING) return;
  pthread_mutex_lock(&g_warnings_lock);
  strncat(g_warnings, message, sizeof(g_warnings) - strlen(g_warnings) - 2);
  strncat(g_warnings, "\n", sizeof(g_warnings) - strlen(g_warnings) - 1);
  pthread_mutex_unlock(&g_warnings_lock);
}

static int setup(void **state) {
  (void)state;
  g_warnings[0] = '\0';
  tw_set_log_sink(capture, NULL);
  alarm(90); /* a child that never reaches its kill point fails the test instead of hanging it */
  return 0;
}

static int teardown(void **state) {
  (void)state;
  alarm(0);
  tw_set_log_sink(NULL, NULL);
  return 0;
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

static void ckpt(char *out, size_t size, const char *dir, const char *prefix, int64_t step) {
  snprintf(out, size, "%s/%s-%lld", dir, prefix, (long long)step);
}

static void expect_latest(const char *dir, int64_t step) {
  char latest[600], expected[600];
  assert_int_equal(tw_latest_checkpoint(latest, sizeof latest, dir), TW_OK);
  ckpt(expected, sizeof expected, dir, "model.ckpt", step);
  assert_string_equal(latest, expected);
}

/* Runs body(dir, arg) in a child process with `point` armed on `dir`, and expects the child to die there
 * by SIGKILL, as a process killed between two steps of its save. */
static void run_killed(const char *dir, const char *point, void (*body)(const char *dir, void *arg), void *arg) {
  fflush(NULL);
  const pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    if (fault_points_arm(point, dir, 0) != 0) _exit(2);
    body(dir, arg);
    _exit(3); /* the point was never reached */
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
    fail_msg("the child did not die at %s (status %d)", point, status);
}

/* --- A single-process saver ------------------------------------------------------------------------ */

static float g_w[4];
static int64_t g_step;

typedef struct saver_settings {
  int64_t max_to_keep;
  double keep_hours; /* 0: the default */
  int64_t step;      /* run_killed's body saves this step */
  int recycle;       /* tw_saver_set_recycle_files (C15) */
} saver_settings;

static tw_saver *make_saver(const saver_settings *s) {
  static const int64_t shape[1] = {4};
  tw_tensor vars[2] = {TW_TENSOR_INIT, TW_TENSOR_INIT};
  vars[0].name = "w";
  vars[0].dtype = TW_FLOAT32;
  vars[0].ndim = 1;
  vars[0].shape = shape;
  vars[0].data = g_w;
  vars[1].name = "global_step";
  vars[1].dtype = TW_INT64;
  vars[1].data = &g_step;
  tw_saver *saver = NULL;
  if (tw_saver_create(&saver, vars, 2) != TW_OK || tw_saver_set_max_to_keep(saver, s->max_to_keep) != TW_OK ||
      tw_saver_set_recycle_files(saver, s->recycle) != TW_OK ||
      (s->keep_hours > 0 && tw_saver_set_keep_checkpoint_every_n_hours(saver, s->keep_hours) != TW_OK)) {
    fail_msg("saver: %s", tw_last_error_message());
  }
  return saver;
}

static tw_status save(tw_saver *saver, const char *dir, int64_t step) {
  char prefix[600];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", dir);
  for (int i = 0; i < 4; ++i) g_w[i] = (float)step + (float)i;
  g_step = step;
  return tw_saver_save(NULL, saver, prefix, step);
}

static void save_steps(const char *dir, const saver_settings *s, int64_t first, int64_t last) {
  tw_saver *saver = make_saver(s);
  for (int64_t step = first; step <= last; ++step) assert_int_equal(save(saver, dir, step), TW_OK);
  tw_saver_destroy(saver);
}

/* A process that recovers the kept list, as a session does, then saves s->step. */
static void save_in_child(const char *dir, void *arg) {
  const saver_settings *s = arg;
  tw_saver *saver = make_saver(s);
  if (tw_saver_recover_last_checkpoints(saver, dir) != TW_OK) _exit(5);
  save(saver, dir, s->step);
  tw_saver_destroy(saver);
}

/* The next process: restores the newest good checkpoint (its step returned), recovers the kept list as
 * a session does, then saves `step`. */
static tw_status restore_recover_save(const char *dir, const saver_settings *s, int64_t step, int64_t *restored) {
  tw_saver *saver = make_saver(s);
  g_step = -1;
  assert_int_equal(tw_saver_restore_newest_good(NULL, saver, dir), TW_OK);
  *restored = g_step;
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, dir), TW_OK);
  const tw_status saved = save(saver, dir, step);
  tw_saver_destroy(saver);
  return saved;
}

/* The next process, as a standalone saver that restores nothing (so no checkpoint is protected as the
 * one restored): recovers the kept list, then saves `step`. */
static tw_status recover_save(const char *dir, const saver_settings *s, int64_t step) {
  tw_saver *saver = make_saver(s);
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, dir), TW_OK);
  const tw_status saved = save(saver, dir, step);
  tw_saver_destroy(saver);
  return saved;
}

/* The directory holds exactly these names, besides the lock and job identity files (C19): nothing else
 * is left over. */
static void expect_only(const char *dir, const char *const *names, size_t count) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  size_t seen = 0;
  const struct dirent *entry;
  while ((entry = readdir(d)) != NULL) {
    const char *name = entry->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".trainwatch.lock") == 0 ||
        strcmp(name, ".trainwatch.job") == 0) {
      continue;
    }
    int expected = 0;
    for (size_t i = 0; i < count; ++i) expected = expected || strcmp(name, names[i]) == 0;
    if (!expected) fail_msg("unexpected file %s in %s", name, dir);
    ++seen;
  }
  closedir(d);
  assert_int_equal(seen, count);
}

/* C14 / C8: killed after its checkpoint's rename, before the state file's: model.ckpt-3 is complete but
 * unlisted. The next process restores the state file's newest (2), recovery keeps 3 (a restore might
 * have needed it), and the next save removes it, with a warning. Another prefix's checkpoint stays. */
static void single_checkpoint_left_unlisted_goes_at_the_next_save(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[600], other[600];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  saver_settings s = {5, 0, 3, 0};
  save_steps(dir, &s, 1, 2);
  ckpt(path, sizeof path, dir, "model.ckpt", 1);
  ckpt(other, sizeof other, dir, "best.ckpt", 7);
  assert_int_equal(link(path, other), 0); /* a checkpoint of another prefix, listed nowhere */

  run_killed(dir, "rename:state:before:1", save_in_child, &s);
  ckpt(path, sizeof path, dir, "model.ckpt", 3);
  assert_int_equal(tw_checkpoint_verify(path), TW_OK); /* complete and durable */
  expect_latest(dir, 2);                               /* but the state file never listed it */

  tw_saver *saver = make_saver(&s);
  g_step = -1;
  assert_int_equal(tw_saver_restore_newest_good(NULL, saver, dir), TW_OK);
  assert_int_equal(g_step, 2); /* the state file's newest, not the newer unlisted one */
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, dir), TW_OK);
  assert_true(exists(path));
  assert_int_equal(save(saver, dir, 4), TW_OK);
  tw_saver_destroy(saver);
  assert_false(exists(path));
  assert_non_null(strstr(g_warnings, "Removed checkpoint"));
  assert_non_null(strstr(g_warnings, "model.ckpt-3: a save cut short"));
  expect_latest(dir, 4);
  const char *left[] = {"checkpoint", "model.ckpt-1", "model.ckpt-2", "model.ckpt-4", "best.ckpt-7"};
  expect_only(dir, left, 5);
  scratch_dir_destroy(&scratch);
}

/* C10: with max_to_keep 1 and a keep-every-N-hours period shorter than a save, every evicted checkpoint is
 * kept for good and leaves the list: unlisted on purpose. Only the one the killed save left goes. */
static void checkpoints_kept_for_good_stay(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[600];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  saver_settings s = {1, 1e-12, 3, 0};
  save_steps(dir, &s, 1, 2); /* 1 is kept for good, unlisted */
  run_killed(dir, "rename:state:before:1", save_in_child, &s);
  int64_t restored = 0;
  assert_int_equal(restore_recover_save(dir, &s, 4, &restored), TW_OK); /* evicts 2: kept for good */
  assert_int_equal(restored, 2);
  /* Cut short after the state file of step 5 dropped 4, which it keeps for good: 4 stays as well. */
  s.step = 5;
  run_killed(dir, "rename:state:after:1", save_in_child, &s);
  assert_int_equal(restore_recover_save(dir, &s, 6, &restored), TW_OK);
  assert_int_equal(restored, 5);
  for (int64_t step = 1; step <= 6; ++step) {
    ckpt(path, sizeof path, dir, "model.ckpt", step);
    if (exists(path) != (step != 3)) fail_msg("%s: expected %s", path, step != 3 ? "present" : "absent");
  }
  expect_latest(dir, 6);
  scratch_dir_destroy(&scratch);
}

/* C10/C12 with a lowered max_to_keep: cut short before the state file of step 4 (which evicts 1), the
 * next process keeps 1 listed until its recovery trims the list to 1 checkpoint and keeps 1 and 2 for
 * good: they stay, and only the unlisted 4 goes at its first save. */
static void a_checkpoint_kept_for_good_at_recovery_stays(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[600];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  saver_settings s = {3, 0, 4, 0};
  save_steps(dir, &s, 1, 3);
  run_killed(dir, "rename:state:before:1", save_in_child, &s);
  const saver_settings lowered = {1, 1e-12, 0, 0};
  assert_int_equal(recover_save(dir, &lowered, 5), TW_OK);
  for (int64_t step = 1; step <= 5; ++step) {
    ckpt(path, sizeof path, dir, "model.ckpt", step);
    if (exists(path) != (step != 4)) fail_msg("%s: expected %s", path, step != 4 ? "present" : "absent");
  }
  expect_latest(dir, 5);
  scratch_dir_destroy(&scratch);
}

/* C9/C10: cut short after the state file dropped the checkpoint max_to_keep evicts and before deleting
 * it (the save of 3 evicts 1): the next save deletes it, as the cut-short one would have. */
static void an_evicted_checkpoint_left_behind_goes_at_the_next_save(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[600];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  saver_settings s = {2, 0, 3, 0};
  save_steps(dir, &s, 1, 2);
  run_killed(dir, "rename:state:after:1", save_in_child, &s);
  ckpt(path, sizeof path, dir, "model.ckpt", 1);
  assert_true(exists(path)); /* listed nowhere: the state file names 2 and 3 */
  assert_int_equal(recover_save(dir, &s, 4), TW_OK);
  const char *left[] = {"checkpoint", "model.ckpt-3", "model.ckpt-4"};
  expect_only(dir, left, 3);
  expect_latest(dir, 4);
  scratch_dir_destroy(&scratch);
}

/* What stands under the unlisted checkpoint's name after the kill is not removed unless the saver wrote
 * it: a user's file, a FIFO, a directory stay, each with a warning naming it and why. */
static void a_file_the_saver_did_not_write_stays(void **state) {
  (void)state;
  static const char *const kinds[] = {"text", "fifo", "directory"};
  static const char *const reasons[] = {"its header is not a trainwatch checkpoint's", "is a FIFO (named pipe)",
                                        "is a directory"};
  for (int k = 0; k < 3; ++k) {
    scratch_dir scratch;
    char path[600];
    assert_int_equal(scratch_dir_create(&scratch), 0);
    const char *dir = scratch.path;
    saver_settings s = {5, 0, 3, 0};
    save_steps(dir, &s, 1, 2);
    run_killed(dir, "rename:state:before:1", save_in_child, &s);
    ckpt(path, sizeof path, dir, "model.ckpt", 3);
    assert_int_equal(unlink(path), 0);
    if (k == 0) {
      FILE *f = fopen(path, "w");
      assert_non_null(f);
      fputs("the user's notes\n", f);
      fclose(f);
    } else if (k == 1) {
      assert_int_equal(mkfifo(path, 0666), 0);
    } else {
      assert_int_equal(mkdir(path, 0777), 0);
    }
    g_warnings[0] = '\0';
    int64_t restored = 0;
    assert_int_equal(restore_recover_save(dir, &s, 4, &restored), TW_OK);
    assert_int_equal(restored, 2);
    assert_true(exists(path));
    if (strstr(g_warnings, "Not deleting") == NULL || strstr(g_warnings, "model.ckpt-3") == NULL ||
        strstr(g_warnings, reasons[k]) == NULL) {
      fail_msg("%s: warnings lack the refusal: %s", kinds[k], g_warnings);
    }
    expect_latest(dir, 4);
    scratch_dir_destroy(&scratch);
  }
}

/* When no listed checkpoint is intact, the restore falls back to the checkpoints found by name and takes
 * the unlisted one: the job resumes from it, so the next save keeps it. */
static void the_checkpoint_restored_from_stays(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[600];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  saver_settings s = {5, 0, 3, 0};
  save_steps(dir, &s, 1, 2);
  run_killed(dir, "rename:state:before:1", save_in_child, &s);
  for (int64_t step = 1; step <= 2; ++step) { /* every listed checkpoint cut short */
    ckpt(path, sizeof path, dir, "model.ckpt", step);
    assert_int_equal(truncate(path, 40), 0);
  }
  int64_t restored = 0;
  assert_int_equal(restore_recover_save(dir, &s, 4, &restored), TW_OK);
  assert_int_equal(restored, 3);
  ckpt(path, sizeof path, dir, "model.ckpt", 3);
  assert_true(exists(path));
  assert_int_equal(tw_checkpoint_verify(path), TW_OK);
  assert_null(strstr(g_warnings, "Removed checkpoint"));
  scratch_dir_destroy(&scratch);
}

/* Killed once the state file lists the new checkpoint (after its rename), or while re-saving a listed
 * step (after the checkpoint's rename, before the state file's): the checkpoint is listed, so it stays. */
static void a_listed_checkpoint_stays(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[600];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  saver_settings s = {5, 0, 3, 0};
  save_steps(dir, &s, 1, 2);
  run_killed(dir, "rename:state:after:1", save_in_child, &s);
  expect_latest(dir, 3);
  assert_int_equal(recover_save(dir, &s, 4), TW_OK);
  ckpt(path, sizeof path, dir, "model.ckpt", 3);
  assert_true(exists(path));

  s.step = 4; /* a re-save of the listed newest */
  run_killed(dir, "rename:index:after:1", save_in_child, &s);
  expect_latest(dir, 4);
  assert_int_equal(recover_save(dir, &s, 5), TW_OK);
  for (int64_t step = 1; step <= 5; ++step) {
    ckpt(path, sizeof path, dir, "model.ckpt", step);
    assert_true(exists(path));
    assert_int_equal(tw_checkpoint_verify(path), TW_OK);
  }
  assert_null(strstr(g_warnings, "Removed checkpoint"));
  scratch_dir_destroy(&scratch);
}

/* --- A sharded job of 4 ranks (threads) ------------------------------------------------------------ */

enum { kRanks = 4, kRows = 8, kCols = 3, kRowsPerRank = kRows / kRanks };

typedef struct job {
  thread_world *world;
  const char *dir;
  int runs;     /* one save per step, the first at creation */
  int restored; /* rows start at 0: the restore must set them */
  struct {
    tw_status status;
    int64_t created_step;
    int rows_restored;
    char message[300];
  } ranks[kRanks];
} job;

/* Row r's value at `step`: every element distinct, and another per step. */
static float row_value(int64_t step, int r, int c) { return (float)(step * 100 + r * kCols + c); }

typedef struct rank_state {
  job *job;
  int rank;
  float rows[kRowsPerRank * kCols];
} rank_state;

static void fill_rows(rank_state *st, int64_t step) {
  for (int r = 0; r < kRowsPerRank; ++r) {
    for (int c = 0; c < kCols; ++c) st->rows[r * kCols + c] = row_value(step, st->rank * kRowsPerRank + r, c);
  }
}

static tw_status advance_rows(void *user_data, tw_step_context *ctx) {
  rank_state *st = user_data;
  fill_rows(st, tw_step_context_global_step(ctx) + 1); /* the values of the step this run makes */
  return TW_OK;
}

static void run_rank(int rank, void *arg) {
  job *j = arg;
  rank_state st = {j, rank, {0}};
  if (!j->restored) fill_rows(&st, 0);
  tw_options *opts = NULL;
  tw_status s = thread_world_row_shard_options(&opts, j->world, rank, kRowsPerRank, kCols, st.rows, 30.0);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_IS_CHIEF, rank == 0);
  if (s == TW_OK) s = tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, j->dir);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 1);
  if (s == TW_OK) s = tw_options_set_none(opts, TW_OPT_SUMMARY_EVERY_N_STEPS);
  tw_session *session = NULL;
  if (s == TW_OK) s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0);
  tw_options_destroy(opts);
  if (s == TW_OK) j->ranks[rank].created_step = tw_session_global_step(session);
  if (s == TW_OK) {
    rank_state expected = {j, rank, {0}};
    fill_rows(&expected, j->ranks[rank].created_step);
    j->ranks[rank].rows_restored = memcmp(expected.rows, st.rows, sizeof st.rows) == 0;
  }
  for (int run = 0; s == TW_OK && run < j->runs; ++run) s = tw_session_run(session, NULL, 0, advance_rows, &st);
  if (s == TW_OK) s = tw_session_close(session);
  j->ranks[rank].status = s;
  if (s != TW_OK) snprintf(j->ranks[rank].message, sizeof j->ranks[rank].message, "%s", tw_last_error_message());
  if (session != NULL && tw_session_destroy(session) != TW_OK && s == TW_OK) j->ranks[rank].status = TW_INTERNAL;
}

static void run_job(const char *dir, void *arg) {
  job *j = arg;
  j->dir = dir;
  j->world = thread_world_create(kRanks);
  if (j->world == NULL || thread_world_run(j->world, run_rank, j) != 0) _exit(4);
  thread_world_destroy(j->world);
}

/* `step`'s index and its 4 parts all exist (present) or none does. */
static void expect_sharded_files(const char *dir, int64_t step, int present) {
  char path[600], part[700];
  ckpt(path, sizeof path, dir, "model.ckpt", step);
  if (exists(path) != present) fail_msg("%s: expected %s", path, present ? "present" : "absent");
  for (int p = 0; p < kRanks; ++p) {
    snprintf(part, sizeof part, "%s.part-%05d-of-%05d", path, p, kRanks);
    if (exists(part) != present) fail_msg("%s: expected %s", part, present ? "present" : "absent");
  }
}

/* A process saving steps 1 and 2 with max_to_keep=1, recycling files (the file of step 1 becomes the
 * spare, C15), then
 * step 3 with `point` armed: killed while it overwrites the spare. */
typedef struct recycling_save {
  saver_settings settings;
  const char *point;
} recycling_save;

static void save_while_recycling(const char *dir, void *arg) {
  const recycling_save *r = arg;
  fault_points_disarm(); /* run_killed's arming would count steps 1 and 2's writes */
  tw_saver *saver = make_saver(&r->settings);
  if (save(saver, dir, 1) != TW_OK || save(saver, dir, 2) != TW_OK) _exit(4);
  if (fault_points_arm(r->point, dir, 0) != 0) _exit(2);
  save(saver, dir, 3);
  tw_saver_destroy(saver);
}

/* The temporary files of `dir` (".<name>.tw-tmp-<pid>-<n>"). */
static int count_temporaries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int count = 0;
  const struct dirent *entry;
  while ((entry = readdir(d)) != NULL) count += strstr(entry->d_name, ".tw-tmp-") != NULL;
  closedir(d);
  return count;
}

/* C15 (with C14): a save killed after its second write into the recycled file of step 1 leaves that
 * file as a temporary file, new bytes over old, which nothing lists. Step 2 stays the newest and
 * restores; the next process removes the left-over and saves step 3, which restores bit-exact. */
static void a_save_killed_while_recycling_a_file_corrupts_nothing(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[600];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  const recycling_save r = {{1, 0, 3, 1}, "write:index:after:2"};
  run_killed(dir, r.point, save_while_recycling, (void *)&r);
  snprintf(path, sizeof path, "%s/.tw-spare-0", dir);
  assert_false(exists(path)); /* taken as step 3's temporary file */
  assert_int_equal(count_temporaries(dir), 1);
  ckpt(path, sizeof path, dir, "model.ckpt", 3);
  assert_false(exists(path));
  expect_latest(dir, 2);

  int64_t restored = 0;
  assert_int_equal(restore_recover_save(dir, &r.settings, 3, &restored), TW_OK);
  assert_int_equal(restored, 2);
  assert_int_equal(count_temporaries(dir), 0);
  expect_latest(dir, 3);
  tw_saver *saver = make_saver(&r.settings);
  memset(g_w, 0, sizeof g_w);
  assert_int_equal(tw_saver_restore(saver, path), TW_OK);
  for (int i = 0; i < 4; ++i) assert_true(g_w[i] == 3.0f + (float)i);
  assert_int_equal(g_step, 3);
  tw_saver_destroy(saver);
  scratch_dir_destroy(&scratch);
}

/* C14 with D16: the chief dies after writing the index of step 2 and before the state file lists it (the
 * third state-file rename: steps 0 and 1 came first). Step 2 is complete — it verifies through its index
 * — but unlisted. The next job's ranks all restore step 1, the state file's newest, by the restore vote;
 * its first save (at creation) removes step 2's index and every part. */
static void sharded_checkpoint_left_unlisted_goes_at_the_next_save(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[600];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  job killed;
  memset(&killed, 0, sizeof killed);
  killed.runs = 3;
  run_killed(dir, "rename:state:before:3", run_job, &killed);
  expect_sharded_files(dir, 2, 1);
  ckpt(path, sizeof path, dir, "model.ckpt", 2);
  if (tw_checkpoint_verify(path) != TW_OK) fail_msg("%s: %s", path, tw_last_error_message());
  expect_latest(dir, 1);

  job next;
  memset(&next, 0, sizeof next);
  next.restored = 1;
  run_job(dir, &next);
  for (int rank = 0; rank < kRanks; ++rank) {
    if (next.ranks[rank].status != TW_OK) fail_msg("rank %d: %s", rank, next.ranks[rank].message);
    assert_int_equal(next.ranks[rank].created_step, 1);
    assert_true(next.ranks[rank].rows_restored);
  }
  expect_sharded_files(dir, 2, 0);
  expect_sharded_files(dir, 1, 1);
  expect_sharded_files(dir, 0, 1);
  expect_latest(dir, 1);
  assert_non_null(strstr(g_warnings, "model.ckpt-2: a save cut short"));
  scratch_dir_destroy(&scratch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(single_checkpoint_left_unlisted_goes_at_the_next_save, setup, teardown),
      cmocka_unit_test_setup_teardown(checkpoints_kept_for_good_stay, setup, teardown),
      cmocka_unit_test_setup_teardown(an_evicted_checkpoint_left_behind_goes_at_the_next_save, setup, teardown),
      cmocka_unit_test_setup_teardown(a_checkpoint_kept_for_good_at_recovery_stays, setup, teardown),
      cmocka_unit_test_setup_teardown(a_file_the_saver_did_not_write_stays, setup, teardown),
      cmocka_unit_test_setup_teardown(a_listed_checkpoint_stays, setup, teardown),
      cmocka_unit_test_setup_teardown(the_checkpoint_restored_from_stays, setup, teardown),
      cmocka_unit_test_setup_teardown(sharded_checkpoint_left_unlisted_goes_at_the_next_save, setup, teardown),
      cmocka_unit_test_setup_teardown(a_save_killed_while_recycling_a_file_corrupts_nothing, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
