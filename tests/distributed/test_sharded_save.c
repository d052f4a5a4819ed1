/* Sharded checkpoints written by a job of 4 ranks (threads of thread_world.h), each running
 * MonitoredTrainingSession (T2: CheckpointSaverHook at creation, every N steps and at end, B21–B23) over
 * the same checkpoint dir with rows of one [8, 3] float32 tensor (tw_options_add_shard) and a replicated
 * bias: every rank writes its part, the chief commits the index and the state file; a failed part means
 * no commit on any rank; retention deletes whole checkpoints; standalone savers created from the ranks'
 * options (tw_saver_create_from_options) commit alike. Every save decision is the same on every rank
 * (D17): a NaN in one rank's rows skips the save on all, the chief's clock triggers every rank's save,
 * and the preemption save (D10) is written by every rank. Only the public C API is used. */
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <math.h>
#include <pthread.h>
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
#include <trainwatch.h>

#include "thread_world.h"

enum { kRanks = 4, kRows = 8, kCols = 3, kRowsPerRank = kRows / kRanks };

/* What one rank did, checked on the main thread (cmocka asserts must not run on the ranks' threads). */
typedef struct rank_result {
  tw_status create;
  tw_status first_failed_run; /* TW_OK when every run succeeded */
  int failed_at_run;          /* the run (1-based) that failed, 0 if none */
  tw_status close;
  int64_t created_step; /* the global step after creation (what it restored) */
  int rows_restored;    /* after creation, the rank's rows hold global_value */
  int preempted;
  unsigned long long part_inodes[2]; /* recycle_rank: its part's inode after the first and third save */
  char message[512];
} rank_result;

typedef struct job {
  thread_world *world;
  scratch_dir scratch; /* tests/common/scratch_dir.h */
  int64_t save_steps;
  int64_t max_to_keep;
  int runs;
  double chief_secs;       /* > 0: TW_OPT_CHECKPOINT_EVERY_N_SECS, the other ranks' clocks never fire */
  int nan_rank;            /* this rank's rows hold a NaN after run nan_run (-1: none) ... */
  int nan_run, finite_run; /* ... until run finite_run */
  int preempt_run;         /* > 0: rank 1 notes a preemption before this run */
  int zero_rows;           /* the ranks start with rows of 0 (what a restore must overwrite) */
  int recycle;             /* TW_OPT_CHECKPOINT_RECYCLE_FILES (C15) */
  struct series *series;   /* series_rank's saves */
  rank_result results[kRanks];
} job;

/* Saves one after another by a standalone saver per rank: save k writes step[k] into the job's dir, or
 * into its subdirectory "other" when other[k]. Per rank and save: the status and how many collective
 * operations it took. */
enum { kSeries = 3 };
typedef struct series {
  int64_t step[kSeries];
  int other[kSeries];
  tw_status status[kRanks][kSeries];
  long operations[kRanks][kSeries];
  char message[kRanks][512]; /* the first failure's */
} series;

/* The value of row r, column c of the global tensor: every element distinct. */
static float global_value(int r, int c) { return (float)(r * kCols + c) + 0.25f; }

/* One rank's run: its rows and which run this is, for the NaN case. */
typedef struct step_state {
  const struct job *job;
  int rank, run;
  float *rows;
} step_state;

static tw_status rank_step(void *user_data, tw_step_context *ctx) {
  (void)ctx;
  const step_state *st = (const step_state *)user_data;
  if (st->rank == st->job->nan_rank && st->run == st->job->nan_run) st->rows[1] = (float)NAN;
  if (st->rank == st->job->nan_rank && st->run == st->job->finite_run)
    st->rows[1] = global_value(st->rank * kRowsPerRank, 1);
  return TW_OK;
}

static void remember_error(rank_result *result) {
  if (result->message[0] == '\0') snprintf(result->message, sizeof result->message, "%s", tw_last_error_message());
}

/* A rank's variables: its rows of w (a shard) and the replicated bias. */
typedef struct rank_state {
  float rows[kRowsPerRank * kCols];
  float bias[kCols];
} rank_state;

