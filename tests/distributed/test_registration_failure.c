/* A failure local to one rank before the job's first collective call (D1): its registration of the
 * variables fails (tw_options_add_shard / tw_options_add_variable, or a binding's own check recorded with
 * tw_options_record_error). The failure stays on the options (sticky) and the rank still creates its
 * session or saver, whose first collective round carries it: every rank fails at once with the failing
 * rank's status and "rank k of n: <its reason>" — none waits out TW_OPT_COLLECTIVE_TIMEOUT_SECS. Also the
 * chief's failed preparation of a sharded save's directory (D17): every rank gets the chief's reason.
 * Two ranks as threads (thread_world.h). The collective's timeout is longer than this test's own limit
 * in meson: a rank left waiting fails the test by its limit, and would return TW_DEADLINE_EXCEEDED. */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include "scratch_dir.h"    /* first after the feature macros: it selects the POSIX feature level */

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

enum { kRanks = 2, kRows = 2, kCols = 3 };

/* How the failing rank's registration goes wrong. */
typedef enum failure {
  kNoFailure,         /* every rank registers its shard */
  kShardOutside,      /* tw_options_add_shard: the box does not fit the global shape */
  kVariableStrided,   /* tw_options_add_variable: not contiguous, before its shard is registered */
  kRecordedByBinding, /* tw_options_record_error: a binding's own check failed before anything reached C */
  kShardAfterShard,   /* a second tw_options_add_shard after a failed one: the first failure stays */
  kChiefHookOptions,  /* every registration succeeds; the chief's own summary options cannot make its hook */
} failure;

/* What every rank creates once it has registered (or failed to); kSaverSaves: a saver that then saves
 * into `dir`, which another saver of this process holds (the chief cannot lock it), either as its first
 * save (the layout's round) or after a first save elsewhere (a round of its own). */
typedef enum creation { kSession, kTrainingSession, kSaver, kSaverSaves, kSaverSavesAgain } creation;

typedef struct job {
  thread_world *world;
  failure failure;
  creation creation;
  int failing_rank;    /* the rank whose failure every rank must report */
  scratch_dir scratch; /* tests/common/scratch_dir.h */
  tw_status registered[kRanks];
  tw_status closed[kRanks]; /* a session's close and destroy, had one been created */
  tw_status status[kRanks];
  char message[kRanks][1024];
} job;

/* The failing rank's registration, as j->failure says; the others register their row shard of w. */
static tw_status register_variables(tw_options *opts, int rank, const job *j, float *rows) {
  static const int64_t box[2] = {kRows, kCols};
  static const int64_t strides[2] = {2 * kCols, 1}; /* every other row of a bigger buffer */
  const int64_t global_shape[2] = {kRanks * kRows, kCols};
  const int64_t offset[2] = {rank * kRows, 0};
  tw_tensor w = TW_TENSOR_INIT;
  w.name = "w";
  w.dtype = TW_FLOAT32;
  w.ndim = 2;
  w.shape = (int64_t *)box;
  w.data = rows;
  if (rank != j->failing_rank || j->failure == kNoFailure || j->failure == kChiefHookOptions)
    return tw_options_add_shard(opts, &w, global_shape, offset);
  switch (j->failure) {
    case kNoFailure:
    case kShardOutside: {
      const int64_t outside[2] = {kRanks * kRows - 1, 0}; /* its last row past the end of dimension 0 */
      return tw_options_add_shard(opts, &w, global_shape, outside);
    }
    case kVariableStrided: {
      tw_tensor b = w;
      b.name = "b";
      b.strides = (int64_t *)strides;
      const tw_status s = tw_options_add_variable(opts, &b);
      return s != TW_OK ? s : tw_options_add_shard(opts, &w, global_shape, offset);
    }
    case kRecordedByBinding:
      return tw_options_record_error(opts, TW_OUT_OF_RANGE, "offset must hold int64 values; got (2**63,)");
    case kChiefHookOptions: break; /* registered above */
    case kShardAfterShard: {
      const int64_t outside[2] = {0, kCols};
      if (tw_options_add_shard(opts, &w, global_shape, outside) != TW_INVALID_ARGUMENT) return TW_INTERNAL;
      tw_tensor v = w; /* the failure stays on the options */
      v.name = "v";
      return tw_options_add_shard(opts, &v, global_shape, offset);
    }
  }
  return TW_INTERNAL;
}

static tw_status save_into_locked_dir(tw_saver *saver, const job *j) {
  char prefix[320];
  const char *path = NULL;
  if (j->creation == kSaverSavesAgain) {
    snprintf(prefix, sizeof prefix, "%s/free/model.ckpt", j->scratch.path);
    const tw_status s = tw_saver_save(&path, saver, prefix, 1);
    if (s != TW_OK) return s;
  }
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", j->scratch.path);
  return tw_saver_save(&path, saver, prefix, 2);
}

