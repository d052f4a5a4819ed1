/* The agreement of a job's sessions (docs/tf-semantics.md D1–D13), one test per rule, with the ranks as
 * threads of this process (thread_world.h) running the same data-parallel loop (scenario.h). */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include "scratch_dir.h"    /* first after the feature macros: it selects the POSIX feature level */

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "scenario.h"
#include "thread_world.h"

enum { kRanks = 4 };

typedef struct job {
  scenario s;
  thread_world *world;
  rank_result result[kRanks];
  scratch_dir scratch; /* tests/common/scratch_dir.h */
} job;

static void job_init(job *j) {
  memset(j, 0, sizeof *j);
  scenario_init(&j->s);
  assert_int_equal(scratch_dir_create(&j->scratch), 0);
  for (int r = 0; r < kRanks; ++r) j->s.checkpoint_dir[r] = j->scratch.path;
  j->s.last_step = 8;
  j->s.save_steps = 2;
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
}

static void job_rank(int rank, void *arg) {
  job *j = arg;
  tw_collective table = thread_world_collective(j->world, rank);
  scenario_run_rank(&j->s, rank, &table, thread_world_user_data(j->world, rank), &j->result[rank]);
}

static void job_run(job *j) { assert_int_equal(thread_world_run(j->world, job_rank, j), 0); }

static void job_done(job *j) {
  thread_world_destroy(j->world);
  scratch_dir_destroy(&j->scratch);
}

/* Every rank ended cleanly at `step`, with consistent replicas. */
static void assert_all_stopped_at(const job *j, int64_t step) {
  for (int r = 0; r < kRanks; ++r) {
    const rank_result *res = &j->result[r];
    if (res->create != TW_OK || res->run != TW_OK || res->close != TW_OK) fail_msg("rank %d: %s", r, res->message);
    assert_int_equal(res->global_step, step);
    assert_true(res->w == (float)step);
  }
}

static void D1_D2_every_rank_starts_from_the_chiefs_checkpoint(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.last_step = 4;
  job_run(&j); /* the chief saves at 4 (end); the next job restores it on every rank */
  assert_all_stopped_at(&j, 4);
  j.s.last_step = 6;
  job_run(&j);
  assert_all_stopped_at(&j, 6);
  for (int r = 0; r < kRanks; ++r) assert_int_equal(j.result[r].runs, 2);
  job_done(&j);
}

static void D13_restore_via_broadcast_gives_every_rank_the_chiefs_bytes(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.last_step = 3;
  job_run(&j);
  assert_all_stopped_at(&j, 3);
  /* Only the chief can see the directory now: the others receive the bytes. */
  for (int r = 1; r < kRanks; ++r) j.s.checkpoint_dir[r] = NULL;
  j.s.restore_via_broadcast = 1;
  j.s.last_step = 5;
  job_run(&j);
  assert_all_stopped_at(&j, 5);
  for (int r = 0; r < kRanks; ++r) assert_int_equal(j.result[r].runs, 2);
  job_done(&j);
}

static void D5_stop_on_one_rank_stops_every_rank_after_the_same_run(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.stop_at[3] = 4;
  job_run(&j);
  assert_all_stopped_at(&j, 5);
  for (int r = 0; r < kRanks; ++r) assert_int_equal(j.result[r].runs, 5);
  job_done(&j);
}

static void D6_a_vote_every_three_runs_stops_every_rank_at_the_next_vote(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.vote_every = 3;
  j.s.last_step = 100;
  j.s.stop_at[1] = 3; /* runs 1..3 vote at 3 (step 2 ends it), run 4 (step 3) asks, the vote at run 6 stops */
  job_run(&j);
  assert_all_stopped_at(&j, 6);
  job_done(&j);
}