/* The options of `rank`: the job's collective, the shard of w, the bias, and the checkpoint settings. */
static tw_status rank_options(job *j, int rank, rank_state *state, tw_options **out) {
  for (int r = 0; r < kRowsPerRank; ++r) {
    for (int c = 0; c < kCols; ++c)
      state->rows[r * kCols + c] = j->zero_rows ? 0.0f : global_value(rank * kRowsPerRank + r, c);
  }
  const float bias[kCols] = {1.5f, -2.5f, 3.5f};
  memcpy(state->bias, bias, sizeof bias);
  int64_t bias_shape[1] = {kCols};
  tw_tensor b = TW_TENSOR_INIT;
  b.name = "bias";
  b.dtype = TW_FLOAT32;
  b.ndim = 1;
  b.shape = bias_shape;
  b.data = state->bias;

  tw_options *opts = NULL;
  /* Long enough for any honest exchange; a rank left waiting (a save decided alone) fails the job. */
  tw_status s = thread_world_row_shard_options(&opts, j->world, rank, kRowsPerRank, kCols, state->rows, 30.0);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_IS_CHIEF, rank == 0);
  if (s == TW_OK) s = tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, j->scratch.path);
  if (s == TW_OK && j->chief_secs > 0) {
    s = tw_options_set_double(opts, TW_OPT_CHECKPOINT_EVERY_N_SECS, rank == 0 ? j->chief_secs : 1e9);
  } else if (s == TW_OK) {
    s = tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, j->save_steps);
  }
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_MAX_TO_KEEP, j->max_to_keep);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_CHECKPOINT_RECYCLE_FILES, j->recycle);
  if (s == TW_OK) s = tw_options_set_none(opts, TW_OPT_SUMMARY_EVERY_N_STEPS);
  if (s == TW_OK) s = tw_options_add_variable(opts, &b);
  if (s != TW_OK) {
    tw_options_destroy(opts);
    opts = NULL;
  }
  *out = opts;
  return s;
}

static void run_rank(int rank, void *arg) {
  job *j = (job *)arg;
  rank_result *result = &j->results[rank];
  memset(result, 0, sizeof *result);
  rank_state state;
  tw_options *opts = NULL;
  tw_status s = rank_options(j, rank, &state, &opts);
  tw_session *session = NULL;
  if (s == TW_OK) s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0);
  result->create = s;
  if (s != TW_OK) remember_error(result);
  tw_options_destroy(opts);
  if (session == NULL) return;
  result->created_step = tw_session_global_step(session);
  result->rows_restored = 1;
  for (int r = 0; r < kRowsPerRank; ++r) {
    for (int c = 0; c < kCols; ++c) {
      if (state.rows[r * kCols + c] != global_value(rank * kRowsPerRank + r, c)) result->rows_restored = 0;
    }
  }
  step_state st = {j, rank, 0, state.rows};
  for (int run = 1; run <= j->runs && !tw_session_should_stop(session); ++run) {
    if (run == j->preempt_run && rank == 1 && tw_session_notify_preemption(session) != TW_OK) remember_error(result);
    st.run = run;
    s = tw_session_run(session, NULL, 0, rank_step, &st);
    if (s != TW_OK) {
      result->first_failed_run = s;
      result->failed_at_run = run;
      remember_error(result);
      break;
    }
  }
  result->close = tw_session_close(session);
  result->preempted = tw_session_preempted(session);
  if (result->close != TW_OK) remember_error(result);
  if (tw_session_destroy(session) != TW_OK) remember_error(result);
}

/* A standalone saver (tw_saver_create_from_options) over the rank's variables in `state`, with the
 * rank's result cleared; NULL, with the failure in the result, when it cannot be created. */
static tw_saver *rank_saver(job *j, int rank, rank_state *state) {
  rank_result *result = &j->results[rank];
  memset(result, 0, sizeof *result);
  tw_options *opts = NULL;
  tw_saver *saver = NULL;
  tw_status s = rank_options(j, rank, state, &opts);
  if (s == TW_OK) s = tw_saver_create_from_options(&saver, opts);
  tw_options_destroy(opts); /* the saver keeps what it needs */
  result->create = s;
  if (s != TW_OK) remember_error(result);
  return saver;
}

/* The same rank saving through a standalone saver (tw_saver_create_from_options) at step 5. */
static void save_rank(int rank, void *arg) {
  job *j = (job *)arg;
  rank_result *result = &j->results[rank];
  rank_state state;
  tw_saver *saver = rank_saver(j, rank, &state);
  if (saver == NULL) return;
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", j->scratch.path);
  const char *path = NULL;
  const tw_status s = tw_saver_save(&path, saver, prefix, 5);
  if (s != TW_OK) {
    result->first_failed_run = s;
    result->failed_at_run = 1;
    remember_error(result);
  } else {
    snprintf(result->message, sizeof result->message, "%s", path);
  }
  tw_saver_destroy(saver);
}

