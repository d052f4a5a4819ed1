/* A failed collective operation makes no further call (D9): two ranks as threads (thread_world.h) with a
 * sharded variable, rank 1's collective failing inside a sharded save — the vote on the checkpoint's
 * parts. Whatever follows on either rank (the end-of-run vote, close's barrier, a later save of a
 * standalone saver) calls the table no more; every rank's error names the save's operation, not a vote
 * that followed it; and rank 0, left inside that operation, fails within one timeout, not two. */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include "scratch_dir.h"    /* first after the feature macros: it selects the POSIX feature level */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "thread_world.h"

enum { kRanks = 2, kRows = 2, kCols = 3, kFailingRank = 1 };
static const double kTimeoutSecs = 3.0;

/* One rank's table around the world's: counts the calls made after one of them failed, and fails
 * rank 1's first vote on a checkpoint's parts (a SUM of 3 int64 per rank) once armed. */
typedef struct counted {
  thread_world *world;
  int rank;
  int armed;
  int failed; /* a call of this rank returned an error */
  int calls_after_failure;
} counted;

static tw_status after_call(counted *c, tw_status status) {
  if (status != TW_OK) c->failed = 1;
  return status;
}

static int before_call(counted *c) {
  if (c->failed) ++c->calls_after_failure;
  return c->failed;
}

static tw_status counted_allreduce(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout) {
  counted *c = (counted *)user_data;
  before_call(c);
  if (c->armed && c->rank == kFailingRank && op == TW_REDUCE_SUM && count == 3 * kRanks) {
    c->armed = 0;
    return after_call(c, tw_set_error(TW_INTERNAL, "injected failure of the engine"));
  }
  const tw_collective inner = thread_world_collective(c->world, c->rank);
  return after_call(c, inner.allreduce_int64(thread_world_user_data(c->world, c->rank), values, count, op, timeout));
}

static tw_status counted_broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout) {
  counted *c = (counted *)user_data;
  before_call(c);
  const tw_collective inner = thread_world_collective(c->world, c->rank);
  return after_call(c, inner.broadcast(thread_world_user_data(c->world, c->rank), data, size, root, timeout));
}

static tw_status counted_barrier(void *user_data, double timeout) {
  counted *c = (counted *)user_data;
  before_call(c);
  const tw_collective inner = thread_world_collective(c->world, c->rank);
  return after_call(c, inner.barrier(thread_world_user_data(c->world, c->rank), timeout));
}

typedef struct job {
  thread_world *world;
  scratch_dir scratch; /* tests/common/scratch_dir.h */
  int standalone;      /* 1: a standalone saver per rank; 0: MonitoredTrainingSession */
  int64_t save_steps;  /* the session's: 1 fails the save after run 1, more the final save at close */
  counted collectives[kRanks];
  tw_status status[kRanks]; /* the first failure of the rank */
  char message[kRanks][1024];
  tw_status later[kRanks]; /* standalone: the save after the failed one */
  char later_message[kRanks][1024];
  double failing_secs[kRanks]; /* from arming to the end of the rank's last call */
} job;

static double now_secs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static tw_status noop_step(void *user_data, tw_step_context *ctx) {
  (void)user_data, (void)ctx;
  return TW_OK;
}

static void note_failure(job *j, int rank, tw_status s) {
  if (j->status[rank] != TW_OK) return;
  j->status[rank] = s;
  snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
}

static tw_status rank_options(job *j, int rank, float *rows, tw_options **out) {
  tw_collective table = thread_world_collective(j->world, rank);
  table.allreduce_int64 = counted_allreduce;
  table.broadcast = counted_broadcast;
  table.barrier = counted_barrier;
  tw_options *opts = NULL;
  tw_status s = thread_world_row_shard_options(&opts, j->world, rank, kRows, kCols, rows, kTimeoutSecs);
  if (s == TW_OK) s = tw_options_set_collective(opts, &table, &j->collectives[rank]);
  if (s == TW_OK) s = tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, j->scratch.path);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, j->save_steps);
  if (s != TW_OK) tw_options_destroy(opts);
  *out = s == TW_OK ? opts : NULL;
  return s;
}

/* MonitoredTrainingSession: the save at creation commits; the next save — after run 1, or end's final
 * save — fails on rank 1. The rank then closes its session as a training loop's `with` block does. */
static void session_rank(job *j, int rank, tw_options *opts) {
  tw_session *session = NULL;
  tw_status s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0);
  if (s != TW_OK) note_failure(j, rank, s);
  if (session == NULL) return;
  j->collectives[rank].armed = 1;
  const double start = now_secs();
  for (int run = 0; run < 3 && s == TW_OK; ++run) {
    s = tw_session_run(session, NULL, 0, noop_step, NULL);
    if (s != TW_OK) note_failure(j, rank, s);
  }
  s = tw_session_close(session);
  if (s != TW_OK) note_failure(j, rank, s);
  j->failing_secs[rank] = now_secs() - start;
  s = tw_session_destroy(session);
  if (s != TW_OK) note_failure(j, rank, s);
}