static void D7_nan_on_rank_2_fails_every_rank_naming_it(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.nan_action = TW_NAN_ACTION_FAIL;
  j.s.nan_at[2] = 3;
  job_run(&j);
  for (int r = 0; r < kRanks; ++r) {
    assert_int_equal(j.result[r].run, TW_NAN_LOSS);
    assert_int_equal(j.result[r].runs, 4);
    assert_non_null(strstr(j.result[r].message, "rank 2 of 4"));
    assert_non_null(strstr(j.result[r].message, "tensor 'loss', step 3"));
    assert_non_null(strstr(j.result[r].message, "first at index 0"));
  }
  assert_int_equal(scenario_restored_step(j.scratch.path), 4); /* the chief's save of that very run stays */
  job_done(&j);
}

static void D7_nan_on_rank_2_rolls_every_rank_back_to_the_same_step(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.nan_action = TW_NAN_ACTION_ROLLBACK;
  j.s.nan_at[2] = 4; /* after step 4 every rank goes back to the checkpoint of step 4, then on to 8 */
  job_run(&j);
  assert_all_stopped_at(&j, 8);
  for (int r = 0; r < kRanks; ++r) {
    assert_int_equal(j.result[r].runs, 8 + 1);
    assert_int_equal(j.result[r].creations, 1);
  }
  job_done(&j);
}

static void D8_aborted_on_one_rank_recovers_every_rank_from_the_same_checkpoint(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.fail_at[1] = 4; /* the chief's newest checkpoint is of step 4: every rank goes back there */
  j.s.fail_status[1] = TW_ABORTED;
  job_run(&j);
  assert_all_stopped_at(&j, 8);
  for (int r = 0; r < kRanks; ++r) {
    assert_int_equal(j.result[r].creations, 2);
    assert_int_equal(j.result[r].runs, 8); /* the failed run is retried inside the same call */
  }
  job_done(&j);
}

static void D9_a_failure_on_one_rank_fails_every_rank_with_its_status(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.fail_at[3] = 2;
  j.s.fail_status[3] = TW_INTERNAL;
  job_run(&j);
  for (int r = 0; r < kRanks; ++r) {
    assert_int_equal(j.result[r].run, TW_INTERNAL);
    assert_non_null(strstr(j.result[r].message, "rank 3 of 4: injected step failure"));
  }
  job_done(&j);
}

static void D9_a_silent_rank_fails_the_others_within_the_timeout(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.timeout_secs = 0.5;
  j.s.vanish_at[3] = 5;
  job_run(&j);
  assert_int_equal(j.result[3].vanished, 1);
  for (int r = 0; r < 3; ++r) {
    assert_int_equal(j.result[r].run, TW_DEADLINE_EXCEEDED);
    assert_non_null(strstr(j.result[r].message, "collective allreduce at the end of run 6"));
    assert_non_null(strstr(j.result[r].message, "timed out after 0.500 s"));
    assert_non_null(strstr(j.result[r].message, "of 4 ranks arrived"));
  }
  assert_int_equal(scenario_restored_step(j.scratch.path), 6); /* the chief's save in the run that timed out */
  job_done(&j);
}

typedef struct fault_at {
  thread_world *world;
  int rank;
  int64_t step;
} fault_at;

static void inject_collective_fault(void *arg, int rank, int64_t step) {
  fault_at *f = arg;
  if (rank == f->rank && step == f->step) thread_world_fail_next(f->world, rank, TW_UNAVAILABLE, 1);
}

static void D9_a_collective_that_fails_gives_a_clear_error_and_loses_nothing(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.timeout_secs = 0.5;
  fault_at f = {j.world, 1, 3};
  j.s.at_step = inject_collective_fault;
  j.s.at_step_arg = &f;
  job_run(&j);
  assert_int_equal(j.result[1].run, TW_UNAVAILABLE);
  assert_non_null(
      strstr(j.result[1].message, "collective allreduce at the end of run 4 (rank 1 of 4): injected fault"));
  for (int r = 0; r < kRanks; ++r) {
    if (r == 1) continue;
    assert_int_equal(j.result[r].run, TW_DEADLINE_EXCEEDED);
    assert_non_null(strstr(j.result[r].message, "of 4 ranks arrived"));
  }
  assert_int_equal(scenario_restored_step(j.scratch.path), 4); /* nothing lost */
  job_done(&j);
}

