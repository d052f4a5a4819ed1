#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include "scenario.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

typedef struct rank_state {
  const scenario *s;
  int rank;
  float w;
  int nan_done, fail_done, preempt_done, signal_done, stop_done;
} rank_state;

void scenario_init(scenario *s) {
  memset(s, 0, sizeof *s);
  s->nan_action = -1;
  s->timeout_secs = 30;
  s->signal_number = SIGTERM;
  for (int r = 0; r < SCENARIO_MAX_RANKS; ++r) {
    s->nan_at[r] = s->stop_at[r] = s->fail_at[r] = s->preempt_at[r] = s->signal_at[r] = s->vanish_at[r] =
        s->evaluate_at[r] = SCENARIO_NEVER;
  }
}

static tw_status init_w(void *user_data, tw_session *session) {
  (void)session;
  ((rank_state *)user_data)->w = 0;
  return TW_OK;
}

static tw_status train_step(void *user_data, tw_step_context *ctx) {
  rank_state *st = user_data;
  const scenario *s = st->s;
  const int r = st->rank;
  const int64_t step = tw_step_context_global_step(ctx);
  tw_session *session = tw_step_context_session(ctx);
  if (s->at_step != NULL) s->at_step(s->at_step_arg, r, step);
  if (step == s->fail_at[r] && !st->fail_done) {
    st->fail_done = 1;
    return tw_set_error(s->fail_status[r], "injected step failure");
  }
  st->w += 1;
  float loss = st->w;
  if (step == s->nan_at[r] && !st->nan_done) {
    st->nan_done = 1;
    loss = NAN;
  }
  if (step == s->stop_at[r] && !st->stop_done) {
    st->stop_done = 1;
    tw_status status = tw_session_request_stop(session);
    if (status != TW_OK) return status;
  }
  if (step == s->preempt_at[r] && !st->preempt_done) {
    st->preempt_done = 1;
    tw_status status = tw_session_notify_preemption(session);
    if (status != TW_OK) return status;
  }
  if (step == s->signal_at[r] && !st->signal_done) {
    st->signal_done = 1;
    raise(s->signal_number);
  }
  tw_tensor out = TW_TENSOR_INIT;
  out.dtype = TW_FLOAT32;
  out.name = "loss";
  out.data = &loss;
  return tw_step_context_publish_copy(ctx, &out);
}

static tw_status failing_evaluation(void *user_data, tw_step_context *ctx) {
  (void)user_data;
  (void)ctx;
  return tw_set_error(TW_INTERNAL, "evaluation failed");
}

static tw_status make_options(const scenario *s, int rank, const tw_collective *collective, void *user_data,
                              rank_state *st, tw_options **out) {
  tw_options *o = NULL;
  tw_status status = tw_options_create(&o);
  if (status != TW_OK) return status;
  tw_tensor w = TW_TENSOR_INIT;
  w.dtype = TW_FLOAT32;
  w.name = "w";
  w.data = &st->w;
  if (status == TW_OK && s->checkpoint_dir[rank] != NULL) {
    status = tw_options_set_string(o, TW_OPT_CHECKPOINT_DIR, s->checkpoint_dir[rank]);
  }
  if (status == TW_OK) status = tw_options_add_variable(o, &w);
  if (status == TW_OK) status = tw_options_set_init_fn(o, init_w, st, NULL);
  if (status == TW_OK && s->save_steps > 0)
    status = tw_options_set_int64(o, TW_OPT_CHECKPOINT_EVERY_N_STEPS, s->save_steps);
  if (status == TW_OK) status = tw_options_set_none(o, TW_OPT_SUMMARY_EVERY_N_STEPS);
  if (status == TW_OK) status = tw_options_set_int64(o, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 0);
  if (status == TW_OK) status = tw_options_set_double(o, TW_OPT_RECOVERY_BACKOFF_SECS, 0);
  if (status == TW_OK) status = tw_options_set_int64(o, TW_OPT_CATCH_PREEMPTION_SIGNALS, s->catch_signals);
  if (status == TW_OK && collective != NULL) {
    status = tw_options_set_double(o, TW_OPT_COLLECTIVE_TIMEOUT_SECS, s->timeout_secs);
    if (status == TW_OK && s->vote_every > 0) status = tw_options_set_int64(o, TW_OPT_VOTE_EVERY_N_RUNS, s->vote_every);
    if (status == TW_OK) status = tw_options_set_int64(o, TW_OPT_RESTORE_VIA_BROADCAST, s->restore_via_broadcast);
    if (status == TW_OK) status = tw_options_set_collective(o, collective, user_data);
  }
  if (status != TW_OK) {
    tw_options_destroy(o);
    return status;
  }
  *out = o;
  return TW_OK;
}

