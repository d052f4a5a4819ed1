/*
 * trainwatch/hooks.h — the built-in hooks of tf.train.
 *
 * Each constructor returns a hook with one reference owned by the caller (release it with
 * tw_hook_destroy, before or after handing it to a session). Hooks are not thread-safe and belong to
 * one open session at a time. Every constructor can also fail with TW_RESOURCE_EXHAUSTED (out of
 * memory); on any error *out is untouched and a destroy(user_data) passed in is not called.
 *
 * Periodic hooks fire every N steps or every N seconds (TF's SecondOrStepTimer, B1–B5). Every one of
 * them (CheckpointSaverHook, LoggingTensorHook, StepCounterHook, SummarySaverHook, ProfilerHook) reads
 * its period from the tw_options it is created with: TW_OPT_EVERY_N_STEPS (int64) and
 * TW_OPT_EVERY_N_SECS (double seconds), and its directory, where it has one, from TW_OPT_OUTPUT_DIR.
 * Each hook names TF's spelling (save_steps, every_n_iter, …), which the Python package keeps. The
 * TW_OPT_<hook>_EVERY_N_* keys are MonitoredTrainingSession's arguments (save_checkpoint_steps, …), not
 * the hooks'. Setting both is TW_INVALID_ARGUMENT "Can not provide both every_secs and every_steps."
 * (TF's T3, resolved as an error), neither is "Either every_secs or every_steps should be provided."
 * unless the hook says otherwise. TW_UNSET (steps) and TW_UNSET_SECS or any negative number (seconds)
 * mean "not given".
 * Every log line goes through the library's log sink (tw_set_log_sink).
 */
#ifndef TRAINWATCH_HOOKS_H
#define TRAINWATCH_HOOKS_H

