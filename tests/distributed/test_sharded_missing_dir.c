/* A rank of a sharded job whose checkpoint directory is missing (C4's "Parent directory of … doesn't
 * exist, can't save.") still makes the save's collective calls: every rank fails that save at once with
 * TW_NOT_FOUND — none waits for it until the collective's timeout (D9) — and the checkpoint before stays
 * the newest. Rank 1 saves through its own path to the job's directory (a symlink, as a rank mounting
 * the shared directory elsewhere does), which vanishes; standalone savers created from the ranks'
 * options; two ranks as threads (thread_world.h). */
#define _DEFAULT_SOURCE  /* symlink */
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "thread_world.h"

enum { kRanks = 2, kRows = 2, kCols = 3 };

typedef struct job {
  thread_world *world;
  scratch_dir scratch;    /* tests/common/scratch_dir.h */
  char mount[300];        /* rank 1's path to dir */
  int first_save_missing; /* 1: the mount is gone at the first save; 0: between the first and second */
  tw_status status[kRanks][2];
  char message[kRanks][512];
} job;

static void rank_body(int rank, void *arg) {
  job *j = (job *)arg;
  float rows[kRows * kCols] = {0};
  tw_options *opts = NULL;
  tw_saver *saver = NULL;
  /* Long enough that a rank left waiting shows as TW_DEADLINE_EXCEEDED, not as the expected status. */
  tw_status s = thread_world_row_shard_options(&opts, j->world, rank, kRows, kCols, rows, 2.0);
  if (s == TW_OK) s = tw_saver_create_from_options(&saver, opts);
  tw_options_destroy(opts);
  char prefix[400];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", rank == 1 ? j->mount : j->scratch.path);
  for (int k = 0; k < 2; ++k) {
    if (rank == 1 && k == 1 - j->first_save_missing && unlink(j->mount) != 0) s = TW_INTERNAL;
    const char *path = NULL;
    if (s == TW_OK) j->status[rank][k] = tw_saver_save(&path, saver, prefix, k + 1);
    if (j->status[rank][k] != TW_OK && j->message[rank][0] == '\0')
      snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
  }
  if (s != TW_OK) j->status[rank][0] = s;
  tw_saver_destroy(saver);
}

static void run_job(job *j, int first_save_missing) {
  memset(j, 0, sizeof *j);
  assert_int_equal(scratch_dir_create(&j->scratch), 0);
  snprintf(j->mount, sizeof j->mount, "%s/rank1", j->scratch.path);
  assert_int_equal(symlink(".", j->mount), 0);
  j->first_save_missing = first_save_missing;
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
  assert_int_equal(thread_world_run(j->world, rank_body, j), 0);
  thread_world_destroy(j->world);
}

static void remove_job(const job *j) { scratch_dir_destroy(&j->scratch); }

/* Save `k` (0-based) failed on both ranks with TW_NOT_FOUND; rank 1's own message is C4's. */
static void expect_not_found_on_every_rank(const job *j, int k) {
  for (int r = 0; r < kRanks; ++r) {
    if (j->status[r][k] != TW_NOT_FOUND) print_message("rank %d: %s\n", r, j->message[r]);
    assert_int_equal(j->status[r][k], TW_NOT_FOUND);
  }
  assert_non_null(strstr(j->message[1], "doesn't exist, can't save."));
}

/* The first save of the savers (its first round agrees on the layout): refused on both ranks. */
static void a_missing_directory_on_one_rank_fails_the_first_save_on_every_rank(void **state) {
  (void)state;
  job j;
  run_job(&j, 1);
  expect_not_found_on_every_rank(&j, 0);
  remove_job(&j);
}

/* A steady save (one vote, one outcome): the missing directory is rank 1's vote; the message every rank
 * returns names rank 1 and quotes it, and the first save's checkpoint stays the newest, whole. */
static void a_directory_gone_between_saves_fails_the_vote_on_every_rank(void **state) {
  (void)state;
  job j;
  run_job(&j, 0);
  for (int r = 0; r < kRanks; ++r) assert_int_equal(j.status[r][0], TW_OK);
  expect_not_found_on_every_rank(&j, 1);
  assert_non_null(strstr(j.message[0], "rank 1: Parent directory of"));
  char checkpoint[300], latest[300];
  snprintf(checkpoint, sizeof checkpoint, "%s/model.ckpt-1", j.scratch.path);
  assert_int_equal(tw_checkpoint_verify(checkpoint), TW_OK);
  assert_int_equal(tw_latest_checkpoint(latest, sizeof latest, j.scratch.path), TW_OK);
  assert_string_equal(latest, checkpoint);
  remove_job(&j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_missing_directory_on_one_rank_fails_the_first_save_on_every_rank),
      cmocka_unit_test(a_directory_gone_between_saves_fails_the_vote_on_every_rank),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
