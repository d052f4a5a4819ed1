/* Ranks that declare their sharded variables differently (D17): every rank gets a clear
 * TW_INVALID_ARGUMENT — none is left waiting — and nothing is committed; a rank holding none of a
 * tensor's rows declares an empty box and the job saves. Two ranks as threads (thread_world.h). */
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "thread_world.h"

enum { kRanks = 2, kRows = 2, kCols = 3 };

/* How rank 1 departs from rank 0's declaration. */
typedef enum departure {
  SAME,           /* none: the save commits */
  GLOBAL_SHAPE,   /* another global shape of w */
  DTYPE,          /* w as float64 */
  EXTRA_VARIABLE, /* one more replicated variable */
  OVERLAP,        /* its box starts where rank 0's does */
  GAP,            /* its box leaves a row between the two uncovered */
  EMPTY_BOX,      /* rank 0 holds every row, rank 1 an empty box: the save commits */
  NOT_SHARDED,    /* w registered as an ordinary variable: no sharded variable on rank 1 */
} departure;

typedef struct job {
  thread_world *world;
  scratch_dir scratch; /* tests/common/scratch_dir.h */
  departure departure;
  int session; /* 1: MonitoredTrainingSession; 0: standalone savers */
  tw_status status[kRanks];
  char message[kRanks][512];
} job;

static tw_status rank_options(const job *j, int rank, double *rows, tw_options **out) {
  const int mine = rank == 1;
  int64_t box[2] = {kRows, kCols};
  int64_t global_shape[2] = {kRanks * kRows, kCols};
  int64_t offset[2] = {rank * kRows, 0};
  tw_dtype dtype = TW_FLOAT32;
  if (mine && j->departure == GLOBAL_SHAPE) global_shape[0] += 1;
  if (mine && j->departure == DTYPE) dtype = TW_FLOAT64;
  if (mine && j->departure == OVERLAP) offset[0] = 0;
  if (j->departure == GAP) {
    global_shape[0] += 1;
    if (mine) offset[0] += 1;
  }
  if (j->departure == EMPTY_BOX) {
    box[0] = rank == 0 ? kRanks * kRows : 0;
    offset[0] = rank == 0 ? 0 : kRanks * kRows;
  }
  tw_tensor w = TW_TENSOR_INIT;
  w.name = "w";
  w.dtype = dtype;
  w.ndim = 2;
  w.shape = box;
  w.data = rows;
  static float bias[kCols] = {1.0f, 2.0f, 3.0f};
  static const int64_t bias_shape[1] = {kCols};
  tw_tensor b = TW_TENSOR_INIT;
  b.name = "b";
  b.dtype = TW_FLOAT32;
  b.ndim = 1;
  b.shape = (int64_t *)bias_shape;
  b.data = bias;
  tw_options *opts = NULL;
  /* A rank left waiting would fail the test in seconds, not hang it. */
  tw_status s = thread_world_options(&opts, j->world, rank, 5.0);
  if (s == TW_OK && mine && j->departure == NOT_SHARDED) {
    box[0] = kRanks * kRows;
    s = tw_options_add_variable(opts, &w);
  } else if (s == TW_OK) {
    s = tw_options_add_shard(opts, &w, global_shape, offset);
  }
  if (s == TW_OK) s = tw_options_add_variable(opts, &b);
  if (s == TW_OK && mine && j->departure == EXTRA_VARIABLE) {
    b.name = "extra";
    s = tw_options_add_variable(opts, &b);
  }
  if (s == TW_OK && j->session) s = tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, j->scratch.path);
  if (s == TW_OK && j->session) s = tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 1);
  if (s != TW_OK) tw_options_destroy(opts);
  *out = s == TW_OK ? opts : NULL;
  return s;
}

