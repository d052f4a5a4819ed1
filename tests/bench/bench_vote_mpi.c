#define _POSIX_C_SOURCE 199309L
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
/* The per-run cost of the vote (docs/tf-semantics.md D4) against a bare MPI_Allreduce of the same 5
 * int64 in the same job: run under `mpirun -np N`. Every iteration makes one bare MPI_Allreduce (the
 * anchor) and one tw_session_run with the MPI collective, in turn first, each timed, so that both
 * see the same load (this machine is shared); ours is the median voted run minus the median run of a session
 * without a collective (the session's own per-run cost). Rank 0 prints medians. Target: ours <= 1.2x.
 * usage: mpirun -np N bench_vote_mpi [runs]   (default 20,000) */
#include <stdio.h>
#include <stdlib.h>

#include <trainwatch.h>
#include <trainwatch/mpi.h>

static tw_status step(void *user_data, tw_step_context *ctx) {
  (void)ctx;
  ++*(volatile int64_t *)user_data;
  return TW_OK;
}

static tw_session *open_session(int with_collective) {
  tw_options *o = NULL;
  tw_session *s = NULL;
  if (tw_options_create(&o) != TW_OK) return NULL;
  int ok = 1;
  if (with_collective) {
    tw_collective table;
    void *user_data = NULL;
    ok = tw_mpi_collective_create(&table, &user_data, MPI_COMM_WORLD) == TW_OK &&
         tw_options_set_collective(o, &table, user_data) == TW_OK;
  }
  if (!ok || tw_monitored_session_create(&s, o, NULL, 0) != TW_OK) {
    fprintf(stderr, "session: %s\n", tw_last_error_message());
    s = NULL;
  }
  tw_options_destroy(o);
  return s;
}

static void run_once(tw_session *s, int64_t *counter) {
  if (tw_session_run(s, NULL, 0, step, counter) != TW_OK) {
    fprintf(stderr, "run: %s\n", tw_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *samples, long n) {
  qsort(samples, (size_t)n, sizeof *samples, by_value);
  return samples[n / 2];
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const long runs = argc > 1 ? atol(argv[1]) : 20000;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm; /* the anchor's own duplicate, as the collective has its own */
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  tw_session *voting = open_session(1);
  tw_session *alone = open_session(0);
  double *bare = malloc((size_t)runs * sizeof *bare);
  double *voted = malloc((size_t)runs * sizeof *voted);
  double *plain = malloc((size_t)runs * sizeof *plain);
  if (voting == NULL || alone == NULL || bare == NULL || voted == NULL || plain == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  int64_t counter = 0;
  int64_t values[5] = {0, 0, 0, 0, 0};
  for (long i = 0; i < runs / 10; ++i) { /* warm-up */
    MPI_Allreduce(MPI_IN_PLACE, values, 5, MPI_INT64_T, MPI_MAX, comm);
    run_once(voting, &counter);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* The first collective of an iteration absorbs the ranks' skew: the two go first in turn. */
  for (long i = 0; i < runs; ++i) {
    double t0 = MPI_Wtime();
    if (i % 2 == 0) {
      MPI_Allreduce(MPI_IN_PLACE, values, 5, MPI_INT64_T, MPI_MAX, comm);
      bare[i] = MPI_Wtime() - t0;
      t0 = MPI_Wtime();
      run_once(voting, &counter);
      voted[i] = MPI_Wtime() - t0;
    } else {
      run_once(voting, &counter);
      voted[i] = MPI_Wtime() - t0;
      t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, values, 5, MPI_INT64_T, MPI_MAX, comm);
      bare[i] = MPI_Wtime() - t0;
    }
    t0 = MPI_Wtime();
    run_once(alone, &counter);
    plain[i] = MPI_Wtime() - t0;
  }
  const double anchor = median(bare, runs), with_vote = median(voted, runs), without = median(plain, runs);
  const double ours = with_vote - without;
  if (rank == 0) {
    printf("vote per run, %d ranks, %ld runs (medians):\n", size, runs);
    printf("  anchor (bare MPI_Allreduce of 5 int64):                  %8.2f us\n", anchor * 1e6);
    printf("  ours   (run with the vote %.2f us - run alone %.2f us): %8.2f us\n", with_vote * 1e6, without * 1e6,
           ours * 1e6);
    printf("  ratio ours/anchor: %.2fx (target <= 1.2x)\n", ours / anchor);
  }
  free(bare);
  free(voted);
  free(plain);
  int failed = tw_session_close(voting) != TW_OK;
  failed |= tw_session_destroy(voting) != TW_OK;
  failed |= tw_session_close(alone) != TW_OK;
  failed |= tw_session_destroy(alone) != TW_OK;
  if (failed) fprintf(stderr, "closing the sessions failed: %s\n", tw_last_error_message());
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return failed ? 1 : 0;
}