static void series_rank(int rank, void *arg) {
  job *j = (job *)arg;
  series *se = j->series;
  rank_state state;
  tw_saver *saver = rank_saver(j, rank, &state);
  if (saver == NULL) return;
  for (int k = 0; k < kSeries; ++k) {
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s%s/model.ckpt", j->scratch.path, se->other[k] ? "/other" : "");
    const long before = thread_world_operations(j->world, rank);
    const char *path = NULL;
    se->status[rank][k] = tw_saver_save(&path, saver, prefix, se->step[k]);
    if (se->status[rank][k] != TW_OK && se->message[rank][0] == '\0')
      snprintf(se->message[rank], sizeof se->message[rank], "%s", tw_last_error_message());
    se->operations[rank][k] = thread_world_operations(j->world, rank) - before;
  }
  tw_saver_destroy(saver);
}

static void make_job(job *j) {
  memset(j, 0, sizeof *j);
  assert_int_equal(scratch_dir_create(&j->scratch), 0);
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
  j->save_steps = 2;
  j->max_to_keep = 5;
  j->runs = 3;
  j->nan_rank = -1;
}

static void run_job(job *j) { assert_int_equal(thread_world_run(j->world, run_rank, j), 0); }

static void end_job(job *j) {
  thread_world_destroy(j->world);
  scratch_dir_destroy(&j->scratch);
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void checkpoint_path(char *out, size_t size, const job *j, int64_t step) {
  snprintf(out, size, "%s/model.ckpt-%lld", j->scratch.path, (long long)step);
}

static void part_path(char *out, size_t size, const job *j, int64_t step, int part) {
  snprintf(out, size, "%s/model.ckpt-%lld.part-%05d-of-%05d", j->scratch.path, (long long)step, part, kRanks);
}

/* The index and every part of `step` exist (or none of them does). */
static void expect_checkpoint_files(const job *j, int64_t step, int present) {
  char path[400];
  checkpoint_path(path, sizeof path, j, step);
  assert_int_equal(exists(path), present);
  for (int part = 0; part < kRanks; ++part) {
    part_path(path, sizeof path, j, step, part);
    if (exists(path) != present) fail_msg("%s: expected %s", path, present ? "present" : "absent");
  }
}

/* Each part is an ordinary checkpoint that verifies and holds its rank's rows of w under the global
 * name; the chief's part also holds the replicated variables. */
static void expect_parts_hold_their_rows(const job *j, int64_t step) {
  char path[400];
  for (int part = 0; part < kRanks; ++part) {
    part_path(path, sizeof path, j, step, part);
    if (tw_checkpoint_verify(path) != TW_OK) fail_msg("%s does not verify: %s", path, tw_last_error_message());
    float rows[kRowsPerRank * kCols] = {0};
    int64_t shape[2] = {kRowsPerRank, kCols};
    tw_tensor dest = TW_TENSOR_INIT;
    dest.name = "w";
    dest.dtype = TW_FLOAT32;
    dest.ndim = 2;
    dest.shape = shape;
    dest.data = rows;
    assert_int_equal(tw_checkpoint_load_variable(path, &dest), TW_OK);
    for (int r = 0; r < kRowsPerRank; ++r) {
      for (int c = 0; c < kCols; ++c) assert_true(rows[r * kCols + c] == global_value(part * kRowsPerRank + r, c));
    }
    float bias[kCols] = {0};
    int64_t bias_shape[1] = {kCols};
    tw_tensor bias_dest = TW_TENSOR_INIT;
    bias_dest.name = "bias";
    bias_dest.dtype = TW_FLOAT32;
    bias_dest.ndim = 1;
    bias_dest.shape = bias_shape;
    bias_dest.data = bias;
    const tw_status loaded = tw_checkpoint_load_variable(path, &bias_dest);
    if (part == 0) {
      assert_int_equal(loaded, TW_OK);
      assert_true(bias[0] == 1.5f && bias[1] == -2.5f && bias[2] == 3.5f);
    } else {
      assert_int_equal(loaded, TW_NOT_FOUND); /* replicated variables are written once, by the chief */
    }
  }
}

static void expect_latest(const job *j, int64_t step) {
  char latest[400], expected[400];
  assert_int_equal(tw_latest_checkpoint(latest, sizeof latest, j->scratch.path), TW_OK);
  checkpoint_path(expected, sizeof expected, j, step);
  assert_string_equal(latest, expected);
}

/* The index reads as whole tensors: list_variables gives the global shape, load_variable assembles w
 * from the 4 parts bit-exact, and verify checks every part. */
static void expect_index_reads_whole_tensors(const job *j, int64_t step) {
  char path[400];
  checkpoint_path(path, sizeof path, j, step);
  if (tw_checkpoint_verify(path) != TW_OK) fail_msg("%s does not verify: %s", path, tw_last_error_message());
  tw_checkpoint_variables *list = NULL;
  assert_int_equal(tw_checkpoint_list_variables(&list, path), TW_OK);
  int found_w = 0;
  for (size_t i = 0; i < tw_checkpoint_variables_count(list); ++i) {
    tw_tensor entry = TW_TENSOR_INIT;
    assert_int_equal(tw_checkpoint_variables_at(&entry, list, i), TW_OK);
    if (strcmp(entry.name, "w") != 0) continue;
    found_w = 1;
    assert_int_equal(entry.ndim, 2);
    assert_int_equal(entry.shape[0], kRows);
    assert_int_equal(entry.shape[1], kCols);
  }
  tw_checkpoint_variables_destroy(list);
  assert_true(found_w);
  float whole[kRows * kCols] = {0};
  int64_t shape[2] = {kRows, kCols};
  tw_tensor dest = TW_TENSOR_INIT;
  dest.name = "w";
  dest.dtype = TW_FLOAT32;
  dest.ndim = 2;
  dest.shape = shape;
  dest.data = whole;
  assert_int_equal(tw_checkpoint_load_variable(path, &dest), TW_OK);
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) assert_true(whole[r * kCols + c] == global_value(r, c));
  }
  /* A box-shaped destination is not the global tensor: a clear error naming the variable. */
  shape[0] = kRowsPerRank;
  assert_int_equal(tw_checkpoint_load_variable(path, &dest), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "'w'"));
}