#include "trainwatch/session.h"
#include "trainwatch/summary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* StopAtStepHook(num_steps=None, last_step=None): requests stop after the run that brings global_step
 * to last_step (TF's B11–B15). Pass TW_UNSET for the argument you leave out. With num_steps, last_step
 * becomes global_step + num_steps when the session is first created; a recovery does not move it.
 * At least one run always happens, even with num_steps = 0 or a restored step past last_step.
 * Errors: TW_INVALID_ARGUMENT (out NULL; "One of num_steps or last_step must be specified."; "Only one
 * of num_steps or last_step can be specified."; a negative num_steps), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_stop_at_step_hook_create(tw_hook **out, int64_t num_steps, int64_t last_step);

/* ---------------------------------------------------------------------------------------------- */
/* Checkpoints                                                                                    */
/* ---------------------------------------------------------------------------------------------- */

typedef struct tw_checkpoint_listener tw_checkpoint_listener;

/* CheckpointSaverListener (B17). Every slot may be NULL. after_save may set *request_stop to non-zero
 * to stop training (ignored for the saves at session creation and at end, as in TF). A non-OK return
 * fails the operation it runs in. destroy(user_data) runs exactly once, when the listener and every
 * hook holding it are gone. struct_size as for tw_hook_callbacks (a versioned struct). */
typedef struct tw_checkpoint_listener_callbacks {
  uint32_t struct_size;
  tw_status (*begin)(void *user_data);
  tw_status (*before_save)(void *user_data, tw_session *session, int64_t global_step);
  tw_status (*after_save)(void *user_data, tw_session *session, int64_t global_step, int *request_stop);
  tw_status (*end)(void *user_data, tw_session *session, int64_t global_step);
  void (*destroy)(void *user_data);
} tw_checkpoint_listener_callbacks;

#define TW_CHECKPOINT_LISTENER_CALLBACKS_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_checkpoint_listener_callbacks, destroy)
#define TW_CHECKPOINT_LISTENER_CALLBACKS_INIT \
  { (uint32_t)sizeof(tw_checkpoint_listener_callbacks), NULL, NULL, NULL, NULL, NULL }

/* Sets *callbacks to TW_CHECKPOINT_LISTENER_CALLBACKS_INIT (compiled into the caller). NULL is a no-op. */
static inline void tw_checkpoint_listener_callbacks_init(tw_checkpoint_listener_callbacks *callbacks) {
  const tw_checkpoint_listener_callbacks init = TW_CHECKPOINT_LISTENER_CALLBACKS_INIT;
  if (callbacks != NULL) *callbacks = init;
}

/* Creates a listener (the table is copied). Errors: TW_INVALID_ARGUMENT (NULL out/callbacks, empty
 * name, struct_size smaller than TW_CHECKPOINT_LISTENER_CALLBACKS_SIZE_V1 or larger than this library
 * knows with non-zero extra bytes), TW_RESOURCE_EXHAUSTED; on error destroy is not called. */
TW_NODISCARD TW_API tw_status tw_checkpoint_listener_create(tw_checkpoint_listener **out, const char *name,
                                                            const tw_checkpoint_listener_callbacks *callbacks,
                                                            void *user_data);
/* Releases the caller's reference; hooks keep their own. NULL is a no-op. */
TW_API void tw_checkpoint_listener_destroy(tw_checkpoint_listener *listener);

/* CheckpointSaverHook(checkpoint_dir, save_secs, save_steps, checkpoint_basename, listeners) with TF's
 * semantics (B18–B24): saves <checkpoint_dir>/<basename>-<global_step> at session creation and after
 * every recovery (B21), whenever the timer fires (exactly one of TW_OPT_EVERY_N_SECS (save_secs) /
 * TW_OPT_EVERY_N_STEPS (save_steps) set in opts), and at end if the step moved since the last save (B23); a
 * SessionLog CHECKPOINT event goes to the event file of checkpoint_dir. It saves through the session's
 * saver (variables + global_step, retention TW_OPT_MAX_TO_KEEP / TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS
 * of the session's options).
 * With TW_OPT_ASYNC_CHECKPOINT (default) the run stalls only while the variables are copied (device
 * variables into the saver's pinned staging buffers, trainwatch/device.h; a failed copy fails the save);
 * compression and the durable write happen in the background, one save in flight, and a failed
 * background write fails the next run. A hook with listeners waits for the write in the run that saves
 * and calls after_save there, so a listener's stop request ends training after that run, as in TF
 * (B22); TW_OPT_DEFERRED_CHECKPOINT_LISTENERS = 1 keeps the write in the background instead, and
 * after_save (with its stop request) then runs at a later run or at end, once the write has finished.
 * In a session of a job with sharded variables (trainwatch/distributed.h) the hook runs on every rank
 * and saves synchronously on the session's thread, whatever `opts` says (D17). A save is skipped, with a warning, while
 * a float variable holds NaN or Inf, so that every checkpoint is a good one to roll back to (device variables are
 * counted on their device, all in one call; a count that fails fails the save). Listeners are retained.
 * Errors: TW_INVALID_ARGUMENT (out or checkpoint_dir NULL/empty; listeners NULL with a count or a NULL entry; neither
 * or both of secs and steps: "Either every_secs or every_steps should be provided." / "Can not provide both every_secs
 * and every_steps."; neither but a TW_OPT_CHECKPOINT_EVERY_N_* key set, a message naming the keys to use),
 * TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_checkpoint_saver_hook_create(tw_hook **out, const char *checkpoint_dir,
                                                              const tw_options *opts,
                                                              tw_checkpoint_listener *const *listeners,
                                                              size_t n_listeners);

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
                                 rollbacks, or with no checkpoint to go back to, fail as TW_NAN_ACTION_FAIL.
                                 A checkpoint the session saved in the run that saw the NaN is first taken
                                 off the state file and deleted: never the target (docs/tf-semantics.md B48) */
  TW_NAN_ACTION_MAX_ENUM_ = 0x7FFFFFFF
} tw_nan_action;

/* What the hook found in one watched value. Valid during the callback only. Lent by the library:
 * struct_size is the library's (read later members only when TW_STRUCT_HAS says so). */
typedef struct tw_nan_event {
  uint32_t struct_size;
  const char *tensor_name;
  int64_t global_step; /* the global step the run started at */
  int64_t nan_count;
  int64_t pos_inf_count; /* 0 when Inf is not detected */
  int64_t neg_inf_count;
  int64_t first_nonfinite_index; /* row-major element index */
} tw_nan_event;

#define TW_NAN_EVENT_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_nan_event, first_nonfinite_index)

/* TW_NAN_ACTION_CALLBACK: called once per bad value, in watch order. Return TW_OK to go on (the
 * callback may call tw_session_request_stop), or a status that fails the run. */
typedef tw_status (*tw_nan_fn)(void *user_data, tw_session *session, const tw_nan_event *event);

/* NanTensorHook(loss_tensor, fail_on_nan_loss=True) with TF's semantics (B31–B34): the value named
 * loss_name is fetched on every run; NaN (not Inf, as in TF) fails the run with TW_NAN_LOSS and the
 * message "NaN loss during training." followed by where: "(tensor 'loss', step 12: 1 NaN, 0 +Inf,
 * 0 -Inf, first at index 0)"; with fail_on_nan_loss = 0 it logs the warning "Model diverged with
 * loss = NaN." and requests stop instead. The value may have any shape and float dtype.
 * Errors: TW_INVALID_ARGUMENT (out or loss_name NULL/empty), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_nan_tensor_hook_create(tw_hook **out, const char *loss_name, int fail_on_nan_loss);

/* The full guard: watches every name or fnmatch pattern in `watch` (e.g. "loss", "grad/" + "*"),
 * reads TW_OPT_NAN_ACTION, TW_OPT_NAN_DETECT_INF (default on) and TW_OPT_NAN_EVERY_N_STEPS from opts
 * (NULL = defaults), and with TW_NAN_ACTION_CALLBACK calls fn. Messages name the tensor, the step, the
 * NaN/±Inf counts and the first bad index. The patterns are copied. destroy(user_data), if given, runs
 * once when the hook is freed; on error it is not called.
 * Errors: TW_INVALID_ARGUMENT (out NULL; watch NULL or empty, or an empty name; an out-of-range option;
 * TW_NAN_ACTION_CALLBACK without fn), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_nan_tensor_hook_create_with_options(tw_hook **out, const char *const *watch,
                                                                     size_t n_watch, const tw_options *opts,
                                                                     tw_nan_fn fn, void *user_data,
                                                                     void (*destroy)(void *user_data));

/* ---------------------------------------------------------------------------------------------- */
/* Logging tensors                                                                                */
/* ---------------------------------------------------------------------------------------------- */

/* Writes the text of one log line from the values of a LoggingTensorHook, snprintf-style: write at
 * most buffer_size bytes including the terminating NUL into buffer, and set *length to the length of
 * the whole text (without the NUL). When *length >= buffer_size the hook calls again once with a
 * buffer of *length + 1 bytes. values[i]->name is the i-th tag; values (an array of pointers to views
 * the library lends) are in print order and valid during the call only. A status other than TW_OK
 * fails the run with that status. */
typedef tw_status (*tw_log_formatter_fn)(void *user_data, const tw_tensor *const *values, size_t n_values, char *buffer,
                                         size_t buffer_size, size_t *length);

/* LoggingTensorHook(tensors, every_n_iter, every_n_secs, at_end, formatter) (TF's B6–B10). Logs at INFO
 * the values named names[0..n) — outputs the step publishes, variables or "global_step":
 * - tags NULL: each name is its own tag and they print in the given order (TF's list); otherwise
 *   tags[i] labels names[i] and they print sorted by tag (TF's dict). Names and tags are copied.
 * - opts (NULL = defaults): TW_OPT_EVERY_N_STEPS (every_n_iter: counts this hook's runs, not the global
 *   step; fires on the first run, then every N), TW_OPT_EVERY_N_SECS, TW_OPT_LOG_AT_END,
 *   TW_OPT_LOG_MAX_ELEMENTS. Valid: at_end alone, or exactly one of the two periods (with or without
 *   at_end).
 * - The line is "tag1 = v1, tag2 = v2 (0.123 sec)": values numpy-style ("0.5", "[1. 2.]", "[[1 2] [3
 *   4]]"), a value of more than TW_OPT_LOG_MAX_ELEMENTS elements as "<float32 (1000, 10) min=… max=…
 *   mean=… nan=0 +inf=0 -inf=0>", and the seconds since the previous line (not on the first).
 * - formatter (optional) writes the line instead, logged exactly as written: no elapsed-time suffix
 *   (as TF, B9). destroy(user_data), if given, runs once when the hook is freed.
 * - at_end: the tensors are fetched on every run and end() logs the values of the last run (TF
 *   evaluates them once more, which a step function cannot do); nothing is logged if no run happened.
 *   As in TF, end() does not run after a failed run.
 * Runs fail with TW_NOT_FOUND when a name is not published in a run that fetches it.
 * Errors: TW_INVALID_ARGUMENT (out or names NULL; n_names 0; a name NULL, empty or a pattern; a tag
 * NULL, empty or repeated; "either at_end and/or exactly one of every_n_iter and every_n_secs must be
 * provided."; "invalid every_n_iter=<n>." for n <= 0), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_logging_tensor_hook_create(tw_hook **out, const char *const *names,
                                                            const char *const *tags, size_t n_names,
                                                            const tw_options *opts, tw_log_formatter_fn formatter,
                                                            void *user_data, void (*destroy)(void *user_data));

/* ---------------------------------------------------------------------------------------------- */
/* Step rate                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

/* StepCounterHook(every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None) (TF's
 * B26–B30). Every N global steps (or seconds) logs "global_step/sec: <rate>" at INFO and, when it has
 * a writer, writes the rate as the scalar summary "global_step/sec" at the global step after the run.
 * opts (NULL = defaults): TW_OPT_EVERY_N_STEPS (every_n_steps: 100 while left at its default;
 * tw_options_set_none is TF's None, for a period in seconds), TW_OPT_EVERY_N_SECS, TW_OPT_OUTPUT_DIR.
 * The first trigger only starts the clock, so the first rate appears one period later. The writer is
 * `writer` (a reference is taken), else the shared writer of TW_OPT_OUTPUT_DIR (opened in begin,
 * flushed in end), else none: log only. writer may be NULL.
 * Warns "It seems that global step (tf.train.get_global_step) has not been increased. …" with TF's
 * text when a run starts at the same global step as the previous one — the first 5 times only.
 * Unlike TF, a global step that goes backwards (a restore, a set_global_step) never yields a negative
 * rate: the hook warns once per jump and restarts its clock at the new step.
 * Errors: TW_INVALID_ARGUMENT (out NULL; "exactly one of every_n_steps and every_n_secs should be
 * provided." — TF's text for neither or both), TW_RESOURCE_EXHAUSTED. Runs fail with the writer's
 * errors (TW_IO, …). */
TW_NODISCARD TW_API tw_status tw_step_counter_hook_create(tw_hook **out, const tw_options *opts,
                                                          tw_summary_writer *writer);

/* ---------------------------------------------------------------------------------------------- */
/* Summaries                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

/* SummarySaverHook(save_steps, save_secs, output_dir, summary_writer, summary_op) (TF's B35–B40). TF's
 * summary_op becomes "the values to summarise": summarize[0..n) are names or fnmatch patterns (e.g.
 * "summaries/" followed by '*') of outputs the step publishes or variables; NULL/0 means every one
 * ("*"). A step publishes a scalar for TensorBoard just by publishing an output a pattern matches; its
 * name is the tag. Values of one element are written as scalars (Summary.Value.simple_value). Larger
 * ones are written as histograms (TF's bucket edges) only when asked for (B49): those matching
 * TW_OPT_SUMMARY_HISTOGRAM_NAMES when it is set, else those `summarize` names (none when it is NULL or
 * the lone "*": a histogram of every variable would cost a pass over the whole model), and none when
 * TW_OPT_SUMMARY_HISTOGRAMS is 0.
 * opts (NULL = defaults): TW_OPT_EVERY_N_STEPS (save_steps), TW_OPT_EVERY_N_SECS (save_secs),
 * TW_OPT_OUTPUT_DIR, TW_OPT_SUMMARY_HISTOGRAMS, TW_OPT_SUMMARY_HISTOGRAM_NAMES. The writer is `writer` (a
 * reference is taken) or the shared writer of the output directory, opened in begin.
 * Trigger steps as TF: the first run writes SessionLog START and the summaries, both at the global step
 * after the run; later runs whose next step the timer accepts write the summaries at the global step
 * after the run. end() flushes the writer (no final summary).
 * Runs fail with TW_NOT_FOUND for an exact name that is not published, TW_INVALID_ARGUMENT "Nan in
 * summary histogram for: <tag>" for a non-finite element of a histogram (TF's op error), and the
 * writer's errors.
 * Errors: TW_INVALID_ARGUMENT (out NULL; summarize NULL with n_summarize > 0; an empty name, or an
 * empty entry of TW_OPT_SUMMARY_HISTOGRAM_NAMES; the timer errors above; "At least one of output_dir or
 * summary_writer must be provided."),
 * TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_summary_saver_hook_create(tw_hook **out, const char *const *summarize,
                                                           size_t n_summarize, const tw_options *opts,
                                                           tw_summary_writer *writer);

/* ---------------------------------------------------------------------------------------------- */
/* Feeds, final step, waiting                                                                     */
/* ---------------------------------------------------------------------------------------------- */

/* Supplies the feeds of one run: sets *feeds to an array of *n_feeds named views (NULL/0 for none).
 * Ownership: the array and the views (name, shape, strides) are read before the callback's run goes
 * on and may be reused afterwards; the element data is borrowed until that tw_session_run returns
 * (e.g. a batch buffer the callback refills on its next call). A status other than TW_OK fails the
 * run with that status (a recoverable one triggers recovery). */
typedef tw_status (*tw_feed_fn)(void *user_data, const tw_tensor **feeds, size_t *n_feeds);

/* FeedFnHook(feed_fn) (TF's B44): calls fn in every before_run and feeds what it returns, fetching
 * nothing. The feeds obey TF's conflict rules: a name another hook fed fails the run with "Same tensor
 * is fed by two hooks. Conflict(s): ['x']" (H22), a name the caller also feeds with "Same tensor is fed
 * by a SessionRunHook and user. Conflict(s): ['x']" (H23), both TW_INVALID_ARGUMENT, as does a
 * malformed view. destroy(user_data), if given, runs once when the hook is freed.
 * Errors: TW_INVALID_ARGUMENT (out or fn NULL), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_feed_fn_hook_create(tw_hook **out, tw_feed_fn fn, void *user_data,
                                                     void (*destroy)(void *user_data));

/* FinalOpsHook(final_ops, final_ops_feed_dict) (TF's B43): at end(), runs `final_step` once without
 * hooks (like tw_session_run_without_hooks: global_step untouched) with `feeds`, and keeps a copy of
 * every output it publishes, readable after the session is closed through tw_final_ops_hook_get_value*.
 * feeds[0..n_feeds) are copied, data included, when the hook is created. When the final step returns
 * TW_OUT_OF_RANGE or TW_STOP_ITERATION the hook logs TF's warning ("An OutOfRangeError or StopIteration
 * exception is raised by the code in FinalOpsHook. …") and end() — so tw_session_close — returns that
 * status. Like every end(), it does not run after a failed run. destroy(user_data), if given, runs once
 * when the hook is freed.
 * Errors: TW_INVALID_ARGUMENT (out or final_step NULL; feeds NULL with n_feeds > 0; a malformed,
 * unnamed or repeated feed), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_final_ops_hook_create(tw_hook **out, const tw_tensor *feeds, size_t n_feeds,
                                                       tw_step_fn final_step, void *user_data,
                                                       void (*destroy)(void *user_data));

/* The values the final step published (TF's final_ops_values), in publish order: their count (0 for a
 * NULL hook, another kind of hook, or before the final step ran), the i-th one, and the one named
 * `name`. *out points into the hook's copies, valid until the hook is destroyed or the final step runs
 * again (in a later session).
 * Errors: TW_INVALID_ARGUMENT (NULL arguments, out->struct_size too small, a hook that is not a
 * FinalOpsHook), TW_FAILED_PRECONDITION (the final step has not completed: TF's None), TW_OUT_OF_RANGE
 * (index), TW_NOT_FOUND (no such name). */
TW_API size_t tw_final_ops_hook_value_count(const tw_hook *hook);
TW_NODISCARD TW_API tw_status tw_final_ops_hook_value_at(tw_tensor *out, const tw_hook *hook, size_t index);
TW_NODISCARD TW_API tw_status tw_final_ops_hook_get_value(tw_tensor *out, const tw_hook *hook, const char *name);

/* Reads the global step GlobalStepWaiterHook waits on — in a multi-worker job the shared one another
 * process advances (a parameter server, a file, an all-reduce). Sets *global_step; a status other than
 * TW_OK fails the run with that status. */
typedef tw_status (*tw_global_step_fn)(void *user_data, tw_session *session, int64_t *global_step);

/* GlobalStepWaiterHook(wait_until_step) (TF's B41–B42): the first before_run of a session waits until
 * the global step reaches wait_until_step (<= 0: no wait), logging "Waiting for global step <n> before
 * starting training." and, each time the step has advanced by more than 1000 since the last such line,
 * "Waiting for global step <n> before starting training. Current step is <c>.". The step is read
 * through fn, or the session's own global step when fn is NULL (which only another thread's
 * tw_session_set_global_step could advance). Later runs do nothing; it fetches nothing.
 * opts (NULL = defaults): TW_OPT_WAIT_POLL_SECS (0.5 s between reads), TW_OPT_WAIT_MAX_SECS (a bound TF
 * lacks: the run fails with TW_DEADLINE_EXCEEDED "Global step did not reach <n> within <s> secs
 * (TW_OPT_WAIT_MAX_SECS); last read <c>."; default forever, as TF). destroy(user_data), if given, runs
 * once when the hook is freed.
 * Errors: TW_INVALID_ARGUMENT (out NULL), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_global_step_waiter_hook_create(tw_hook **out, int64_t wait_until_step,
                                                                const tw_options *opts, tw_global_step_fn fn,
                                                                void *user_data, void (*destroy)(void *user_data));

/* ---------------------------------------------------------------------------------------------- */
/* Profiling                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

/* ProfilerHook(save_steps, save_secs, output_dir) (TF's B45–B47): every TW_OPT_EVERY_N_STEPS global
 * steps or TW_OPT_EVERY_N_SECS seconds (TF's save_steps / save_secs; opts NULL = neither, an error) —
 * never on the first run — traces one run and writes "<output_dir>/timeline-<step>.json" (step: the global step after
 * that run) in Chrome trace format (Perfetto, chrome://tracing): a "run" span and one span per hook before_run
 * ("<hook>.before_run"), the step function ("step") and per hook after_run ("<hook>.after_run"; a
 * checkpoint save is inside its hook's after_run), in microseconds from the start of the run. Logs
 * "Saving timeline for <step> into '<path>'." at INFO. The file is written atomically after the run's
 * last after_run. output_dir is TW_OPT_OUTPUT_DIR; unset or "" is the current directory; it is created in begin.
 * Untraced runs cost nothing extra. A wrapper (tw_hook_wrap) may pick the runs itself, as a binding's
 * subclass running TF's after_run does: with TW_OPT_EVERY_N_STEPS 1, once its first after_run has run,
 * the hook records every run whose after_run it misses and writes the trace of each run whose after_run
 * it is called in (docs/tf-semantics.md H33). Errors: TW_INVALID_ARGUMENT (out NULL; the timer errors above),
 * TW_RESOURCE_EXHAUSTED. Runs fail with TW_IO / TW_RESOURCE_EXHAUSTED when the directory or the file cannot be written.
 */
TW_NODISCARD TW_API tw_status tw_profiler_hook_create(tw_hook **out, const tw_options *opts);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_HOOKS_H */

/* ---------------------------------------------------------------------------------------------- */
/* Experimental: the hook extension points (define TW_EXPERIMENTAL_API; no ABI promise)            */
/* ---------------------------------------------------------------------------------------------- */
/* TF's protected methods a subclass overrides (_save, _log_tensors, _log_and_record), set on a built-in
 * hook before it joins a session. They will still move (the Python, Java and C# bindings' subclassing
 * is built on them), so they are declared only when TW_EXPERIMENTAL_API is defined before the first
 * trainwatch header is included, and are outside the ABI promise (docs/abi.md, "Experimental API"). */
#if defined(TW_EXPERIMENTAL_API) && !defined(TRAINWATCH_HOOKS_H_EXPERIMENTAL)
#define TRAINWATCH_HOOKS_H_EXPERIMENTAL

#ifdef __cplusplus
extern "C" {
#endif

/* TF's CheckpointSaverHook._save(session, step), overridable: fn runs in place of the built-in save
 * (listeners' before_save → write → SessionLog and after_save) at creation, when the timer fires and at
 * end — the same moments as TF. Setting *stop to non-zero is _save's truthy return: in after_run the
 * hook then requests stop in that run (TF's request_stop); at creation and at end it is ignored, as in
 * TF. A failing status fails the operation it runs in. The step counts as saved for end's "did the step
 * move" test whether or not fn saved.
 * The setter may be called only before the hook joins a session; fn NULL restores the built-in
 * (user_data and destroy are then ignored); destroy(user_data), if given, runs once, when the function
 * is replaced or the hook dies. The function gets the hook itself, to call the built-in:
 * tw_checkpoint_saver_hook_save runs the built-in save (super()._save(session, step)) and sets *out_stop
 * to 1 when a listener's after_save asked to stop, else 0 (asynchronous saves report a listener's
 * request at a later save).
 * Errors (set_save_fn): TW_INVALID_ARGUMENT (hook NULL or not a CheckpointSaverHook), TW_FAILED_PRECONDITION
 * (the hook belongs to an open session). On error destroy is not called.
 * Errors (save): TW_INVALID_ARGUMENT (hook/session/out_stop NULL, not a CheckpointSaverHook, session not the
 * hook's), TW_FAILED_PRECONDITION (not inside the hook's own save function), the save's errors (TW_IO,
 * a listener's status). */
typedef tw_status (*tw_checkpoint_save_fn)(void *user_data, tw_hook *hook, tw_session *session, int64_t step,
                                           int *stop);
TW_NODISCARD TW_API tw_status tw_checkpoint_saver_hook_set_save_fn(tw_hook *hook, tw_checkpoint_save_fn fn,
                                                                   void *user_data, void (*destroy)(void *user_data));
TW_NODISCARD TW_API tw_status tw_checkpoint_saver_hook_save(int *out_stop, tw_hook *hook, tw_session *session,
                                                            int64_t step);

/* TF's LoggingTensorHook._log_tensors(tensor_values), overridable: fn runs in place of "format and log"
 * each time the hook logs (its triggering runs, and end() with at_end), with the values named by their
 * tags, in print order (an array of pointers, valid during the call). A failing status fails the run.
 * The setter may be called only before the hook joins a session; fn NULL restores the built-in
 * (user_data and destroy are then ignored); destroy(user_data), if given, runs once, when the function
 * is replaced or the hook dies. The function gets the hook itself, to call the built-in:
 * tw_logging_tensor_hook_log_tensors runs the built-in (super()._log_tensors(values)) on the values
 * given (n_values pointers to views whose names are the tags): the formatter's line, or "tag = value,
 * …" and the elapsed-time suffix. As
 * in TF, the built-in also restarts the hook's timer: a function that never calls it leaves the timer
 * where it was, so the hook logs on every run (TF's behaviour when _log_tensors is overridden).
 * Errors (set_log_fn): TW_INVALID_ARGUMENT (hook NULL or not a LoggingTensorHook), TW_FAILED_PRECONDITION
 * (the hook belongs to an open session). On error destroy is not called.
 * Errors (log_tensors): TW_INVALID_ARGUMENT (hook NULL, not a LoggingTensorHook, values NULL with a
 * count, a NULL, malformed or unnamed value), TW_FAILED_PRECONDITION (not inside the hook's own log function),
 * the formatter's status. */
typedef tw_status (*tw_log_tensors_fn)(void *user_data, tw_hook *hook, const tw_tensor *const *values, size_t n_values);
TW_NODISCARD TW_API tw_status tw_logging_tensor_hook_set_log_fn(tw_hook *hook, tw_log_tensors_fn fn, void *user_data,
                                                                void (*destroy)(void *user_data));
TW_NODISCARD TW_API tw_status tw_logging_tensor_hook_log_tensors(tw_hook *hook, const tw_tensor *const *values,
                                                                 size_t n_values);

/* TF's StepCounterHook._log_and_record(elapsed_steps, elapsed_time, global_step), overridable: fn runs in
 * place of "log global_step/sec and write the summary" each time the hook has a rate (elapsed_time > 0).
 * A failing status fails the run.
 * The setter may be called only before the hook joins a session; fn NULL restores the built-in
 * (user_data and destroy are then ignored); destroy(user_data), if given, runs once, when the function
 * is replaced or the hook dies. The function gets the hook itself, to call the built-in:
 * tw_step_counter_hook_log_and_record runs the built-in (super()._log_and_record(...)): rate =
 * elapsed_steps / elapsed_time, logged and written at global_step.
 * Errors (set_record_fn): TW_INVALID_ARGUMENT (hook NULL or not a StepCounterHook),
 * TW_FAILED_PRECONDITION (the hook belongs to an open session). On error destroy is not called.
 * Errors (log_and_record): TW_INVALID_ARGUMENT (hook NULL, not a StepCounterHook, elapsed_time <= 0),
 * TW_FAILED_PRECONDITION (not inside the hook's own record function), the writer's errors (TW_IO). */
typedef tw_status (*tw_step_rate_fn)(void *user_data, tw_hook *hook, int64_t elapsed_steps, double elapsed_time,
                                     int64_t global_step);
TW_NODISCARD TW_API tw_status tw_step_counter_hook_set_record_fn(tw_hook *hook, tw_step_rate_fn fn, void *user_data,
                                                                 void (*destroy)(void *user_data));
TW_NODISCARD TW_API tw_status tw_step_counter_hook_log_and_record(tw_hook *hook, int64_t elapsed_steps,
                                                                  double elapsed_time, int64_t global_step);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TW_EXPERIMENTAL_API */