/* A standalone saver: its first save fails on rank 1; the save after it makes no call either. */
static void saver_rank(job *j, int rank, tw_options *opts) {
  tw_saver *saver = NULL;
  tw_status s = tw_saver_create_from_options(&saver, opts);
  if (s != TW_OK) note_failure(j, rank, s);
  if (saver == NULL) return;
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", j->scratch.path);
  j->collectives[rank].armed = 1;
  const double start = now_secs();
  const char *path = NULL;
  s = tw_saver_save(&path, saver, prefix, 1);
  if (s != TW_OK) note_failure(j, rank, s);
  j->later[rank] = tw_saver_save(&path, saver, prefix, 2);
  snprintf(j->later_message[rank], sizeof j->later_message[rank], "%s", tw_last_error_message());
  j->failing_secs[rank] = now_secs() - start;
  tw_saver_destroy(saver);
}

static void run_rank(int rank, void *arg) {
  job *j = (job *)arg;
  float rows[kRows * kCols];
  for (int i = 0; i < kRows * kCols; ++i) rows[i] = (float)(rank * 100 + i);
  tw_options *opts = NULL;
  const tw_status s = rank_options(j, rank, rows, &opts);
  if (s != TW_OK) {
    note_failure(j, rank, s);
    return;
  }
  if (j->standalone) {
    saver_rank(j, rank, opts);
  } else {
    session_rank(j, rank, opts);
  }
  tw_options_destroy(opts);
}

static void run_job(job *j, int standalone, int64_t save_steps) {
  memset(j, 0, sizeof *j);
  j->save_steps = save_steps;
  assert_int_equal(scratch_dir_create(&j->scratch), 0);
  j->standalone = standalone;
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
  for (int r = 0; r < kRanks; ++r) {
    j->collectives[r].world = j->world;
    j->collectives[r].rank = r;
  }
  assert_int_equal(thread_world_run(j->world, run_rank, j), 0);
  thread_world_destroy(j->world);
  scratch_dir_destroy(&j->scratch);
}

/* Every rank failed in the save's vote, made no call after its failure, and ended within one timeout
 * of the failing save (two would mean it waited again, in a vote the failed rank should not make). */
static void expect_one_failure_per_rank(const job *j) {
  for (int r = 0; r < kRanks; ++r) {
    print_message("# rank %d (%.2f s): %s\n", r, j->failing_secs[r], j->message[r]);
    assert_int_not_equal(j->status[r], TW_OK);
    assert_true(j->collectives[r].failed);
    assert_int_equal(j->collectives[r].calls_after_failure, 0);
    assert_non_null(strstr(j->message[r], "voting on the parts of checkpoint"));
    assert_null(strstr(j->message[r], "at the end of run"));
    assert_true(j->failing_secs[r] < 1.8 * kTimeoutSecs);
  }
  assert_int_equal(j->status[kFailingRank], TW_INTERNAL);
  assert_non_null(strstr(j->message[kFailingRank], "injected failure of the engine"));
  assert_int_equal(j->status[0], TW_DEADLINE_EXCEEDED);
}

/* D9: a session whose sharded save's collective failed votes no more, and closes without a barrier. */
static void a_failed_save_collective_ends_every_call_of_the_session_d9(void **state) {
  (void)state;
  job j;
  run_job(&j, 0, 1);
  expect_one_failure_per_rank(&j);
}

/* D9, D12, B23: the same in end's final save: close then meets no one in its barrier. */
static void a_failed_final_save_collective_skips_the_close_barrier_d9(void **state) {
  (void)state;
  job j;
  run_job(&j, 0, 100);
  expect_one_failure_per_rank(&j);
}

/* D9: a standalone saver's next save fails at once with the first failure, calling nothing. */
static void a_failed_save_collective_ends_every_call_of_a_standalone_saver_d9(void **state) {
  (void)state;
  job j;
  run_job(&j, 1, 1);
  expect_one_failure_per_rank(&j);
  for (int r = 0; r < kRanks; ++r) {
    assert_int_equal(j.later[r], j.status[r]);
    assert_non_null(strstr(j.later_message[r], "voting on the parts of checkpoint"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_failed_save_collective_ends_every_call_of_the_session_d9),
      cmocka_unit_test(a_failed_final_save_collective_skips_the_close_barrier_d9),
      cmocka_unit_test(a_failed_save_collective_ends_every_call_of_a_standalone_saver_d9),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