/* A part changed after the commit no longer matches its index: verify and load refuse it. */
static void expect_changed_part_refused(const job *j, int64_t step) {
  char path[400];
  part_path(path, sizeof path, j, step, 3);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  assert_int_equal(fputc(0, f), 0); /* one byte longer: the size the index pinned differs */
  assert_int_equal(fclose(f), 0);
  checkpoint_path(path, sizeof path, j, step);
  assert_int_equal(tw_checkpoint_verify(path), TW_DATA_LOSS);
  assert_non_null(strstr(tw_last_error_message(), "part-00003-of-00004"));
  float whole[kRows * kCols] = {0};
  int64_t shape[2] = {kRows, kCols};
  tw_tensor dest = TW_TENSOR_INIT;
  dest.name = "w";
  dest.dtype = TW_FLOAT32;
  dest.ndim = 2;
  dest.shape = shape;
  dest.data = whole;
  assert_int_equal(tw_checkpoint_load_variable(path, &dest), TW_DATA_LOSS);
  for (int i = 0; i < kRows * kCols; ++i) assert_true(whole[i] == 0.0f); /* untouched */
}

/* Step `step` is committed: its index and every part exist, and each part holds its rank's rows. */
static void expect_committed(const job *j, int64_t step) {
  expect_checkpoint_files(j, step, 1);
  expect_parts_hold_their_rows(j, step);
}

static void expect_all_ok(const job *j) {
  for (int rank = 0; rank < kRanks; ++rank) {
    const rank_result *r = &j->results[rank];
    if (r->create != TW_OK || r->first_failed_run != TW_OK || r->close != TW_OK) {
      fail_msg("rank %d: create %d, run %d failed %d, close %d: %s", rank, r->create, r->failed_at_run,
               r->first_failed_run, r->close, r->message);
    }
  }
}

/* T2 + B21/B23 on every rank: saves at creation (step 0), at step 2 and at end (step 3); each is one
 * index plus 4 parts, and the state file names the newest. */
static void every_rank_writes_its_part_and_the_chief_commits(void **state) {
  (void)state;
  job j;
  make_job(&j);
  run_job(&j);
  expect_all_ok(&j);
  for (int64_t step = 0; step <= 3; ++step) {
    if (step == 1) continue;
    expect_committed(&j, step);
  }
  expect_checkpoint_files(&j, 1, 0);
  expect_latest(&j, 3);
  expect_index_reads_whole_tensors(&j, 3);
  expect_changed_part_refused(&j, 3);
  end_job(&j);
}

/* Standalone savers of the 4 ranks, created from each rank's options, commit one sharded checkpoint as
 * the sessions do: 4 parts and the index, listed in the state file, readable whole. */
static void savers_from_options_commit_one_sharded_checkpoint(void **state) {
  (void)state;
  job j;
  make_job(&j);
  assert_int_equal(thread_world_run(j.world, save_rank, &j), 0);
  expect_all_ok(&j);
  char expected[400];
  checkpoint_path(expected, sizeof expected, &j, 5);
  for (int rank = 0; rank < kRanks; ++rank) assert_string_equal(j.results[rank].message, expected);
  expect_committed(&j, 5);
  expect_latest(&j, 5);
  expect_index_reads_whole_tensors(&j, 5);
  end_job(&j);
}

