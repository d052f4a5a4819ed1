/* CheckpointSaverHook in a job with sharded variables (D17) follows the session it serves, not the
 * options it was created with: a hook the user creates from options holding only its frequency (what
 * TF's CheckpointSaverHook(checkpoint_dir, save_steps=…) and the Python package's hook do) still runs on
 * every rank and writes each rank's part; and every collective call of a save is made from the
 * session's thread, as trainwatch/distributed.h promises (an MPI job initialized with
 * MPI_THREAD_FUNNELED may call MPI from no other thread). Two ranks as threads (thread_world.h). */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include "scratch_dir.h"    /* first after the feature macros: it selects the POSIX feature level */

#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "thread_world.h"

enum { kRanks = 2, kRows = 2, kCols = 3, kRuns = 3 };

/* The collective of one rank, wrapped to count the calls made from a thread other than the rank's. */
typedef struct watched {
  thread_world *world;
  int rank;
  pthread_t thread;
  int foreign_calls; /* atomic */
} watched;

static void note_thread(watched *w) {
  if (!pthread_equal(pthread_self(), w->thread)) __atomic_add_fetch(&w->foreign_calls, 1, __ATOMIC_SEQ_CST);
}

static tw_status watched_allreduce(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout) {
  watched *w = (watched *)user_data;
  note_thread(w);
  const tw_collective inner = thread_world_collective(w->world, w->rank);
  return inner.allreduce_int64(thread_world_user_data(w->world, w->rank), values, count, op, timeout);
}

static tw_status watched_broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout) {
  watched *w = (watched *)user_data;
  note_thread(w);
  const tw_collective inner = thread_world_collective(w->world, w->rank);
  return inner.broadcast(thread_world_user_data(w->world, w->rank), data, size, root, timeout);
}

static tw_status watched_barrier(void *user_data, double timeout) {
  watched *w = (watched *)user_data;
  note_thread(w);
  const tw_collective inner = thread_world_collective(w->world, w->rank);
  return inner.barrier(thread_world_user_data(w->world, w->rank), timeout);
}

typedef struct job {
  thread_world *world;
  scratch_dir scratch; /* tests/common/scratch_dir.h */
  int users_hook;      /* 1: a CheckpointSaverHook of the user's; 0: MonitoredTrainingSession's own */
  watched collectives[kRanks];
  tw_status status[kRanks]; /* the first failure of the rank's create, runs or close */
  char message[kRanks][512];
} job;

static tw_status noop_step(void *user_data, tw_step_context *ctx) {
  (void)user_data, (void)ctx;
  return TW_OK;
}

/* The rank's options: its watched collective, its rows of w [kRanks·kRows, kCols] and a short timeout
 * (a rank left waiting fails the test quickly instead of hanging it). */
static tw_status rank_options(job *j, int rank, float *rows, tw_options **out) {
  watched *watch = &j->collectives[rank];
  tw_collective table = thread_world_collective(j->world, rank);
  table.allreduce_int64 = watched_allreduce;
  table.broadcast = watched_broadcast;
  table.barrier = watched_barrier;
  tw_options *opts = NULL;
  tw_status s = thread_world_row_shard_options(&opts, j->world, rank, kRows, kCols, rows, 5.0);
  if (s == TW_OK) s = tw_options_set_collective(opts, &table, watch); /* the world's, watched */
  if (s == TW_OK && !j->users_hook) s = tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, j->scratch.path);
  if (s == TW_OK && !j->users_hook) s = tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 1);
  /* Asked for explicitly: a sharded job's saves are synchronous whatever this says. */
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, 1);
  if (s != TW_OK) tw_options_destroy(opts);
  *out = s == TW_OK ? opts : NULL;
  return s;
}

/* The user's hook, created from options that know nothing of the job. */
static tw_status users_hook(const job *j, tw_hook **out) {
  tw_options *opts = NULL;
  tw_status s = tw_options_create(&opts);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 1);
  if (s == TW_OK) s = tw_checkpoint_saver_hook_create(out, j->scratch.path, opts, NULL, 0);
  tw_options_destroy(opts);
  return s;
}

static void note_failure(job *j, int rank, tw_status s) {
  if (j->status[rank] != TW_OK) return;
  j->status[rank] = s;
  snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
}

