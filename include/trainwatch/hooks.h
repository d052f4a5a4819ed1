/*
 * trainwatch/hooks.h — the built-in hooks of tf.train.
 *
 * Each constructor returns a hook with one reference owned by the caller (release it with
 * tw_hook_destroy, before or after handing it to a session). Hooks are not thread-safe and belong to
 * one open session at a time.
 */
#ifndef TRAINWATCH_HOOKS_H
#define TRAINWATCH_HOOKS_H

#include "trainwatch/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* StopAtStepHook(num_steps=None, last_step=None): requests stop after the run that brings global_step
 * to last_step (TF's B11–B15). Pass TW_UNSET for the argument you leave out. With num_steps, last_step
 * becomes global_step + num_steps when the session is first created; a recovery does not move it.
 * At least one run always happens, even with num_steps = 0 or a restored step past last_step.
 * Errors: TW_INVALID_ARGUMENT (out NULL; "One of num_steps or last_step must be specified."; "Only one
 * of num_steps or last_step can be specified."; a negative num_steps), TW_RESOURCE_EXHAUSTED. */
TW_API tw_status tw_stop_at_step_hook_create(tw_hook **out, int64_t num_steps, int64_t last_step);

/* ---------------------------------------------------------------------------------------------- */
/* Checkpoints                                                                                    */
/* ---------------------------------------------------------------------------------------------- */

typedef struct tw_checkpoint_listener tw_checkpoint_listener;

/* CheckpointSaverListener (B17). Every slot may be NULL. after_save may set *request_stop to non-zero
 * to stop training (ignored for the saves at session creation and at end, as in TF). A non-OK return
 * fails the operation it runs in. destroy(user_data) runs exactly once, when the listener and every
 * hook holding it are gone. struct_size as for tw_hook_callbacks. */
typedef struct tw_checkpoint_listener_callbacks {
  uint32_t struct_size;
  tw_status (*begin)(void *user_data);
  tw_status (*before_save)(void *user_data, tw_session *session, int64_t global_step);
  tw_status (*after_save)(void *user_data, tw_session *session, int64_t global_step, int *request_stop);
  tw_status (*end)(void *user_data, tw_session *session, int64_t global_step);
  void (*destroy)(void *user_data);
} tw_checkpoint_listener_callbacks;

/* Creates a listener (the table is copied). Errors: TW_INVALID_ARGUMENT (NULL out/callbacks, bad
 * struct_size), TW_RESOURCE_EXHAUSTED; on error destroy is not called. */
TW_API tw_status tw_checkpoint_listener_create(tw_checkpoint_listener **out, const char *name,
                                               const tw_checkpoint_listener_callbacks *callbacks,
                                               void *user_data);
/* Releases the caller's reference; hooks keep their own. NULL is a no-op. */
TW_API void tw_checkpoint_listener_destroy(tw_checkpoint_listener *listener);

/* CheckpointSaverHook(checkpoint_dir, save_secs, save_steps, checkpoint_basename, listeners) with TF's
 * semantics (B18–B24): saves <checkpoint_dir>/<basename>-<global_step> at session creation and after
 * every recovery (B21), whenever the timer fires (exactly one of TW_OPT_SAVE_CHECKPOINT_SECS /
 * TW_OPT_SAVE_CHECKPOINT_STEPS set in opts), and at end if the step moved since the last save (B23); a
 * SessionLog CHECKPOINT event goes to the event file of checkpoint_dir. It saves through the session's
 * saver (variables + global_step, retention TW_OPT_MAX_TO_KEEP / TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS
 * of the session's options).
 * With TW_OPT_ASYNC_CHECKPOINT (default) the run stalls only while the variables are copied;
 * compression and the durable write happen in the background, one save in flight; after_save
 * listeners run on the session's thread once the write has finished (at a later run or at end), and a
 * failed background write fails the next run. A save is skipped, with a warning, while a float
 * variable holds NaN or Inf, so that every checkpoint is a good one to roll back to. Listeners are
 * retained. Errors: TW_INVALID_ARGUMENT (out or checkpoint_dir NULL/empty; listeners NULL with a
 * count or a NULL entry; neither or both of secs and steps: "Either every_secs or every_steps should
 * be provided." / "Can not provide both every_secs and every_steps."), TW_RESOURCE_EXHAUSTED. */
TW_API tw_status tw_checkpoint_saver_hook_create(tw_hook **out, const char *checkpoint_dir, const tw_options *opts,
                                                 tw_checkpoint_listener *const *listeners, size_t n_listeners);

/* ---------------------------------------------------------------------------------------------- */
/* NaN / Inf guard                                                                                */
/* ---------------------------------------------------------------------------------------------- */

/* What a NanTensorHook does when a watched value holds NaN (or ±Inf, when detecting Inf). */
typedef enum tw_nan_action {
  TW_NAN_ACTION_FAIL = 0,     /* fail the run with TW_NAN_LOSS (TF: fail_on_nan_loss=True) */
  TW_NAN_ACTION_STOP = 1,     /* log a warning and request stop (TF: fail_on_nan_loss=False) */
  TW_NAN_ACTION_CALLBACK = 2, /* call the hook's tw_nan_fn, which decides */
  TW_NAN_ACTION_ROLLBACK = 3, /* restore the newest good checkpoint of TW_OPT_CHECKPOINT_DIR into the
                                 variables (global_step included) and go on; after TW_OPT_NAN_MAX_ROLLBACKS
                                 rollbacks, or with no checkpoint to go back to, fail as TW_NAN_ACTION_FAIL */
  TW_NAN_ACTION_MAX_ENUM_ = 0x7FFFFFFF
} tw_nan_action;

/* What the hook found in one watched value. Valid during the callback only. */
typedef struct tw_nan_event {
  uint32_t struct_size;
  const char *tensor_name;
  int64_t global_step;            /* the global step the run started at */
  int64_t nan_count;
  int64_t pos_inf_count;          /* 0 when Inf is not detected */
  int64_t neg_inf_count;
  int64_t first_nonfinite_index;  /* row-major element index */
} tw_nan_event;

/* TW_NAN_ACTION_CALLBACK: called once per bad value, in watch order. Return TW_OK to go on (the
 * callback may call tw_session_request_stop), or a status that fails the run. */
typedef tw_status (*tw_nan_fn)(void *user_data, tw_session *session, const tw_nan_event *event);

/* NanTensorHook(loss_tensor, fail_on_nan_loss=True) with TF's semantics (B31–B34): the value named
 * loss_name is fetched on every run; NaN (not Inf, as in TF) fails the run with TW_NAN_LOSS and the
 * message "NaN loss during training." followed by where: "(tensor 'loss', step 12: 1 NaN, 0 +Inf,
 * 0 -Inf, first at index 0)"; with fail_on_nan_loss = 0 it logs the warning "Model diverged with
 * loss = NaN." and requests stop instead. The value may have any shape and float dtype.
 * Errors: TW_INVALID_ARGUMENT (out or loss_name NULL/empty), TW_RESOURCE_EXHAUSTED. */
TW_API tw_status tw_nan_tensor_hook_create(tw_hook **out, const char *loss_name, int fail_on_nan_loss);

/* The full guard: watches every name or fnmatch pattern in `watch` (e.g. "loss", "grad/" + "*"),
 * reads TW_OPT_NAN_ACTION, TW_OPT_NAN_DETECT_INF (default on) and TW_OPT_NAN_EVERY_N_STEPS from opts
 * (NULL = defaults), and with TW_NAN_ACTION_CALLBACK calls fn. Messages name the tensor, the step, the
 * NaN/±Inf counts and the first bad index. The patterns are copied. destroy(user_data), if given, runs
 * once when the hook is freed; on error it is not called.
 * Errors: TW_INVALID_ARGUMENT (out NULL; watch NULL or empty, or an empty name; an out-of-range option;
 * TW_NAN_ACTION_CALLBACK without fn), TW_RESOURCE_EXHAUSTED. */
TW_API tw_status tw_nan_tensor_hook_create_with_options(tw_hook **out, const char *const *watch, size_t n_watch,
                                                        const tw_options *opts, tw_nan_fn fn, void *user_data,
                                                        void (*destroy)(void *user_data));

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_HOOKS_H */