static void saver_from_options_checks_its_arguments(void **state) {
  (void)state;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_saver_create_from_options(NULL, opts), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "out"));
  tw_saver *saver = NULL;
  assert_int_equal(tw_saver_create_from_options(&saver, NULL), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "opts"));
  tw_options_destroy(opts);
}

/* A rank whose part cannot be written (a directory stands where its part of step 2 goes): nobody
 * commits step 2, every rank fails that run with a message naming the rank, the other ranks' parts
 * are gone and step 0 stays the newest checkpoint. */
static void a_failed_part_means_no_commit_on_any_rank(void **state) {
  (void)state;
  job j;
  make_job(&j);
  char blocker[400];
  part_path(blocker, sizeof blocker, &j, 2, 2);
  assert_int_equal(mkdir(blocker, 0700), 0);
  run_job(&j);
  for (int rank = 0; rank < kRanks; ++rank) {
    const rank_result *r = &j.results[rank];
    assert_int_equal(r->create, TW_OK);
    if (r->failed_at_run != 2)
      fail_msg("rank %d: failed at run %d (%d): %s", rank, r->failed_at_run, r->first_failed_run, r->message);
    assert_int_not_equal(r->first_failed_run, TW_OK);
    /* Every rank ends the run with the same failure (D9: the lowest failing rank's message), which
     * names the rank whose part could not be written and quotes that rank's own error. */
    const char *needles[] = {"rank(s) 2 failed", "rank 2: Saving part", "part-00002-of-00004 failed: rename"};
    for (int n = 0; n < 3; ++n) {
      if (strstr(r->message, needles[n]) == NULL)
        fail_msg("rank %d's message lacks '%s': %s", rank, needles[n], r->message);
    }
  }
  char path[400];
  checkpoint_path(path, sizeof path, &j, 2);
  assert_false(exists(path));
  for (int part = 0; part < kRanks; ++part) {
    if (part == 2) continue;
    part_path(path, sizeof path, &j, 2, part);
    assert_false(exists(path));
  }
  expect_committed(&j, 0);
  expect_latest(&j, 0);
  assert_int_equal(rmdir(blocker), 0);
  end_job(&j);
}

/* The rounds of a sharded save (D17: the commit adds one vote over the parts' own writing): the
 * first save of a saver agrees on the layout after the chief prepared the directory (its lock, its
 * cleaning) — 4 collective operations: 2 of layout (the first carrying the chief's preparation), vote,
 * outcome —; every later save into the
 * same directory is the vote and the outcome alone, the chief preparing while the others write. C9 with
 * max_to_keep 1: the evicted checkpoints, deleted after the outcome, are gone when the save returns. */
static void a_steady_save_is_one_vote_and_one_outcome(void **state) {
  (void)state;
  job j;
  make_job(&j);
  j.max_to_keep = 1;
  series se = {.step = {1, 2, 3}};
  j.series = &se;
  assert_int_equal(thread_world_run(j.world, series_rank, &j), 0);
  const long expected[kSeries] = {4, 2, 2};
  for (int rank = 0; rank < kRanks; ++rank) {
    for (int k = 0; k < kSeries; ++k) {
      if (se.status[rank][k] != TW_OK)
        fail_msg("rank %d, save %d: %d: %s", rank, k, se.status[rank][k], se.message[rank]);
      if (se.operations[rank][k] != expected[k])
        fail_msg("rank %d, save %d: %ld collective operations, expected %ld", rank, k, se.operations[rank][k],
                 expected[k]);
    }
  }
  expect_checkpoint_files(&j, 1, 0);
  expect_checkpoint_files(&j, 2, 0);
  expect_committed(&j, 3);
  expect_latest(&j, 3);
  end_job(&j);
}

/* Another saver, of this process, holding the job dir's subdirectory "other" (its lock): what a second
 * job writing there looks like to the chief. */
static tw_saver *hold_other_dir(const job *j, float *w) {
  char other[300];
  snprintf(other, sizeof other, "%s/other", j->scratch.path);
  assert_int_equal(mkdir(other, 0700), 0);
  tw_tensor var = TW_TENSOR_INIT;
  var.dtype = TW_FLOAT32, var.name = "w", var.data = w;
  tw_saver *holder = NULL;
  assert_int_equal(tw_saver_create(&holder, &var, 1), TW_OK);
  char prefix[320];
  snprintf(prefix, sizeof prefix, "%s/held.ckpt", other);
  const char *written = NULL;
  assert_int_equal(tw_saver_save(&written, holder, prefix, 1), TW_OK); /* takes the directory's lock */
  return holder;
}