static void rank_body(int rank, void *arg) {
  job *j = (job *)arg;
  double rows[kRanks * kRows * kCols] = {0}; /* room for every departure's box */
  tw_options *opts = NULL;
  tw_status s = rank_options(j, rank, rows, &opts);
  if (s == TW_OK && j->session) {
    tw_session *session = NULL;
    s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0);
    if (s == TW_OK) {
      s = tw_session_close(session);
      if (tw_session_destroy(session) != TW_OK && s == TW_OK) s = TW_INTERNAL;
    }
  } else if (s == TW_OK) {
    tw_saver *saver = NULL;
    s = tw_saver_create_from_options(&saver, opts);
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s/model.ckpt", j->scratch.path);
    const char *path = NULL;
    if (s == TW_OK) s = tw_saver_save(&path, saver, prefix, 1);
    tw_saver_destroy(saver);
  }
  tw_options_destroy(opts);
  j->status[rank] = s;
  snprintf(j->message[rank], sizeof j->message[rank], "%s", s == TW_OK ? "" : tw_last_error_message());
}

/* How many files of `dir` start with "model.ckpt" (the index and its parts). */
static int checkpoint_files(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int count = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) count += strncmp(e->d_name, "model.ckpt", 10) == 0;
  closedir(d);
  return count;
}

/* Runs the job; returns how many checkpoint files it left. */
static int run_job(job *j, departure departure, int session) {
  memset(j, 0, sizeof *j);
  assert_int_equal(scratch_dir_create(&j->scratch), 0);
  j->departure = departure;
  j->session = session;
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
  assert_int_equal(thread_world_run(j->world, rank_body, j), 0);
  thread_world_destroy(j->world);
  const int files = checkpoint_files(j->scratch.path);
  scratch_dir_destroy(&j->scratch);
  return files;
}

static void expect_refused_on_every_rank(const job *j, const char *says) {
  for (int r = 0; r < kRanks; ++r) {
    if (j->status[r] != TW_INVALID_ARGUMENT || strstr(j->message[r], says) == NULL) {
      print_message("rank %d: %s: %s\n", r, tw_status_name(j->status[r]), j->message[r]);
    }
    assert_int_equal(j->status[r], TW_INVALID_ARGUMENT);
    assert_non_null(strstr(j->message[r], says));
  }
}

/* Standalone savers: the layout's agreement refuses every departure on both ranks; no file is written. */
static void differing_declarations_fail_every_ranks_save_and_commit_nothing(void **state) {
  (void)state;
  static const struct {
    departure departure;
    const char *says;
  } cases[] = {
      {GLOBAL_SHAPE, "declare different checkpoint variables"},
      {DTYPE, "declare different checkpoint variables"},
      {EXTRA_VARIABLE, "declare different checkpoint variables"},
      {OVERLAP, "boxes overlap"},
      {GAP, "uncovered"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    job j;
    const int files = run_job(&j, cases[k].departure, 0);
    expect_refused_on_every_rank(&j, cases[k].says);
    assert_int_equal(files, 0);
  }
}

/* A rank that holds none of w's rows registers an empty box: the checkpoint commits (index, 2 parts). */
static void an_empty_box_on_one_rank_saves(void **state) {
  (void)state;
  for (int session = 0; session <= 1; ++session) {
    job j;
    const int files = run_job(&j, EMPTY_BOX, session);
    for (int r = 0; r < kRanks; ++r) assert_int_equal(j.status[r], TW_OK);
    assert_int_equal(files, 3); /* the session saves at creation only: its step never moves */
  }
}

/* D17 + D1: a session whose rank 1 registers w as an ordinary variable (no sharded variable) while rank
 * 0 shards it would make other collective calls at every save than rank 0: creation fails on both ranks
 * with a message naming tw_options_add_shard, before any save. */
static void every_rank_or_none_declares_sharded_variables_d17(void **state) {
  (void)state;
  job j;
  const int files = run_job(&j, NOT_SHARDED, 1);
  expect_refused_on_every_rank(&j, "tw_options_add_shard");
  assert_int_equal(files, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(differing_declarations_fail_every_ranks_save_and_commit_nothing),
      cmocka_unit_test(an_empty_box_on_one_rank_saves),
      cmocka_unit_test(every_rank_or_none_declares_sharded_variables_d17),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
