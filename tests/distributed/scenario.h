/* One rank of a small data-parallel training job, with faults injected per rank: what the distributed
 * tests run on every rank, over thread_world (ranks as threads) or MPI (ranks as processes). Every rank
 * holds a replica of the variable "w" (w += 1 per step, so w == global_step whenever the replicas are
 * consistent), publishes "loss" and runs a MonitoredTrainingSession whose chief checkpoints. */
#ifndef TESTS_DISTRIBUTED_SCENARIO_H
#define TESTS_DISTRIBUTED_SCENARIO_H

#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include <stdint.h>

#include <trainwatch.h>
#include <trainwatch/distributed.h> /* its experimental block, also after a plain <trainwatch.h> */

#define SCENARIO_MAX_RANKS 8
#define SCENARIO_NEVER INT64_MIN

typedef struct scenario {
  const char *checkpoint_dir[SCENARIO_MAX_RANKS]; /* per rank; NULL: none */
  int64_t last_step;                              /* StopAtStepHook(last_step) on every rank; 0: none */
  int64_t save_steps;                             /* the chief's CheckpointSaverHook */
  int nan_action;                                 /* NanTensorHook on "loss" with this tw_nan_action; -1: no hook */
  double timeout_secs;                            /* TW_OPT_COLLECTIVE_TIMEOUT_SECS */
  int64_t vote_every;                             /* TW_OPT_VOTE_EVERY_N_RUNS; 0: default */
  int restore_via_broadcast;
  int catch_signals; /* TW_OPT_CATCH_PREEMPTION_SIGNALS */
  /* Faults, by the global step at which the rank's step sees them (SCENARIO_NEVER: none). */
  int64_t nan_at[SCENARIO_MAX_RANKS];  /* publishes a NaN loss (once) */
  int64_t stop_at[SCENARIO_MAX_RANKS]; /* asks its session to stop */
  int64_t fail_at[SCENARIO_MAX_RANKS]; /* the step returns fail_status (once) */
  tw_status fail_status[SCENARIO_MAX_RANKS];
  int64_t preempt_at[SCENARIO_MAX_RANKS]; /* tw_session_notify_preemption */
  int64_t signal_at[SCENARIO_MAX_RANKS];  /* raise(signal_number) from the step */
  int signal_number;
  int64_t vanish_at[SCENARIO_MAX_RANKS];   /* before the run of this step, leaves without a word */
  int64_t evaluate_at[SCENARIO_MAX_RANKS]; /* before the run of this step, a failing run_without_hooks */
  /* Called from the step of every rank (e.g. to inject a collective fault); may be NULL. */
  void (*at_step)(void *arg, int rank, int64_t step);
  void *at_step_arg;
} scenario;

typedef struct rank_result {
  tw_status create; /* session creation */
  tw_status run;    /* the status that ended the loop (TW_OK: should_stop) */
  tw_status close;
  char message[1024];  /* tw_last_error_message() of the first failure */
  int64_t global_step; /* at the end */
  float w;
  int64_t runs;      /* tw_session_run calls */
  int64_t creations; /* tw_session_creation_count */
  int preempted;
  int vanished;
  tw_status evaluation; /* what the run_without_hooks of evaluate_at returned */
} rank_result;

/* A scenario with no faults: every per-rank fault set to SCENARIO_NEVER. */
void scenario_init(scenario *s);

/* Runs one rank to its end; *out says how it ended. */
void scenario_run_rank(const scenario *s, int rank, const tw_collective *collective, void *user_data, rank_result *out);

/* The global step the newest checkpoint of `dir` restores, as a single process sees it; -1 when a
 * session cannot be created there. */
int64_t scenario_restored_step(const char *dir);

#endif