/* Save k of the series went into the held directory: it failed on every rank with the chief's reason,
 * naming the chief (D17) — and left nothing there; every other save succeeded. */
static void expect_held_save_failed(const job *j, const series *se, int k) {
  for (int rank = 0; rank < kRanks; ++rank) {
    for (int other = 0; other < kSeries; ++other) {
      if (other != k && se->status[rank][other] != TW_OK)
        fail_msg("rank %d: save %d: %d: %s", rank, other, se->status[rank][other], se->message[rank]);
    }
    if (se->status[rank][k] != TW_FAILED_PRECONDITION || strstr(se->message[rank], "rank 0 of 4: ") == NULL ||
        strstr(se->message[rank], "is in use") == NULL)
      fail_msg("rank %d: save into a held directory: %d: %s", rank, se->status[rank][k], se->message[rank]);
  }
  char path[400];
  for (int part = 0; part < kRanks; ++part) {
    snprintf(path, sizeof path, "%s/other/model.ckpt-%lld.part-%05d-of-%05d", j->scratch.path, (long long)se->step[k],
             part, kRanks);
    assert_false(exists(path));
  }
  snprintf(path, sizeof path, "%s/other/model.ckpt-%lld", j->scratch.path, (long long)se->step[k]);
  assert_false(exists(path));
}

/* Saves of steps 1, 2 and 3, save `held` into the held directory and the others into the job's: the
 * held one fails on every rank, the others commit, each save taking `operations[k]` collective
 * operations on every rank. */
static void run_series_with_one_held_save(int held, const long operations[kSeries]) {
  job j;
  make_job(&j);
  float w = 1;
  tw_saver *holder = hold_other_dir(&j, &w);
  series se = {.step = {1, 2, 3}};
  se.other[held] = 1;
  j.series = &se;
  assert_int_equal(thread_world_run(j.world, series_rank, &j), 0);
  expect_held_save_failed(&j, &se, held);
  for (int rank = 0; rank < kRanks; ++rank) {
    for (int k = 0; k < kSeries; ++k) assert_int_equal(se.operations[rank][k], operations[k]);
  }
  for (int k = 0; k < kSeries; ++k) {
    if (k != held) expect_committed(&j, se.step[k]);
  }
  expect_latest(&j, 3);
  tw_saver_destroy(holder);
  end_job(&j);
}

/* The chief failing to prepare a save (another writer holds the directory's lock: two jobs in one
 * directory) fails it on every rank before any part is written and commits nothing there: one round,
 * the preparation's, then the chief's message (a string: 2 broadcasts); the next save, into the saver's
 * own directory, prepares again (3 operations: prepare, vote, outcome) and commits. */
static void the_chief_failing_to_prepare_commits_nothing(void **state) {
  (void)state;
  const long operations[kSeries] = {4, 3, 3};
  run_series_with_one_held_save(1, operations);
}

/* The same on a saver's first save, whose preparation travels with the layout's first round: that
 * round and the chief's message are taken (3 operations), and the next save agrees on the layout and
 * commits (4). */
static void a_first_save_the_chief_cannot_prepare_commits_nothing(void **state) {
  (void)state;
  const long operations[kSeries] = {3, 4, 2};
  run_series_with_one_held_save(0, operations);
}

/* A part that changes between the vote and the commit (the chief's preparation runs while the other
 * ranks write, and it removes files of the directory; or another process touches the directory) is
 * caught by the chief before it writes the index: the save fails on every rank with the chief's reason,
 * the previous checkpoint stays the latest, and the next save commits. Here rank 1's part of step 2
 * grows by a byte once the chief has heard the vote (its 6th operation: 1 creating the saver, 4 for the
 * first save, then the vote). */
typedef struct grow_part {
  char path[400];
  int grown;
} grow_part;

static void grow_part_file(void *arg) {
  grow_part *g = (grow_part *)arg;
  FILE *f = fopen(g->path, "ab");
  if (f == NULL) return;
  g->grown = fputc(0, f) == 0;
  if (fclose(f) != 0) g->grown = 0;
}