static void D10_preemption_on_one_rank_saves_and_stops_every_rank_at_the_same_step(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.save_steps = 100;
  j.s.preempt_at[2] = 2;
  job_run(&j);
  assert_all_stopped_at(&j, 3);
  for (int r = 0; r < kRanks; ++r) assert_int_equal(j.result[r].preempted, 1);
  assert_int_equal(scenario_restored_step(j.scratch.path), 3);
  job_done(&j);
}

static void D10_a_caught_sigterm_saves_and_stops_a_single_process(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.save_steps = 100;
  j.s.catch_signals = 1;
  j.s.signal_at[0] = 4;
  rank_result one;
  scenario_run_rank(&j.s, 0, NULL, NULL, &one);
  if (one.run != TW_OK || one.close != TW_OK) fail_msg("%s", one.message);
  assert_int_equal(one.global_step, 5);
  assert_int_equal(one.preempted, 1);
  assert_int_equal(scenario_restored_step(j.scratch.path), 5);
  /* close put the previous disposition back: SIGUSR1 is ignored again, as set below */
  job_done(&j);
}

static void D10_close_restores_the_previous_signal_handlers(void **state) {
  (void)state;
  struct sigaction ignore, before, after;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  assert_int_equal(sigaction(SIGUSR1, &ignore, &before), 0);
  job j;
  job_init(&j);
  j.s.catch_signals = 1;
  j.s.signal_number = SIGUSR1;
  j.s.signal_at[0] = 1;
  j.s.last_step = 3;
  rank_result one;
  scenario_run_rank(&j.s, 0, NULL, NULL, &one);
  assert_int_equal(one.preempted, 1);
  assert_int_equal(one.global_step, 2);
  assert_int_equal(sigaction(SIGUSR1, &before, &after), 0);
  assert_true(after.sa_handler == SIG_IGN);
  job_done(&j);
}

static void D3_mismatched_restored_steps_fail_every_rank_clearly(void **state) {
  (void)state;
  job j;
  job_init(&j);
  /* Rank 1 reads its own directory, where a checkpoint of the same name holds another step. */
  scratch_dir other_dir;
  assert_int_equal(scratch_dir_create(&other_dir), 0);
  const char *other = other_dir.path;
  j.s.last_step = 4;
  job_run(&j);
  assert_all_stopped_at(&j, 4);
  float w = 6;
  int64_t step = 6;
  tw_tensor vars[2] = {TW_TENSOR_INIT, TW_TENSOR_INIT};
  vars[0].dtype = TW_FLOAT32, vars[0].name = "w", vars[0].data = &w;
  vars[1].dtype = TW_INT64, vars[1].name = "global_step", vars[1].data = &step;
  tw_saver *saver = NULL;
  assert_int_equal(tw_saver_create(&saver, vars, 2), TW_OK);
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", other);
  const char *written = NULL;
  assert_int_equal(tw_saver_save(&written, saver, prefix, 4), TW_OK);
  tw_saver_destroy(saver);
  j.s.checkpoint_dir[1] = other;
  j.s.last_step = 8;
  job_run(&j);
  for (int r = 0; r < kRanks; ++r) {
    assert_int_equal(j.result[r].create, TW_FAILED_PRECONDITION);
    assert_non_null(strstr(j.result[r].message, "rank 1 of 4: restored global step 6"));
    assert_non_null(strstr(j.result[r].message, "the chief restored global step 4"));
  }
  scratch_dir_destroy(&other_dir);
  job_done(&j);
}

/* D1: a begin that fails on one rank fails creation on every rank with its message, instead of leaving
 * the others waiting for the chief's restore: here the chief's CheckpointSaverHook cannot take the
 * directory's lock, which another writer (a tw_saver of this process) holds — two jobs in one directory. */