static void rank_body(int rank, void *arg) {
  job *j = (job *)arg;
  float rows[2 * kRows * kCols] = {0};
  const tw_collective table = thread_world_collective(j->world, rank);
  tw_options *opts = NULL;
  tw_status s = tw_options_create(&opts);
  if (s == TW_OK) s = tw_options_set_collective(opts, &table, thread_world_user_data(j->world, rank));
  if (s == TW_OK) s = tw_options_set_double(opts, TW_OPT_COLLECTIVE_TIMEOUT_SECS, 3600.0);
  if (s == TW_OK && j->creation == kTrainingSession)
    s = tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, j->scratch.path);
  if (s == TW_OK && j->creation == kTrainingSession) s = tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 0);
  if (s == TW_OK && j->failure == kChiefHookOptions && rank == j->failing_rank) {
    /* Only the chief makes SummarySaverHook (T6): both of its frequencies set is its own error (T3). */
    s = tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 1);
    if (s == TW_OK) s = tw_options_set_double(opts, TW_OPT_SUMMARY_EVERY_N_SECS, 1.0);
  }
  if (s == TW_OK) {
    /* The contract: a rank whose registration failed goes on to create its session or saver. */
    j->registered[rank] = register_variables(opts, rank, j, rows);
    tw_session *session = NULL;
    tw_saver *saver = NULL;
    switch (j->creation) {
      case kSession: s = tw_monitored_session_create(&session, opts, NULL, 0); break;
      case kTrainingSession: s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0); break;
      case kSaver:
      case kSaverSaves:
      case kSaverSavesAgain: s = tw_saver_create_from_options(&saver, opts); break;
    }
    if (s == TW_OK && j->creation != kSaver && saver != NULL) s = save_into_locked_dir(saver, j);
    if (s != TW_OK) snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
    if (session != NULL) {
      j->closed[rank] = tw_session_close(session);
      if (tw_session_destroy(session) != TW_OK) j->closed[rank] = TW_INTERNAL;
    }
    tw_saver_destroy(saver);
  }
  tw_options_destroy(opts);
  j->status[rank] = s;
}

static void run_job(job *j) {
  assert_int_equal(scratch_dir_create(&j->scratch), 0);
  char free_dir[300];
  snprintf(free_dir, sizeof free_dir, "%s/free", j->scratch.path);
  assert_int_equal(mkdir(free_dir, 0700), 0);
  /* Another saver of this process holds `dir` (its lock) while the job saves there. */
  float other_value = 1;
  tw_tensor other = TW_TENSOR_INIT;
  other.name = "other";
  other.dtype = TW_FLOAT32;
  other.data = &other_value;
  tw_saver *holder = NULL;
  const char *held = NULL;
  char prefix[320];
  snprintf(prefix, sizeof prefix, "%s/other.ckpt", j->scratch.path);
  if (j->creation == kSaverSaves || j->creation == kSaverSavesAgain) {
    assert_int_equal(tw_saver_create(&holder, &other, 1), TW_OK);
    assert_int_equal(tw_saver_save(&held, holder, prefix, 1), TW_OK);
  }
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
  assert_int_equal(thread_world_run(j->world, rank_body, j), 0);
  thread_world_destroy(j->world);
  tw_saver_destroy(holder);
  scratch_dir_destroy(&j->scratch);
}

/* Every rank failed with `code`, none with TW_DEADLINE_EXCEEDED, each message naming the failing rank
 * ("rank k of 2: ") and quoting its reason; every other registration succeeded. */
static void expect_every_rank_failed(const job *j, tw_status code, const char *reason) {
  char origin[32];
  snprintf(origin, sizeof origin, "rank %d of %d: ", j->failing_rank, kRanks);
  for (int r = 0; r < kRanks; ++r) {
    if (r != j->failing_rank || j->failure == kNoFailure || j->failure == kChiefHookOptions)
      assert_int_equal(j->registered[r], TW_OK);
    assert_int_equal(j->closed[r], TW_OK);
    if (j->status[r] != code || strstr(j->message[r], origin) == NULL || strstr(j->message[r], reason) == NULL) {
      print_message("rank %d: %s (%s)\n", r, tw_status_name(j->status[r]), j->message[r]);
    }
    assert_int_not_equal(j->status[r], TW_DEADLINE_EXCEEDED);
    assert_int_equal(j->status[r], code);
    assert_non_null(strstr(j->message[r], origin));
    assert_non_null(strstr(j->message[r], reason));
  }
}