static void a_part_changed_before_the_commit_commits_nothing(void **state) {
  (void)state;
  job j;
  make_job(&j);
  grow_part g = {.grown = 0};
  part_path(g.path, sizeof g.path, &j, 2, 1);
  thread_world_after(j.world, 0, 6, grow_part_file, &g);
  series se = {.step = {1, 2, 3}};
  j.series = &se;
  assert_int_equal(thread_world_run(j.world, series_rank, &j), 0);
  assert_true(g.grown);
  for (int rank = 0; rank < kRanks; ++rank) {
    if (se.status[rank][0] != TW_OK || se.status[rank][2] != TW_OK)
      fail_msg("rank %d: saves %d, %d: %s", rank, se.status[rank][0], se.status[rank][2], se.message[rank]);
    const char *needle = rank == 0 ? "changed after its rank voted" : "was not committed";
    if (se.status[rank][1] != TW_ABORTED || strstr(se.message[rank], needle) == NULL)
      fail_msg("rank %d: save of a changed part: %d: %s", rank, se.status[rank][1], se.message[rank]);
  }
  char path[400];
  checkpoint_path(path, sizeof path, &j, 2);
  assert_false(exists(path));                 /* no index */
  for (int part = 0; part < kRanks; ++part) { /* every rank discarded its part */
    part_path(path, sizeof path, &j, 2, part);
    assert_false(exists(path));
  }
  expect_committed(&j, 1);
  expect_committed(&j, 3);
  expect_latest(&j, 3);
  end_job(&j);
}

/* C-semantics of max_to_keep on a sharded job: the chief deletes whole checkpoints, index and parts. */
static void max_to_keep_deletes_whole_checkpoints(void **state) {
  (void)state;
  job j;
  make_job(&j);
  j.save_steps = 1;
  j.max_to_keep = 2;
  j.runs = 5;
  run_job(&j);
  expect_all_ok(&j);
  for (int64_t step = 0; step <= 3; ++step) expect_checkpoint_files(&j, step, 0);
  for (int64_t step = 4; step <= 5; ++step) {
    expect_committed(&j, step);
  }
  expect_latest(&j, 5);
  end_job(&j);
}

/* Between two saves of recycle_rank: the chief's saver returns once it has evicted, so after it every
 * rank finds the spares the eviction made. */
static pthread_barrier_t g_between_saves;

/* The same rank saving steps 1, 2 and 3 through a standalone saver, noting its part's inode after the
 * first and the third save (before any later save could evict them). */
static void recycle_rank(int rank, void *arg) {
  job *j = (job *)arg;
  rank_result *result = &j->results[rank];
  rank_state state;
  tw_saver *saver = rank_saver(j, rank, &state);
  if (saver == NULL) return;
  char prefix[300], part[400];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", j->scratch.path);
  for (int64_t step = 1; step <= 3; ++step) {
    const tw_status s = result->first_failed_run == TW_OK ? tw_saver_save(NULL, saver, prefix, step) : TW_ABORTED;
    pthread_barrier_wait(&g_between_saves);
    if (result->first_failed_run != TW_OK) continue;
    if (s != TW_OK) {
      result->first_failed_run = s;
      result->failed_at_run = (int)step;
      remember_error(result);
    } else if (step != 2) {
      snprintf(part, sizeof part, "%s-%lld.part-%05d-of-%05d", prefix, (long long)step, rank, kRanks);
      struct stat st;
      result->part_inodes[step == 1 ? 0 : 1] = stat(part, &st) == 0 ? (unsigned long long)st.st_ino : 0;
    }
  }
  tw_saver_destroy(saver);
}

/* C15 on a sharded job recycling files: the chief keeps each part of the checkpoint max_to_keep=1 evicts
 * as the spare of its part index, and rank p's next part overwrites spare p: step 3's part p is step 1's
 * part p's file, holding step 3's rows. The chief's saver drops the spares when destroyed. */
static void parts_are_recycled_per_slot_c15(void **state) {
  (void)state;
  job j;
  make_job(&j);
  j.max_to_keep = 1;
  j.recycle = 1;
  assert_int_equal(pthread_barrier_init(&g_between_saves, NULL, kRanks), 0);
  assert_int_equal(thread_world_run(j.world, recycle_rank, &j), 0);
  pthread_barrier_destroy(&g_between_saves);
  expect_all_ok(&j);
  for (int rank = 0; rank < kRanks; ++rank) {
    const rank_result *r = &j.results[rank];
    if (r->part_inodes[0] == 0 || r->part_inodes[1] != r->part_inodes[0]) {
      fail_msg("rank %d: part of step 3 (inode %llu) is not step 1's (inode %llu)", rank, r->part_inodes[1],
               r->part_inodes[0]);
    }
  }
  expect_checkpoint_files(&j, 1, 0);
  expect_checkpoint_files(&j, 2, 0);
  expect_committed(&j, 3);
  expect_index_reads_whole_tensors(&j, 3);
  expect_latest(&j, 3);
  char spare[400];
  for (int slot = 0; slot < kRanks; ++slot) {
    snprintf(spare, sizeof spare, "%s/.tw-spare-%d", j.scratch.path, slot);
    if (exists(spare)) fail_msg("%s is left after the savers' destruction", spare);
  }
  end_job(&j);
}