static void run_rank(int rank, void *arg) {
  job *j = (job *)arg;
  j->collectives[rank].thread = pthread_self();
  float rows[kRows * kCols];
  for (int i = 0; i < kRows * kCols; ++i) rows[i] = (float)(rank * 100 + i);
  tw_options *opts = NULL;
  tw_session *session = NULL;
  tw_status s = rank_options(j, rank, rows, &opts);
  if (s == TW_OK && j->users_hook) {
    tw_hook *hook = NULL;
    s = users_hook(j, &hook);
    if (s == TW_OK) s = tw_monitored_session_create(&session, opts, &hook, 1);
    tw_hook_destroy(hook);
  } else if (s == TW_OK) {
    s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0);
  }
  tw_options_destroy(opts);
  if (s != TW_OK) note_failure(j, rank, s);
  if (session == NULL) return;
  for (int run = 0; run < kRuns && s == TW_OK; ++run) {
    s = tw_session_run(session, NULL, 0, noop_step, NULL);
    if (s != TW_OK) note_failure(j, rank, s);
  }
  s = tw_session_close(session);
  if (s != TW_OK) note_failure(j, rank, s);
  s = tw_session_destroy(session);
  if (s != TW_OK) note_failure(j, rank, s);
}

static void run_job(job *j, int users) {
  memset(j, 0, sizeof *j);
  assert_int_equal(scratch_dir_create(&j->scratch), 0);
  j->users_hook = users;
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
  for (int r = 0; r < kRanks; ++r) {
    j->collectives[r].world = j->world;
    j->collectives[r].rank = r;
  }
  assert_int_equal(thread_world_run(j->world, run_rank, j), 0);
  thread_world_destroy(j->world);
  for (int r = 0; r < kRanks; ++r) {
    if (j->status[r] != TW_OK) print_message("rank %d: %s\n", r, j->message[r]);
    assert_int_equal(j->status[r], TW_OK);
  }
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Every save (B21 at creation, each of the kRuns steps) is committed: its index and both parts. */
static void expect_every_step_committed(const job *j) {
  for (int step = 0; step <= kRuns; ++step) {
    char path[400];
    snprintf(path, sizeof path, "%s/model.ckpt-%d", j->scratch.path, step);
    assert_true(exists(path));
    assert_int_equal(tw_checkpoint_verify(path), TW_OK);
    for (int part = 0; part < kRanks; ++part) {
      snprintf(path, sizeof path, "%s/model.ckpt-%d.part-%05d-of-%05d", j->scratch.path, step, part, kRanks);
      assert_true(exists(path));
    }
  }
  char latest[400];
  char expected[400];
  assert_int_equal(tw_latest_checkpoint(latest, sizeof latest, j->scratch.path), TW_OK);
  snprintf(expected, sizeof expected, "%s/model.ckpt-%d", j->scratch.path, kRuns);
  assert_string_equal(latest, expected);
}

static int count_event_files(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int count = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) count += strncmp(e->d_name, "events.out.tfevents", 19) == 0;
  closedir(d);
  return count;
}

static void remove_dir(const job *j) { scratch_dir_destroy(&j->scratch); }

/* D17 + B21/B22: the user's hook, from options without the collective or the shards, runs on both
 * ranks (D14 would keep it on the chief alone), synchronously: every step's checkpoint is committed,
 * and only the chief writes the event file of checkpoint_dir. */
static void a_users_checkpoint_saver_hook_saves_every_ranks_part_d17(void **state) {
  (void)state;
  job j;
  run_job(&j, 1);
  expect_every_step_committed(&j);
  assert_int_equal(count_event_files(j.scratch.path), 1);
  remove_dir(&j);
}

/* distributed.h: the collective is called from the thread that called the session function only —
 * also during the sharded saves of MonitoredTrainingSession's hook, which are synchronous even with
 * TW_OPT_ASYNC_CHECKPOINT set — and so is the user's hook's. */
static void sharded_saves_call_the_collective_from_the_sessions_thread_only(void **state) {
  (void)state;
  for (int users = 0; users <= 1; ++users) {
    job j;
    run_job(&j, users);
    expect_every_step_committed(&j);
    for (int r = 0; r < kRanks; ++r) assert_int_equal(j.collectives[r].foreign_calls, 0);
    remove_dir(&j);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_users_checkpoint_saver_hook_saves_every_ranks_part_d17),
      cmocka_unit_test(sharded_saves_call_the_collective_from_the_sessions_thread_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