static void D1_a_failed_begin_on_the_chief_fails_creation_on_every_rank(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.timeout_secs = 5; /* a rank left waiting fails the test quickly */
  float w = 1;
  tw_tensor var = TW_TENSOR_INIT;
  var.dtype = TW_FLOAT32, var.name = "w", var.data = &w;
  tw_saver *holder = NULL;
  assert_int_equal(tw_saver_create(&holder, &var, 1), TW_OK);
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s/other.ckpt", j.scratch.path);
  const char *written = NULL;
  assert_int_equal(tw_saver_save(&written, holder, prefix, 1), TW_OK); /* takes the directory's lock */
  job_run(&j);
  for (int r = 0; r < kRanks; ++r) {
    if (j.result[r].create != TW_FAILED_PRECONDITION ||
        strstr(j.result[r].message, "rank 0 of 4: checkpoint directory") == NULL ||
        strstr(j.result[r].message, "is in use") == NULL) {
      fail_msg("rank %d: create %d: %s", r, j.result[r].create, j.result[r].message);
    }
  }
  tw_saver_destroy(holder);
  job_done(&j);
}

static void D11_rank_0_is_the_chief_unless_the_option_says_otherwise(void **state) {
  (void)state;
  thread_world *world = thread_world_create(2);
  assert_non_null(world);
  tw_collective table = thread_world_collective(world, 1);
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  assert_int_equal(tw_options_set_collective(o, &table, thread_world_user_data(world, 1)), TW_OK);
  /* Creation would wait for rank 0; the choice is made from the options, before any exchange. */
  assert_int_equal(tw_options_set_int64(o, TW_OPT_IS_CHIEF, 1), TW_OK);
  assert_int_equal(tw_options_set_double(o, TW_OPT_COLLECTIVE_TIMEOUT_SECS, 0.2), TW_OK);
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_session_create(&s, o, NULL, 0), TW_DEADLINE_EXCEEDED);
  assert_non_null(strstr(tw_last_error_message(), "finding the chief"));
  assert_non_null(strstr(tw_last_error_message(), "1 of 2 ranks arrived"));
  tw_options_destroy(o);
  thread_world_destroy(world);
}

typedef struct two_chiefs {
  thread_world *world;
  tw_status status[2];
  char message[2][512];
} two_chiefs;

static void two_chiefs_rank(int rank, void *arg) {
  two_chiefs *t = arg;
  tw_collective table = thread_world_collective(t->world, rank);
  tw_options *o = NULL;
  if (tw_options_create(&o) != TW_OK) return;
  if (tw_options_set_collective(o, &table, thread_world_user_data(t->world, rank)) == TW_OK &&
      tw_options_set_int64(o, TW_OPT_IS_CHIEF, 1) == TW_OK) {
    tw_session *s = NULL;
    t->status[rank] = tw_monitored_session_create(&s, o, NULL, 0);
    snprintf(t->message[rank], sizeof t->message[rank], "%s", tw_last_error_message());
  }
  tw_options_destroy(o);
}

static void D11_two_chiefs_are_refused_on_every_rank(void **state) {
  (void)state;
  two_chiefs t;
  memset(&t, 0, sizeof t);
  t.world = thread_world_create(2);
  assert_non_null(t.world);
  assert_int_equal(thread_world_run(t.world, two_chiefs_rank, &t), 0);
  for (int r = 0; r < 2; ++r) {
    assert_int_equal(t.status[r], TW_INVALID_ARGUMENT);
    assert_non_null(strstr(t.message[r], "ranks 0 and 1 are both chief"));
  }
  thread_world_destroy(t.world);
}

static void D15_run_without_hooks_on_one_rank_is_its_own(void **state) {
  (void)state;
  job j;
  job_init(&j);
  j.s.evaluate_at[0] = 3;
  job_run(&j);
  assert_all_stopped_at(&j, 8);
  assert_int_equal(j.result[0].evaluation, TW_INTERNAL);
  job_done(&j);
}

typedef struct hook_counts {
  thread_world *world;
  scratch_dir scratch; /* tests/common/scratch_dir.h */
  size_t count[2];
  char names[2][256];
} hook_counts;