/* D17 (B24's NaN check): rank 2's rows hold a NaN at step 2 only. Every rank skips that save — no part
 * of step 2 on any rank, no rank waits for another — step 0 stays the newest until the finite save of
 * step 4 commits. Deciding alone, rank 2 would skip while the others wait in the save's exchanges. */
static void a_nan_on_one_rank_skips_the_save_on_every_rank(void **state) {
  (void)state;
  job j;
  make_job(&j);
  j.nan_rank = 2;
  j.nan_run = 2;
  j.finite_run = 3;
  j.runs = 2; /* the end's save of step 2 is skipped as well */
  run_job(&j);
  expect_all_ok(&j);
  expect_checkpoint_files(&j, 2, 0);
  expect_checkpoint_files(&j, 0, 1);
  expect_latest(&j, 0);
  end_job(&j);

  make_job(&j);
  j.nan_rank = 2;
  j.nan_run = 2;
  j.finite_run = 3;
  j.runs = 4;
  run_job(&j);
  expect_all_ok(&j);
  expect_checkpoint_files(&j, 2, 0);
  expect_committed(&j, 4);
  expect_latest(&j, 4);
  end_job(&j);
}

/* D17 (B22 with every_n_secs): only the chief's clock fires (the others' never would); the vote after
 * the run in which it fired makes every rank save in the next run. Fires after runs 1 and 3: saves of
 * steps 2 and 4 on every rank, besides creation's step 0 — none of steps 1 and 3. */
static void the_chiefs_clock_triggers_every_ranks_save(void **state) {
  (void)state;
  job j;
  make_job(&j);
  j.chief_secs = 1e-9; /* due at every run but the one that saved */
  j.runs = 4;
  run_job(&j);
  expect_all_ok(&j);
  for (int64_t step = 0; step <= 4; ++step) expect_checkpoint_files(&j, step, step % 2 == 0);
  expect_parts_hold_their_rows(&j, 4);
  expect_latest(&j, 4);
  end_job(&j);
}

/* D10 + D17: a preemption noted by rank 1 before run 3 stops every rank at step 3, and every rank
 * writes its part of that step's checkpoint (no CheckpointSaverHook: the preemption save is the only
 * save), the chief commits; a new job of 4 ranks restores it on every rank (D16), rows bit-exact. */
static void the_preemption_save_of_a_sharded_job_is_every_ranks(void **state) {
  (void)state;
  job j;
  make_job(&j);
  j.save_steps = 0; /* MTS adds no CheckpointSaverHook */
  j.preempt_run = 3;
  j.runs = 10;
  run_job(&j);
  expect_all_ok(&j);
  for (int rank = 0; rank < kRanks; ++rank) assert_int_equal(j.results[rank].preempted, 1);
  expect_committed(&j, 3);
  expect_latest(&j, 3);

  thread_world_destroy(j.world);
  j.world = thread_world_create(kRanks);
  assert_non_null(j.world);
  j.preempt_run = 0;
  j.runs = 0;
  j.zero_rows = 1;
  run_job(&j);
  expect_all_ok(&j);
  for (int rank = 0; rank < kRanks; ++rank) {
    assert_int_equal(j.results[rank].created_step, 3);
    assert_true(j.results[rank].rows_restored);
  }
  end_job(&j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_rank_writes_its_part_and_the_chief_commits),
      cmocka_unit_test(a_failed_part_means_no_commit_on_any_rank),
      cmocka_unit_test(savers_from_options_commit_one_sharded_checkpoint),
      cmocka_unit_test(saver_from_options_checks_its_arguments),
      cmocka_unit_test(max_to_keep_deletes_whole_checkpoints),
      cmocka_unit_test(a_steady_save_is_one_vote_and_one_outcome),
      cmocka_unit_test(the_chief_failing_to_prepare_commits_nothing),
      cmocka_unit_test(a_first_save_the_chief_cannot_prepare_commits_nothing),
      cmocka_unit_test(a_part_changed_before_the_commit_commits_nothing),
      cmocka_unit_test(a_nan_on_one_rank_skips_the_save_on_every_rank),
      cmocka_unit_test(the_chiefs_clock_triggers_every_ranks_save),
      cmocka_unit_test(the_preemption_save_of_a_sharded_job_is_every_ranks),
      cmocka_unit_test(parts_are_recycled_per_slot_c15),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