static void run_and_expect(failure f, creation c, int failing_rank, tw_status code, const char *reason) {
  job j;
  memset(&j, 0, sizeof j);
  j.failure = f;
  j.creation = c;
  j.failing_rank = failing_rank;
  run_job(&j);
  expect_every_rank_failed(&j, code, reason);
}

/* D1: a worker's shard outside the global shape fails session creation on every rank, the chief too. */
static void d1_a_shard_outside_its_global_shape_fails_every_ranks_session(void **state) {
  (void)state;
  run_and_expect(kShardOutside, kSession, 1, TW_INVALID_ARGUMENT, "shard 'w' dimension 0");
}

/* D1: the chief's own failure reaches the worker, which would otherwise wait for the chief's restore. */
static void d1_the_chiefs_failed_registration_fails_the_workers_session(void **state) {
  (void)state;
  run_and_expect(kShardOutside, kSession, 0, TW_INVALID_ARGUMENT, "shard 'w' dimension 0");
}

/* D1, D17: a rank that failed before declaring any shard is reported for its failure, not as a rank
 * declaring no sharded variable. */
static void d1_d17_a_failed_variable_before_the_shards_is_the_reason_given(void **state) {
  (void)state;
  run_and_expect(kVariableStrided, kSession, 1, TW_INVALID_ARGUMENT, "'b' is not contiguous");
}

/* D1: MonitoredTrainingSession (a CheckpointSaverHook on every rank of a sharded job) alike. */
static void d1_a_failed_registration_fails_every_ranks_training_session(void **state) {
  (void)state;
  run_and_expect(kShardOutside, kTrainingSession, 1, TW_INVALID_ARGUMENT, "shard 'w' dimension 0");
}

/* D1: the chief cannot make one of MonitoredTrainingSession's own hooks (T3, T6): the workers, which
 * make none of them, hear why instead of waiting for the chief. */
static void d1_a_hook_only_the_chief_makes_fails_every_ranks_training_session(void **state) {
  (void)state;
  run_and_expect(kChiefHookOptions, kTrainingSession, 0, TW_INVALID_ARGUMENT,
                 "Can not provide both every_secs and every_steps.");
}

/* D1: a failure a binding recorded (tw_options_record_error) travels with its own status and message. */
static void d1_a_failure_recorded_by_a_binding_fails_every_rank(void **state) {
  (void)state;
  run_and_expect(kRecordedByBinding, kSession, 1, TW_OUT_OF_RANGE, "offset must hold int64 values");
}

/* The first failure is kept: a later successful registration does not clear it. */
static void d1_a_later_registration_does_not_clear_the_failure(void **state) {
  (void)state;
  run_and_expect(kShardAfterShard, kSession, 1, TW_INVALID_ARGUMENT, "shard 'w' dimension 1");
}

/* D17: a standalone saver with a collective — its creation is the job's first round. */
static void d17_a_failed_registration_fails_every_ranks_saver_creation(void **state) {
  (void)state;
  run_and_expect(kShardOutside, kSaver, 1, TW_INVALID_ARGUMENT, "shard 'w' dimension 0");
  run_and_expect(kRecordedByBinding, kSaver, 0, TW_OUT_OF_RANGE, "offset must hold int64 values");
}

/* D17: the chief cannot prepare the directory of a sharded save (another saver holds its lock): every
 * rank's save fails with the chief's status and reason, at the first save (its round agrees on the
 * layout) and at a later one (a round of its own). */
static void d17_every_rank_hears_why_the_chief_could_not_prepare_the_directory(void **state) {
  (void)state;
  run_and_expect(kNoFailure, kSaverSaves, 0, TW_FAILED_PRECONDITION, "is in use");
  run_and_expect(kNoFailure, kSaverSavesAgain, 0, TW_FAILED_PRECONDITION, "is in use");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(d1_a_shard_outside_its_global_shape_fails_every_ranks_session),
      cmocka_unit_test(d1_the_chiefs_failed_registration_fails_the_workers_session),
      cmocka_unit_test(d1_d17_a_failed_variable_before_the_shards_is_the_reason_given),
      cmocka_unit_test(d1_a_failed_registration_fails_every_ranks_training_session),
      cmocka_unit_test(d1_a_hook_only_the_chief_makes_fails_every_ranks_training_session),
      cmocka_unit_test(d1_a_failure_recorded_by_a_binding_fails_every_rank),
      cmocka_unit_test(d1_a_later_registration_does_not_clear_the_failure),
      cmocka_unit_test(d17_a_failed_registration_fails_every_ranks_saver_creation),
      cmocka_unit_test(d17_every_rank_hears_why_the_chief_could_not_prepare_the_directory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