static void hook_counts_rank(int rank, void *arg) {
  hook_counts *h = arg;
  tw_collective table = thread_world_collective(h->world, rank);
  tw_options *o = NULL;
  if (tw_options_create(&o) != TW_OK) return;
  const char *names[] = {"global_step"};
  tw_hook *hooks[2] = {NULL, NULL};
  if (tw_options_set_collective(o, &table, thread_world_user_data(h->world, rank)) == TW_OK &&
      tw_options_set_string(o, TW_OPT_CHECKPOINT_DIR, h->scratch.path) == TW_OK &&
      tw_options_set_int64(o, TW_OPT_EVERY_N_STEPS, 1) == TW_OK &&
      tw_logging_tensor_hook_create(&hooks[0], names, NULL, 1, o, NULL, NULL, NULL) == TW_OK &&
      tw_stop_at_step_hook_create(&hooks[1], 1, TW_UNSET) == TW_OK) {
    tw_session *s = NULL;
    if (tw_monitored_training_session_create(&s, o, hooks, 2, NULL, 0) == TW_OK) {
      h->count[rank] = tw_session_hook_count(s);
      for (size_t i = 0; i < h->count[rank]; ++i) {
        tw_hook *hook = NULL;
        if (tw_session_hook_at(&hook, s, i) != TW_OK) break;
        size_t used = strlen(h->names[rank]);
        snprintf(h->names[rank] + used, sizeof h->names[rank] - used, "%s%s", used ? " " : "", tw_hook_name(hook));
      }
      if (tw_session_close(s) != TW_OK) h->count[rank] = 0;
      if (tw_session_destroy(s) != TW_OK) h->count[rank] = 0;
    }
  }
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
  tw_options_destroy(o);
}

static void D14_side_effects_stay_on_the_chief(void **state) {
  (void)state;
  hook_counts h;
  memset(&h, 0, sizeof h);
  assert_int_equal(scratch_dir_create(&h.scratch), 0);
  h.world = thread_world_create(2);
  assert_non_null(h.world);
  assert_int_equal(thread_world_run(h.world, hook_counts_rank, &h), 0);
  assert_string_equal(h.names[0],
                      "StepCounterHook SummarySaverHook CheckpointSaverHook LoggingTensorHook StopAtStepHook");
  assert_string_equal(h.names[1], "StopAtStepHook");
  thread_world_destroy(h.world);
  scratch_dir_destroy(&h.scratch);
}

int main(void) {
  tw_set_log_level(TW_LOG_ERROR + 10); /* the scenarios fail on purpose: keep their logs out of TAP */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(D1_D2_every_rank_starts_from_the_chiefs_checkpoint),
      cmocka_unit_test(D13_restore_via_broadcast_gives_every_rank_the_chiefs_bytes),
      cmocka_unit_test(D5_stop_on_one_rank_stops_every_rank_after_the_same_run),
      cmocka_unit_test(D6_a_vote_every_three_runs_stops_every_rank_at_the_next_vote),
      cmocka_unit_test(D7_nan_on_rank_2_fails_every_rank_naming_it),
      cmocka_unit_test(D7_nan_on_rank_2_rolls_every_rank_back_to_the_same_step),
      cmocka_unit_test(D8_aborted_on_one_rank_recovers_every_rank_from_the_same_checkpoint),
      cmocka_unit_test(D9_a_failure_on_one_rank_fails_every_rank_with_its_status),
      cmocka_unit_test(D9_a_silent_rank_fails_the_others_within_the_timeout),
      cmocka_unit_test(D9_a_collective_that_fails_gives_a_clear_error_and_loses_nothing),
      cmocka_unit_test(D10_preemption_on_one_rank_saves_and_stops_every_rank_at_the_same_step),
      cmocka_unit_test(D10_a_caught_sigterm_saves_and_stops_a_single_process),
      cmocka_unit_test(D10_close_restores_the_previous_signal_handlers),
      cmocka_unit_test(D3_mismatched_restored_steps_fail_every_rank_clearly),
      cmocka_unit_test(D1_a_failed_begin_on_the_chief_fails_creation_on_every_rank),
      cmocka_unit_test(D11_rank_0_is_the_chief_unless_the_option_says_otherwise),
      cmocka_unit_test(D11_two_chiefs_are_refused_on_every_rank),
      cmocka_unit_test(D14_side_effects_stay_on_the_chief),
      cmocka_unit_test(D15_run_without_hooks_on_one_rank_is_its_own),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