static void note_failure(rank_result *out, tw_status status) {
  if (out->message[0] == '\0') snprintf(out->message, sizeof out->message, "%s", tw_last_error_message());
  (void)status;
}

void scenario_run_rank(const scenario *s, int rank, const tw_collective *collective, void *user_data,
                       rank_result *out) {
  memset(out, 0, sizeof *out);
  rank_state st;
  memset(&st, 0, sizeof st);
  st.s = s;
  st.rank = rank;
  tw_options *opts = NULL;
  out->create = make_options(s, rank, collective, user_data, &st, &opts);
  if (out->create != TW_OK) {
    note_failure(out, out->create);
    return;
  }
  tw_hook *hooks[2];
  size_t n_hooks = 0;
  if (s->last_step > 0 && tw_stop_at_step_hook_create(&hooks[n_hooks], TW_UNSET, s->last_step) == TW_OK) ++n_hooks;
  if (s->nan_action >= 0) {
    tw_options *nan_opts = NULL;
    const char *watch[] = {"loss"};
    if (tw_options_create(&nan_opts) == TW_OK) {
      if (tw_options_set_int64(nan_opts, TW_OPT_NAN_ACTION, s->nan_action) == TW_OK &&
          tw_nan_tensor_hook_create_with_options(&hooks[n_hooks], watch, 1, nan_opts, NULL, NULL, NULL) == TW_OK) {
        ++n_hooks;
      }
      tw_options_destroy(nan_opts);
    }
  }
  tw_session *session = NULL;
  out->create = tw_monitored_training_session_create(&session, opts, hooks, n_hooks, NULL, 0);
  for (size_t i = 0; i < n_hooks; ++i) tw_hook_destroy(hooks[i]);
  tw_options_destroy(opts);
  if (out->create != TW_OK) {
    note_failure(out, out->create);
    return;
  }
  out->run = TW_OK;
  while (!tw_session_should_stop(session)) {
    int64_t step = 0;
    step = tw_session_global_step(session);
    if (step == s->vanish_at[rank]) { /* gone: no close, no word to the others */
      out->vanished = 1;
      out->global_step = step;
      if (tw_session_destroy(session) != TW_OK) note_failure(out, TW_INTERNAL);
      return;
    }
    if (step == s->evaluate_at[rank]) {
      out->evaluation = tw_session_run_without_hooks(session, NULL, 0, failing_evaluation, NULL);
    }
    ++out->runs;
    out->run = tw_session_run(session, NULL, 0, train_step, &st);
    if (out->run != TW_OK) {
      note_failure(out, out->run);
      break;
    }
  }
  out->global_step = tw_session_global_step(session);
  out->preempted = tw_session_preempted(session);
  out->creations = tw_session_creation_count(session);
  out->close = tw_session_close(session);
  if (out->close != TW_OK) note_failure(out, out->close);
  out->w = st.w;
  if (tw_session_destroy(session) != TW_OK) note_failure(out, TW_INTERNAL);
}

int64_t scenario_restored_step(const char *dir) {
  float w = -1;
  tw_options *o = NULL;
  if (tw_options_create(&o) != TW_OK) return -1;
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.name = "w";
  t.data = &w;
  tw_session *session = NULL;
  int64_t step = -1;
  if (tw_options_set_string(o, TW_OPT_CHECKPOINT_DIR, dir) == TW_OK && tw_options_add_variable(o, &t) == TW_OK &&
      tw_monitored_session_create(&session, o, NULL, 0) == TW_OK) {
    step = tw_session_global_step(session);
    if ((float)step != w) step = -2; /* the checkpoint's replica is not consistent */
    if (tw_session_close(session) != TW_OK) step = -4;
    if (tw_session_destroy(session) != TW_OK) step = -5;
  }
  tw_options_destroy(o);
  return step;
}
