/* A sharded checkpoint saved again at the same step (what CheckpointSaverHook does at every session
 * creation, B21: it saves the step it just restored) replaces each rank's part by the same bytes. When
 * that re-save fails on any rank, nobody commits — and the checkpoint committed before must stay whole:
 * a rank must not remove a part its index lists. Two ranks as threads (thread_world.h), standalone
 * savers created from their options; the failure is the collective's, at the vote, on either rank. */
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

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

enum { kRanks = 2, kRows = 3, kCols = 4 };

typedef struct job {
  thread_world *world;
  scratch_dir scratch; /* tests/common/scratch_dir.h */
  int victim;          /* the rank whose collective fails the re-save's vote */
  tw_status first[kRanks], again[kRanks];
  char message[kRanks][512];
} job;

static float value(int row, int col) { return (float)(row * kCols + col) + 0.5f; }

static tw_status rank_saver(job *j, int rank, float *rows, tw_saver **out) {
  tw_options *opts = NULL;
  /* The victim's peer waits for it until this timeout. */
  tw_status s = thread_world_row_shard_options(&opts, j->world, rank, kRows, kCols, rows, 0.5);
  if (s == TW_OK) s = tw_saver_create_from_options(out, opts);
  tw_options_destroy(opts);
  return s;
}

static void rank_body(int rank, void *arg) {
  job *j = (job *)arg;
  float rows[kRows * kCols];
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) rows[r * kCols + c] = value(rank * kRows + r, c);
  }
  tw_saver *saver = NULL;
  j->first[rank] = rank_saver(j, rank, rows, &saver);
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", j->scratch.path);
  const char *path = NULL;
  if (j->first[rank] == TW_OK) j->first[rank] = tw_saver_save(&path, saver, prefix, 1);
  if (j->first[rank] == TW_OK) {
    /* The re-save's first collective call is its vote (a steady save: one vote, one outcome). */
    if (rank == j->victim) thread_world_fail_next(j->world, rank, TW_UNAVAILABLE, 1);
    j->again[rank] = tw_saver_save(&path, saver, prefix, 1);
  }
  snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
  tw_saver_destroy(saver);
}

/* C14's promise for a sharded job: a save that fails commits nothing and leaves the previous
 * checkpoint — here the same step, committed by the first save — whole, on either rank's failure. */
static void a_failed_resave_leaves_the_committed_checkpoint_whole(void **state) {
  (void)state;
  for (int victim = 0; victim < kRanks; ++victim) {
    job j;
    memset(&j, 0, sizeof j);
    assert_int_equal(scratch_dir_create(&j.scratch), 0);
    j.victim = victim;
    j.world = thread_world_create(kRanks);
    assert_non_null(j.world);
    assert_int_equal(thread_world_run(j.world, rank_body, &j), 0);
    thread_world_destroy(j.world);
    for (int r = 0; r < kRanks; ++r) {
      if (j.first[r] != TW_OK) print_message("rank %d: %s\n", r, j.message[r]);
      assert_int_equal(j.first[r], TW_OK);
      assert_int_not_equal(j.again[r], TW_OK); /* the failed vote reaches every rank */
    }
    char checkpoint[300];
    snprintf(checkpoint, sizeof checkpoint, "%s/model.ckpt-1", j.scratch.path);
    assert_int_equal(tw_checkpoint_verify(checkpoint), TW_OK);
    char latest[300];
    assert_int_equal(tw_latest_checkpoint(latest, sizeof latest, j.scratch.path), TW_OK);
    assert_string_equal(latest, checkpoint);
    /* It still reads whole, bit-exact. */
    float whole[kRanks * kRows * kCols];
    int64_t shape[2] = {kRanks * kRows, kCols};
    tw_tensor w = TW_TENSOR_INIT;
    w.name = "w";
    w.dtype = TW_FLOAT32;
    w.ndim = 2;
    w.shape = shape;
    w.data = whole;
    assert_int_equal(tw_checkpoint_load_variable(checkpoint, &w), TW_OK);
    for (int r = 0; r < kRanks * kRows; ++r) {
      for (int c = 0; c < kCols; ++c) assert_true(whole[r * kCols + c] == value(r, c));
    }
    scratch_dir_destroy(&j.scratch);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_failed_resave_leaves_the_committed_checkpoint_whole),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
