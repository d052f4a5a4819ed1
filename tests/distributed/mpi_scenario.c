/* One rank of a scenario (scenario.h) under mpirun, with the MPI collective (trainwatch/mpi.h); the
 * driver run_mpi_scenarios.py starts it as `mpirun -np 4 … mpi_scenario NAME DIR` and checks what every
 * rank prints: "rank R create=S run=S close=S step=N w=W runs=N creations=N preempted=P | message".
 * `mpi_scenario restored DIR` (no MPI) prints the step a single process restores from DIR. */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <trainwatch.h>
#include <trainwatch/mpi.h>

#include "scenario.h"

/* Sets up `s` for the scenario `name`; 0 when there is no such scenario. Faults are on ranks 1–3 of 4. */
static int configure(scenario *s, const char *name) {
  s->last_step = 8;
  s->save_steps = 2;
  s->timeout_secs = 30;
  if (strcmp(name, "stop") == 0) {
    s->stop_at[3] = 4;
  } else if (strcmp(name, "nan-fail") == 0) {
    s->nan_action = TW_NAN_ACTION_FAIL;
    s->nan_at[2] = 3;
  } else if (strcmp(name, "nan-rollback") == 0) {
    s->nan_action = TW_NAN_ACTION_ROLLBACK;
    s->nan_at[2] = 4;
  } else if (strcmp(name, "aborted") == 0) {
    s->fail_at[1] = 4;
    s->fail_status[1] = TW_ABORTED;
  } else if (strcmp(name, "sigterm") == 0) {
    s->catch_signals = 1;
    s->save_steps = 100;
    s->signal_number = SIGTERM;
    s->signal_at[1] = 3;
  } else if (strcmp(name, "sigkill") == 0) {
    s->timeout_secs = 3;
    s->signal_number = SIGKILL;
    s->signal_at[2] = 5;
  } else if (strcmp(name, "silent") == 0) {
    s->timeout_secs = 2;
    s->vanish_at[3] = 5;
  } else {
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s SCENARIO|restored DIR\n", argv[0]);
    return 2;
  }
  tw_set_log_level(TW_LOG_ERROR);
  if (strcmp(argv[1], "restored") == 0) {
    printf("restored %lld\n", (long long)scenario_restored_step(argv[2]));
    return 0;
  }
  scenario s;
  scenario_init(&s);
  if (!configure(&s, argv[1])) {
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int r = 0; r < SCENARIO_MAX_RANKS; ++r) s.checkpoint_dir[r] = argv[2];
  tw_collective table;
  void *user_data = NULL;
  if (tw_mpi_collective_create(&table, &user_data, MPI_COMM_WORLD) != TW_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, tw_last_error_message());
    return 1;
  }
  rank_result res;
  scenario_run_rank(&s, rank, &table, user_data, &res);
  printf("rank %d create=%s run=%s close=%s step=%lld w=%g runs=%lld creations=%lld preempted=%d vanished=%d | %s\n",
         rank, tw_status_name(res.create), tw_status_name(res.run), tw_status_name(res.close),
         (long long)res.global_step, (double)res.w, (long long)res.runs, (long long)res.creations, res.preempted,
         res.vanished, res.message);
  fflush(stdout);
  /* A rank that lost its peers cannot finalize (MPI would wait for them): it leaves as a dead rank would. */
  const int lost = res.vanished || res.create == TW_DEADLINE_EXCEEDED || res.run == TW_DEADLINE_EXCEEDED ||
                   res.run == TW_UNAVAILABLE || res.close == TW_DEADLINE_EXCEEDED;
  if (res.vanished) sleep(30); /* alive but silent, until mpirun ends the job for the others' failure */
  if (lost) _exit(3);
  MPI_Finalize();
  return 0;
}
