/*
 * trainwatch/session.h — options, sessions, hooks, run contexts and step contexts.
 *
 * The model is tf.train's MonitoredSession. A session runs the user's step function; hooks get
 * callbacks around it:
 *
 *   create:  begin (every hook, once) → restore or initialize (chief) / wait until ready (worker)
 *            → after_create_session (every hook)
 *   run:     before_run (every hook; may request fetches, add feeds, request stop)
 *            → step function → global_step += 1 → fetches resolved
 *            → after_run (every hook; reads its results) → stop latched
 *   close:   end (every hook) — unless a run failed; then each hook heard on_error instead.
 *
 * ABORTED and UNAVAILABLE (by default) raised anywhere in a run trigger recovery in a
 * MonitoredSession: the inner session is re-created, after_create_session runs on every hook again and
 * the whole run is retried, up to a limit with back-off.
 *
 * Thread rules: a session, its hooks and the contexts it hands out are used by one thread at a time
 * (the thread calling tw_session_run). This is checked: while one thread is inside tw_session_run,
 * _run_without_hooks, _close or a session creation, another thread's call of these, of
 * tw_session_set_global_step or of tw_session_destroy returns TW_FAILED_PRECONDITION ("… a session is
 * used by one thread at a time …") and changes nothing; the thread inside may call them again from its
 * callbacks as documented for each. tw_session_request_stop and tw_session_should_stop may be called
 * from any thread at any time (TF's Coordinator). Releasing a hook (tw_hook_destroy) is safe from any
 * thread: a session keeps its own reference. A session may move to another thread between calls; a hook
 * offered to a new session on another thread meanwhile is refused while the first session holds it
 * (TW_FAILED_PRECONDITION), and taken once that session is closed or destroyed. Distinct sessions are
 * independent. Options objects are not thread-safe; once a session is created from them they may be
 * destroyed or reused.
 */
#ifndef TRAINWATCH_SESSION_H
#define TRAINWATCH_SESSION_H

#include "trainwatch/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_options tw_options;           /* session options (a builder) */
typedef struct tw_session tw_session;           /* a MonitoredSession or SingularMonitoredSession */
typedef struct tw_hook tw_hook;                 /* a SessionRunHook: built-in or callback table */
typedef struct tw_run_context tw_run_context;   /* SessionRunContext + this hook's args and values */
typedef struct tw_step_context tw_step_context; /* what the step function sees */

/* ---------------------------------------------------------------------------------------------- */
/* Options                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* Option keys. Each has one type, named in its comment; the setter of another type rejects it with
 * TW_INVALID_ARGUMENT. Values are stable; new options are only ever appended. A period is always
 * spelled EVERY_N_STEPS (int64) / EVERY_N_SECS (double seconds), as in the hooks' arguments; each
 * comment gives TF's name for it (save_steps, every_n_iter, save_checkpoint_secs, …). */
typedef enum tw_option {
  /* int64, 0 or 1, default 1. Chief: restores from checkpoint_dir or runs the init function
   * (ChiefSessionCreator). Worker: waits for the ready function (WorkerSessionCreator). */
  TW_OPT_IS_CHIEF = 1,
  /* string, default unset. Where the chief restores from: the newest intact checkpoint its state file
   * lists, else (state file missing or damaged) the newest of this job's found by name (C19: never a
   * checkpoint copied in from another run or under another name), whose step a checkpoint
   * without global_step gives by its "-<step>" name. Only a checkpoint proven damaged is skipped: a
   * restore that fails for another reason (out of memory, a mapping refused, an I/O error) fails
   * creation with that status, and so does TW_DATA_LOSS when every checkpoint there proved damaged;
   * nothing is written then (docs/tf-semantics.md C20). A chief that writes checkpoints there (a
   * CheckpointSaverHook, a NaN rollback, a preemption save; C24) holds the directory's advisory lock
   * ("<dir>/.trainwatch.lock", see trainwatch/checkpoint.h) from creation until close; one that only
   * restores takes it at its first tw_session_save_checkpoint (C27); a worker does not.
   * In a job with a collective every rank restores with the chief, by a vote on the newest checkpoint
   * that every rank can read (docs/tf-semantics.md D16), reading it in its own TW_OPT_CHECKPOINT_DIR. */
  TW_OPT_CHECKPOINT_DIR = 2,
  /* int64, default 10, -1 = unlimited (TF's behaviour). How many recoveries one run, or session
   * creation, may go through before the recoverable status is returned to the caller. */
  TW_OPT_MAX_RECOVERY_ATTEMPTS = 3,
  /* double seconds, default 1.0. Wait before the first re-creation; doubles after each attempt. */
  TW_OPT_RECOVERY_BACKOFF_SECS = 4,
  /* double seconds, default 60.0. Upper bound of the back-off. */
  TW_OPT_RECOVERY_BACKOFF_MAX_SECS = 5,
  /* double seconds, default 30.0. A worker's poll interval while waiting for readiness (S10). */
  TW_OPT_RECOVERY_WAIT_SECS = 6,
  /* double seconds, default 1800 (WorkerSessionCreator). How long a worker waits for readiness
   * before TW_DEADLINE_EXCEEDED; negative = forever. */
  TW_OPT_MAX_WAIT_SECS = 7,
  /* int64, 0 or 1, default 1. After a run whose step succeeded and did not set global_step itself,
   * the session adds 1 to global_step. Set 0 when the step function owns the counter. The increment
   * saturates: a global_step of INT64_MAX stays INT64_MAX (TF's int64 variable would wrap to a negative
   * step, which would make checkpoints and every-N-steps hooks go backwards; no run fails for it). */
  TW_OPT_AUTO_INCREMENT_GLOBAL_STEP = 8,
  /* int64, default 0. global_step of a session that restores nothing. */
  TW_OPT_INITIAL_GLOBAL_STEP = 9,
  /* int64, 0 or 1, default 0. Checks every output the step publishes for NaN/Inf (slim's
   * create_train_op(check_numerics=True)); a bad one fails the run with TW_INVALID_ARGUMENT and TF's
   * text, naming the output and the step: "output 'loss' at step 12 : Tensor had NaN values". */
  TW_OPT_CHECK_NUMERICS = 10,

  /* int64 >= 0, default 5. Checkpoints kept; 0 keeps all and lists only the newest (TF's C9). */
  TW_OPT_MAX_TO_KEEP = 11,
  /* double > 0, default 10000. One checkpoint per this many hours is kept forever; the clock survives
   * restarts (it is stored in the state file). */
  TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS = 12,
  /* double seconds >= 0, no default (None). MonitoredTrainingSession's save_checkpoint_secs: the period
   * of the CheckpointSaverHook it adds (a hook created by the caller reads TW_OPT_EVERY_N_SECS). */
  TW_OPT_CHECKPOINT_EVERY_N_SECS = 13,
  /* int64 >= 0, no default (None). MonitoredTrainingSession's save_checkpoint_steps (a hook created by
   * the caller reads TW_OPT_EVERY_N_STEPS). Setting both secs and steps is an error when the session
   * is created (TF's docs and code disagree; trainwatch rejects it, T3).
   * 0 means what it means in TF: tw_monitored_training_session_create adds no CheckpointSaverHook for
   * a frequency of 0 (TF's `save_checkpoint_steps and save_checkpoint_steps > 0`, likewise for secs),
   * while tw_checkpoint_saver_hook_create with TW_OPT_EVERY_N_STEPS 0 saves after every run that moves
   * the step (TF's SecondOrStepTimer(every_steps=0); 0 secs: every run but the one last saved). */
  TW_OPT_CHECKPOINT_EVERY_N_STEPS = 14,
  /* string, default "model.ckpt". Checkpoints are <checkpoint_dir>/<basename>-<global_step>. */
  TW_OPT_CHECKPOINT_BASENAME = 15,
  /* int64, 0 or 1, default 1. CheckpointSaverHook copies the variables and compresses and writes in
   * the background (one save in flight); 0 writes before the run returns. */
  TW_OPT_ASYNC_CHECKPOINT = 16,

  /* MonitoredTrainingSession (tw_monitored_training_session_create) reads these too. */
  /* string, default: TW_OPT_CHECKPOINT_DIR (T7). Where StepCounterHook and SummarySaverHook write. */
  TW_OPT_SUMMARY_DIR = 17,
  /* int64 >= 0 / double seconds >= 0. TF's save_summaries_steps / save_summaries_secs: both left at
   * their default → every 100 steps; one given → the other is None (T1). */
  TW_OPT_SUMMARY_EVERY_N_STEPS = 18,
  TW_OPT_SUMMARY_EVERY_N_SECS = 19,
  /* int64 >= 0, default 100. StepCounterHook's every_n_steps, MonitoredTrainingSession's
   * log_step_count_steps; 0 adds no StepCounterHook. */
  TW_OPT_STEP_COUNT_EVERY_N_STEPS = 20,
  /* int64, 0 or 1, default 0. CheckpointSaverHook with listeners and TW_OPT_ASYNC_CHECKPOINT: by default
   * the run that saves waits for the background write and calls after_save in that run, so a listener's
   * stop request ends training after that very run (TF's B22/B24). 1 defers them: the run does not wait,
   * after_save runs in the first later run (or at end) that finds the write finished, and a stop request
   * takes effect only then (with save_steps 2, a stop asked for at step 4 ends the run of step 5 or a
   * later one instead of step 4). */
  TW_OPT_DEFERRED_CHECKPOINT_LISTENERS = 21,
  /* int64, 0 or 1, default 0. The session notes SIGTERM and SIGUSR1 (a batch scheduler's "about to be
   * preempted") instead of dying: at the end of the run in progress every rank (trainwatch/distributed.h;
   * or the one process) saves a checkpoint at the same step and stops cleanly, and the run reports
   * preemption (see tw_session_preempted). Handlers are installed by session creation and the previous
   * ones restored by close. */
  TW_OPT_CATCH_PREEMPTION_SIGNALS = 22,
  /* int64, 0 or 1, default 0 (also read by tw_saver_create_from_options). 0: a checkpoint evicted by
   * TW_OPT_MAX_TO_KEEP is unlinked, as TF deletes it; a program still reading it keeps its bytes.
   * 1 recycles the evicted checkpoint's file: it is kept as a hidden spare (".tw-spare-<n>") and a later
   * save overwrites it in place, which saves creating and freeing a file per save (docs/
   * performance/checkpoint.md). The risk: an evicted checkpoint's file is overwritten in place by a later
   * save: a program that is still reading it without trainwatch's lock (cp, tar, rsync, a backup agent)
   * gets bytes of two checkpoints. trainwatch's own readers are safe (tf-semantics C15). */
  TW_OPT_CHECKPOINT_RECYCLE_FILES = 23,

  /* Options read by tw_nan_tensor_hook_create_with_options (trainwatch/hooks.h). */
  /* int64, a tw_nan_action, default TW_NAN_ACTION_FAIL. */
  TW_OPT_NAN_ACTION = 100,
  /* int64, 0 or 1, default 1. Also treat +Inf/-Inf as a divergence (TF's hook sees only NaN). */
  TW_OPT_NAN_DETECT_INF = 101,
  /* int64 >= 1, default 1. Check on runs whose starting global_step is a multiple of this; other runs
   * fetch nothing. */
  TW_OPT_NAN_EVERY_N_STEPS = 102,
  /* int64 >= 0, default 3. TW_NAN_ACTION_ROLLBACK: how many rollbacks one session may make before a
   * divergence fails the run as TW_NAN_ACTION_FAIL would. */
  TW_OPT_NAN_MAX_ROLLBACKS = 103,

  /* Options read by the hooks of trainwatch/hooks.h (keys 200-299). */
  /* int64, default TW_UNSET. The period of every periodic hook: CheckpointSaverHook's and
   * SummarySaverHook's save_steps, LoggingTensorHook's every_n_iter, StepCounterHook's every_n_steps,
   * ProfilerHook's save_steps. Not range-checked here: each hook checks it, with TF's message. */
  TW_OPT_EVERY_N_STEPS = 200,
  /* double seconds, default TW_UNSET_SECS (any negative value means unset). The same hooks' save_secs /
   * every_n_secs. Setting both this and TW_OPT_EVERY_N_STEPS is an error at hook creation (TF's T3,
   * resolved as an error). */
  TW_OPT_EVERY_N_SECS = 201,
  /* string, default unset. SummarySaverHook's, StepCounterHook's and ProfilerHook's output_dir. */
  TW_OPT_OUTPUT_DIR = 202,
  /* int64, 0 or 1, default 0. LoggingTensorHook's at_end. */
  TW_OPT_LOG_AT_END = 203,
  /* int64 >= 0, default 32. LoggingTensorHook prints values of at most this many elements in full and
   * summarises larger ones (dtype, shape, finite min/max/mean, NaN/Inf counts). */
  TW_OPT_LOG_MAX_ELEMENTS = 204,
  /* int64, 0 or 1, default 1. SummarySaverHook writes the values of more than one element it was asked
   * for as histograms (see TW_OPT_SUMMARY_HISTOGRAM_NAMES; 0: skips every one). */
  TW_OPT_SUMMARY_HISTOGRAMS = 205,
  /* double seconds, default 0.5 (TF). GlobalStepWaiterHook's poll interval. */
  TW_OPT_WAIT_POLL_SECS = 206,
  /* double seconds, default -1 = forever (TF). GlobalStepWaiterHook gives up with
   * TW_DEADLINE_EXCEEDED after waiting this long. */
  TW_OPT_WAIT_MAX_SECS = 207,
  /* string, default unset. Which values of more than one element SummarySaverHook writes as histograms,
   * as comma-separated names or fnmatch patterns ("dense/kernel,embedding_*"), fetched as well as the
   * values it summarises (docs/tf-semantics.md B49). Unset: those it was given by name, none when it
   * summarises every value. Also read by tw_monitored_training_session_create, whose
   * default SummarySaverHook writes histograms of these values only (none when unset, T11). An empty
   * entry fails the hook's or session's creation with TW_INVALID_ARGUMENT naming the option. */
  TW_OPT_SUMMARY_HISTOGRAM_NAMES = 208,

  /* Options of a job of many ranks, read when a collective is set (trainwatch/distributed.h). */
  /* double seconds, default 600; negative: no limit. How long any one collective operation may take
   * before the session fails with TW_DEADLINE_EXCEEDED instead of hanging on a dead rank. */
  TW_OPT_COLLECTIVE_TIMEOUT_SECS = 300,
  /* int64 >= 1, default 1. Vote at the end of every run, or of every N-th run (and of any run that
   * failed or asked to stop): N trades up to N-1 runs of latency for fewer allreduces. */
  TW_OPT_VOTE_EVERY_N_RUNS = 301,
  /* int64, 0 or 1, default 0. Ranks other than the chief do not read the checkpoint: the chief reads it
   * and broadcasts every variable's bytes (Horovod's BroadcastGlobalVariablesHook), at creation and
   * after every restore. For ranks that do not share a file system with the chief. */
  TW_OPT_RESTORE_VIA_BROADCAST = 302,
  TW_OPT_MAX_ENUM_ = 0x7FFFFFFF /* keeps the enum 32 bits wide, so any int is a valid value in C++ */
} tw_option;

/* Whether an option was left at its default, explicitly set to None (TF's `None`, for options whose
 * absence means something, such as save_checkpoint_steps), or given a value. */
typedef enum tw_option_state {
  TW_OPTION_DEFAULT = 0,
  TW_OPTION_NONE = 1,
  TW_OPTION_SET = 2,
  TW_OPTION_STATE_MAX_ENUM_ = 0x7FFFFFFF
} tw_option_state;

/* Creates an options object with every default above. *out receives it; free with tw_options_destroy.
 * Errors: TW_INVALID_ARGUMENT (out is NULL), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_options_create(tw_options **out);

/* Frees the object and its variable list; NULL is a no-op. Sessions made from it are not affected. */
TW_API void tw_options_destroy(tw_options *opts);

/* Typed setters. Errors: TW_INVALID_ARGUMENT (opts NULL, unknown key — any int that is not a TW_OPT_*
 * value, negative ones included: "unknown option key -1 (not a TW_OPT_* value)" —, key of another type,
 * value out of range — the message names the option and the value). set_string copies the string;
 * NULL unsets. */
TW_NODISCARD TW_API tw_status tw_options_set_int64(tw_options *opts, tw_option key, int64_t value);
TW_NODISCARD TW_API tw_status tw_options_set_double(tw_options *opts, tw_option key, double value);
TW_NODISCARD TW_API tw_status tw_options_set_string(tw_options *opts, tw_option key, const char *value);

/* Sets the option to None (TW_OPTION_NONE): getters then return its default value, and consumers that
 * distinguish "left default" from "None" (MonitoredTrainingSession's frequency rules, T1/T2) see it.
 * Errors: TW_INVALID_ARGUMENT (opts NULL, unknown key). */
TW_NODISCARD TW_API tw_status tw_options_set_none(tw_options *opts, tw_option key);

/* *out receives the key's tw_option_state. Errors: TW_INVALID_ARGUMENT (NULL, unknown key). */
TW_NODISCARD TW_API tw_status tw_options_get_state(tw_option_state *out, const tw_options *opts, tw_option key);

/* Typed getters. *out receives the current value (the default if never set; NULL for an unset string,
 * valid until the option changes or opts is destroyed). Errors: TW_INVALID_ARGUMENT as for setters. */
TW_NODISCARD TW_API tw_status tw_options_get_int64(int64_t *out, const tw_options *opts, tw_option key);
TW_NODISCARD TW_API tw_status tw_options_get_double(double *out, const tw_options *opts, tw_option key);
TW_NODISCARD TW_API tw_status tw_options_get_string(const char **out, const tw_options *opts, tw_option key);

/* ---- Option metadata (as zstd's ZSTD_cParam_getBounds and curl's curl_easy_option_by_name) ---- */

/* The type of an option's value: which of the typed setters and getters takes it. Values are stable. */
typedef enum tw_option_type {
  TW_OPTION_TYPE_INT64 = 1,
  TW_OPTION_TYPE_DOUBLE = 2,
  TW_OPTION_TYPE_STRING = 3,
  TW_OPTION_TYPE_MAX_ENUM_ = 0x7FFFFFFF
} tw_option_type;

/* Which creation functions read an option (tw_option_info.read_by, a bit set). Values are stable. */
enum {
  TW_OPTION_READ_BY_SESSION = 1 << 0,          /* every session creation (tw_*_session_create) */
  TW_OPTION_READ_BY_TRAINING_SESSION = 1 << 1, /* tw_monitored_training_session_create's own arguments */
  TW_OPTION_READ_BY_SAVER = 1 << 2,            /* a session's saver and tw_saver_create_from_options */
  TW_OPTION_READ_BY_CHECKPOINT_HOOK = 1 << 3,  /* tw_checkpoint_saver_hook_create */
  TW_OPTION_READ_BY_HOOKS = 1 << 4,            /* the other hooks of trainwatch/hooks.h that take options */
  TW_OPTION_READ_BY_JOB = 1 << 5               /* only with a collective (trainwatch/distributed.h) */
};

/* What the library knows of one option: the table its setters check against, so that bindings need not
 * restate it. An out-struct the caller allocates (TW_OPTION_INFO_INIT; a versioned struct). */
typedef struct tw_option_info {
  uint32_t struct_size;
  int32_t key;           /* the tw_option */
  const char *name;      /* "TW_OPT_MAX_TO_KEEP": static storage */
  int32_t type;          /* a tw_option_type */
  uint32_t read_by;      /* TW_OPTION_READ_BY_* bits */
  int64_t int64_default; /* int64 options: the default, and the inclusive bounds */
  int64_t int64_min;     /* tw_options_set_int64 accepts; 0 for other types */
  int64_t int64_max;
  double double_default;        /* double options: the default, and the lower bound tw_options_set_double */
  double double_min;            /* accepts (-HUGE_VAL: none; NaN is always refused); 0 for other types */
  int32_t double_min_exclusive; /* non-zero: the value must be above double_min, not equal to it */
} tw_option_info;

#define TW_OPTION_INFO_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_option_info, double_min_exclusive)
#define TW_OPTION_INFO_INIT \
  { (uint32_t)sizeof(tw_option_info), 0, NULL, 0, 0, 0, 0, 0, 0.0, 0.0, 0 }

/* Sets *info to TW_OPTION_INFO_INIT (compiled into the caller). NULL is a no-op. */
static inline void tw_option_info_init(tw_option_info *info) {
  const tw_option_info init = TW_OPTION_INFO_INIT;
  if (info != NULL) *info = init;
}

/* Fills *out with what the library knows of `key`, or of the option named `name`: its full name
 * ("TW_OPT_MAX_TO_KEEP") or the part after "TW_OPT_", in any case ("max_to_keep"). A program may walk
 * every option by trying each key (keys are small, sparse integers; see tw_option).
 * Errors: TW_INVALID_ARGUMENT (out or name NULL; out->struct_size as for any out-struct), TW_NOT_FOUND
 * (no such option: "unknown option key 99" / "no option named 'x'"). */
TW_NODISCARD TW_API tw_status tw_option_info_by_key(tw_option_info *out, tw_option key);
TW_NODISCARD TW_API tw_status tw_option_info_by_name(tw_option_info *out, const char *name);

/* Whether `status` from a run triggers recovery (MonitoredSession only). Default: TW_ABORTED and
 * TW_UNAVAILABLE (TF's _PREEMPTION_ERRORS). TW_OK, TW_OUT_OF_RANGE and TW_STOP_ITERATION cannot be made
 * recoverable. Errors: TW_INVALID_ARGUMENT. */
TW_NODISCARD TW_API tw_status tw_options_set_recoverable(tw_options *opts, tw_status status, int recoverable);

/* Registers a variable: a named, caller-owned buffer that hooks can fetch by name and that checkpoints
 * save and restore in place (zero copy). The view (name, shape, strides) is copied; the memory at
 * var->data is borrowed and must stay valid, and not move, for the life of every session created from
 * these options. Variables must be contiguous (strides NULL or row-major).
 * A failed registration is sticky: the options keep the first one (status and message; a later call,
 * successful or not, does not clear it), and creating a session or a saver from them fails with it. In a
 * job of many ranks (trainwatch/distributed.h) a rank whose registration failed must still create its
 * session (or tw_saver_create_from_options its saver) at the point where the other ranks do: that
 * creation's first collective round carries the failure, and every rank's creation fails at once with
 * the failing rank's status and "rank k of n: <its message>" (D1), instead of the others waiting out
 * TW_OPT_COLLECTIVE_TIMEOUT_SECS.
 * Errors: TW_INVALID_ARGUMENT (NULL, bad struct_size/dtype/shape, non-contiguous, NULL data with
 * elements, empty name, the reserved name "global_step"), TW_ALREADY_EXISTS (the name is taken). */
TW_NODISCARD TW_API tw_status tw_options_add_variable(tw_options *opts, const tw_tensor *var);

/* Records a failure of this rank's registration that happened before anything reached the library (a
 * binding's own check of an array or a shard's shape, the caller's own preparation of a buffer), as a
 * failed tw_options_add_variable does: sticky, the first failure kept, and the session or saver created
 * from `opts` fails with `code` and `message` — in a job, on every rank (D1; see tw_options_add_variable).
 * message may be NULL (then the status's name is the message); it is copied.
 * Errors: TW_INVALID_ARGUMENT (opts NULL; code TW_OK or not a tw_status). On error nothing is recorded. */
TW_NODISCARD TW_API tw_status tw_options_record_error(tw_options *opts, tw_status code, const char *message);

/* Scaffold(init_fn=…): the chief calls init_fn when it restored nothing, on first creation and after
 * every recovery that restores nothing — TF's init_fn(scaffold, session). A non-OK return fails the
 * session creation with that status. destroy(user_data), if not NULL, is called exactly once: when the
 * options object and every session created from it no longer need it. Passing fn == NULL removes it.
 * Errors: TW_INVALID_ARGUMENT (opts NULL). On error destroy is not called. */
typedef tw_status (*tw_init_fn)(void *user_data, tw_session *session);
TW_NODISCARD TW_API tw_status tw_options_set_init_fn(tw_options *opts, tw_init_fn fn, void *user_data,
                                                     void (*destroy)(void *user_data));

/* WorkerSessionCreator's readiness test (TF's ready_op): a worker's session creation polls fn every
 * TW_OPT_RECOVERY_WAIT_SECS until it sets *ready to non-zero, or fails with TW_DEADLINE_EXCEEDED
 * ("Session was not ready after waiting N secs.") after TW_OPT_MAX_WAIT_SECS. A worker without a ready
 * function is ready at once. Ownership of user_data as for tw_options_set_init_fn. */
typedef tw_status (*tw_ready_fn)(void *user_data, tw_session *session, int *ready);
TW_NODISCARD TW_API tw_status tw_options_set_ready_fn(tw_options *opts, tw_ready_fn fn, void *user_data,
                                                      void (*destroy)(void *user_data));

/* ---------------------------------------------------------------------------------------------- */
/* Hooks                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* A hook written in C (or by a binding). Every slot may be NULL (a no-op). A callback that returns a
 * status other than TW_OK fails the operation it runs in, and that status (with the message it stored
 * through tw_set_error, prefixed by "hook '<name>' <callback>: ") is what the caller of the session
 * function gets — a returned TW_ABORTED/TW_UNAVAILABLE triggers recovery like any other.
 *
 * struct_size: sizeof(tw_hook_callbacks) as the caller compiled it (TW_HOOK_CALLBACKS_INIT or
 * tw_hook_callbacks_init). A versioned struct (trainwatch/common.h): slots past the caller's size are
 * NULL; slots past this library's must be NULL.
 *
 * begin:                once per session, before it is created.
 * after_create_session: after every (re-)creation of the inner session.
 * before_run:           at the start of every run; may call tw_run_context_request_fetch, _add_feed,
 *                       _request_stop.
 * after_run:            after a successful step, with this hook's results; not called when the step or
 *                       an earlier hook failed (TF's H13/H14).
 * end:                  on tw_session_close when no run failed (a clean stop, TW_OUT_OF_RANGE,
 *                       TW_STOP_ITERATION).
 * on_error:             instead of end: called on every hook, in order, once, when a run or session
 *                       creation fails with a status that recovery does not absorb — so hooks can
 *                       release resources and save diagnostics. It cannot fail.
 * destroy:              frees user_data; called exactly once, when the hook and every session holding
 *                       it are destroyed (in whatever order that happens). */
typedef struct tw_hook_callbacks {
  uint32_t struct_size;
  tw_status (*begin)(void *user_data, tw_session *session);
  tw_status (*after_create_session)(void *user_data, tw_session *session);
  tw_status (*before_run)(void *user_data, tw_run_context *ctx);
  tw_status (*after_run)(void *user_data, tw_run_context *ctx);
  tw_status (*end)(void *user_data, tw_session *session);
  void (*on_error)(void *user_data, tw_session *session, tw_status error);
  void (*destroy)(void *user_data);
} tw_hook_callbacks;

#define TW_HOOK_CALLBACKS_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_hook_callbacks, destroy)
#define TW_HOOK_CALLBACKS_INIT \
  { (uint32_t)sizeof(tw_hook_callbacks), NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/* Sets *callbacks to TW_HOOK_CALLBACKS_INIT (compiled into the caller). NULL is a no-op. */
static inline void tw_hook_callbacks_init(tw_hook_callbacks *callbacks) {
  const tw_hook_callbacks init = TW_HOOK_CALLBACKS_INIT;
  if (callbacks != NULL) *callbacks = init;
}

/* Creates a hook from a callback table (copied). `name` (copied, non-empty) appears in messages.
 * Errors: TW_INVALID_ARGUMENT (out/name/callbacks NULL, empty name, struct_size smaller than
 * TW_HOOK_CALLBACKS_SIZE_V1 or larger than this library knows with non-zero extra bytes),
 * TW_RESOURCE_EXHAUSTED. On error the caller keeps ownership of user_data and destroy is not called. */
TW_NODISCARD TW_API tw_status tw_hook_create(tw_hook **out, const char *name, const tw_hook_callbacks *callbacks,
                                             void *user_data);

/* Releases the caller's reference. The hook lives on while a session holds it (also when it is
 * released from another thread, or from its own callback, while that session runs). NULL is a no-op. */
TW_API void tw_hook_destroy(tw_hook *hook);

/* The hook's name; valid while the hook lives. NULL for a NULL hook. */
TW_API const char *tw_hook_name(const tw_hook *hook);

/* TF's "subclass a built-in hook", by composition. The wrapper is one hook: in a session's list it runs
 * `callbacks` in place of `inner`'s callbacks, at its own position and in TF's order. A NULL slot is
 * "not overridden": the inner's callback runs there, so a table of NULL slots behaves exactly as
 * `inner` (bindings pass `inner` itself when nothing is overridden, which costs nothing). Inside a slot,
 * tw_hook_call_<same callback>(inner, …) runs the inner's callback (TF's super()); not calling it skips
 * the built-in behaviour. Statuses follow tw_hook_create: what a slot returns is what the session sees,
 * so a failure the inner returned through tw_hook_call_* reaches the session only if the slot returns it
 * (the wrapper decides); a failure message is prefixed "hook '<name>' <callback>: ".
 * name: copied, non-empty; NULL takes the inner's name. The wrapper holds its own reference to inner
 * (the caller keeps its own and may tw_hook_destroy it at once). inner may itself be a wrapper.
 * Ownership: a session that takes the wrapper also claims inner (and what inner wraps): the inner must
 * not be in the same hook list, nor wrapped twice in it (TW_INVALID_ARGUMENT from session creation),
 * nor belong to another open session (TW_FAILED_PRECONDITION). user_data and callbacks->destroy as
 * tw_hook_create: destroy(user_data) runs once, when the wrapper dies (the inner's reference is released
 * after it).
 * Errors: TW_INVALID_ARGUMENT (out/inner/callbacks NULL, empty name, struct_size as tw_hook_create),
 * TW_RESOURCE_EXHAUSTED. On error the caller keeps user_data and destroy is not called. */
TW_NODISCARD TW_API tw_status tw_hook_wrap(tw_hook **out, const char *name, tw_hook *inner,
                                           const tw_hook_callbacks *callbacks, void *user_data);

/* super().<callback>(…): run the inner hook's callback from inside the wrapper's own callback of the
 * same kind, on the thread running it, passing the session or run context that callback received.
 * Fetches, feeds and stop requests the inner makes act for the wrapper (one slot in the run context: in
 * after_run the wrapper's results hold what the inner requested as well as its own requests). They may
 * be called more than once or not at all.
 * Returns the inner callback's status (TW_OK or its failure, its message in tw_last_error_message), or:
 *   TW_INVALID_ARGUMENT    — inner, session or ctx NULL;
 *   TW_FAILED_PRECONDITION — not inside a wrapper's callback of this kind; inner is not the hook that
 *                            wrapper wraps; another session/run context than the one the callback got;
 *                            or called from inside the inner's own callback (an extension point).
 * tw_hook_call_on_error returns nothing (on_error cannot fail): the inner hears `error` (with the message
 * the wrapper's on_error heard, when the code is the same); a misplaced call does nothing but set
 * tw_last_error_message. */
TW_NODISCARD TW_API tw_status tw_hook_call_begin(tw_hook *inner, tw_session *session);
TW_NODISCARD TW_API tw_status tw_hook_call_after_create_session(tw_hook *inner, tw_session *session);
TW_NODISCARD TW_API tw_status tw_hook_call_before_run(tw_hook *inner, tw_run_context *ctx);
TW_NODISCARD TW_API tw_status tw_hook_call_after_run(tw_hook *inner, tw_run_context *ctx);
TW_NODISCARD TW_API tw_status tw_hook_call_end(tw_hook *inner, tw_session *session);
TW_API void tw_hook_call_on_error(tw_hook *inner, tw_session *session, tw_status error);

/* ---------------------------------------------------------------------------------------------- */
/* Sessions                                                                                       */
/* ---------------------------------------------------------------------------------------------- */

/* MonitoredSession(session_creator, hooks): calls begin on every hook, creates the inner session
 * (chief: restore or init_fn; worker: wait until ready), then after_create_session on every hook.
 * A recoverable status during creation is retried like a run (bounded). The session takes its own
 * reference to every hook: the caller may tw_hook_destroy them right away. opts may be NULL (defaults)
 * and is not retained. hooks may be NULL when n_hooks is 0.
 * Errors: TW_INVALID_ARGUMENT (out NULL; hooks NULL with n_hooks > 0; a NULL entry; the same hook
 * twice; a hook listed next to its wrapper or wrapped by two wrappers, see tw_hook_wrap),
 * TW_FAILED_PRECONDITION (a hook, or a hook a wrapper wraps, already belongs to another open session;
 * a chief that writes checkpoints — a CheckpointSaverHook, a NanTensorHook rolling back, a preemption
 * save — finds its checkpoint directory in use by another writer, named in the message: another
 * process, session or saver holds its lock; a chief that only restores takes no lock, tf-semantics C24),
 * TW_PERMISSION_DENIED (a chief's checkpoint directory is writable but its lock file cannot be
 * opened read-write, e.g. another user's: it refuses to write unlocked), TW_INVALID_ARGUMENT (that lock
 * file is a symbolic link, not a regular file, or has another link; tf-semantics C16), any status a hook's
 * begin/after_create_session or the init/ready function returned, TW_DEADLINE_EXCEEDED (worker wait),
 * the chief's restore failing (TW_RESOURCE_EXHAUSTED, TW_IO: a checkpoint that could not be read for
 * a reason that proves nothing about it, named in the message; TW_DATA_LOSS: every checkpoint of the
 * directory proved damaged, each named; TW_INVALID_ARGUMENT / TW_NOT_FOUND: a listed one that does
 * not fit the variables — docs/tf-semantics.md C20), a failed registration's status (kept on opts, see
 * tw_options_add_variable; in a job the lowest failing rank's, D1). On error nothing is created and every hook that ran
 * begin has heard on_error. */
TW_NODISCARD TW_API tw_status tw_monitored_session_create(tw_session **out, const tw_options *opts,
                                                          tw_hook *const *hooks, size_t n_hooks);

/* SingularMonitoredSession: the same without the recovery layer — recoverable statuses are returned
 * to the caller like any other error. Always a chief. Same errors as above. */
TW_NODISCARD TW_API tw_status tw_singular_monitored_session_create(tw_session **out, const tw_options *opts,
                                                                   tw_hook *const *hooks, size_t n_hooks);

/* tf.train.MonitoredTrainingSession (T1–T10): a MonitoredSession (with recovery) whose options carry
 * TF's arguments — TW_OPT_IS_CHIEF, TW_OPT_CHECKPOINT_DIR, TW_OPT_SUMMARY_DIR,
 * TW_OPT_CHECKPOINT_EVERY_N_SECS / _STEPS (save_checkpoint_secs / _steps), TW_OPT_SUMMARY_EVERY_N_STEPS /
 * _SECS (save_summaries_steps / _secs), TW_OPT_STEP_COUNT_EVERY_N_STEPS (log_step_count_steps),
 * TW_OPT_MAX_WAIT_SECS (7200 when left at its default, T10), TW_OPT_MAX_TO_KEEP,
 * TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS, and the variables. "Left at the default" and "None"
 * (tw_options_set_none) differ exactly as in TF:
 *   checkpoints: both left default → every 600 s; only one given → the other is None; so setting only
 *                save_checkpoint_steps to None disables checkpointing (T2);
 *   summaries:   both left default → every 100 steps; only one given → the other is None (T1);
 *   both of a pair given → TW_INVALID_ARGUMENT "Can not provide both every_secs and every_steps." (T3).
 * A chief runs, in this order: chief_only_hooks; StepCounterHook(summary_dir, log_step_count_steps) if
 * there is a summary dir and log_step_count_steps > 0; SummarySaverHook (scalars of every published
 * one-element value; histograms only of TW_OPT_SUMMARY_HISTOGRAM_NAMES, T11) if there is a summary dir
 * and a summary frequency > 0; CheckpointSaverHook if there is a checkpoint dir
 * and a checkpoint frequency > 0; then `hooks` (T6). The chief restores from the checkpoint dir. A
 * worker runs `hooks` only and waits for readiness (T5) — except in a job with a collective and sharded
 * variables (trainwatch/distributed.h), where every rank also runs CheckpointSaverHook, synchronously,
 * writing its part of each checkpoint. Errors: as tw_monitored_session_create, plus
 * the hooks' constructor errors (in a job, one rank's — the chief's summary options, say — fails every
 * rank's creation with "rank k of n: <its message>", D1). */
TW_NODISCARD TW_API tw_status tw_monitored_training_session_create(tw_session **out, const tw_options *opts,
                                                                   tw_hook *const *hooks, size_t n_hooks,
                                                                   tw_hook *const *chief_only_hooks,
                                                                   size_t n_chief_only_hooks);

/* The user's step: TF's graph run. It reads feeds and publishes outputs through ctx and returns:
 * TW_OK; TW_OUT_OF_RANGE at the end of the input (a clean end); TW_STOP_ITERATION (what
 * tw_step_context_request_stop returns); a recoverable status to ask for recovery; any other status to
 * fail the run. */
typedef tw_status (*tw_step_fn)(void *user_data, tw_step_context *ctx);

/* One training step with hooks: before_run on every hook → merge feeds (hook feeds, then the caller's
 * `feeds`) → step(user_data, ctx) → global_step += 1 (see TW_OPT_AUTO_INCREMENT_GLOBAL_STEP) →
 * resolve every hook's fetches → after_run on every hook → latch any stop request.
 * feeds: n_feeds named views, borrowed until the call returns; names must be unique and non-empty.
 * Recovery (MonitoredSession): a recoverable status from any hook or the step re-creates the inner
 * session and retries the whole run, so a step may execute more than once (TF's H19).
 * Returns TW_OK or the status that ended the run:
 *   TW_INVALID_ARGUMENT — bad arguments; a feed conflict ("Same tensor is fed by two hooks. Conflict(s):
 *                         ['x']" / "Same tensor is fed by a SessionRunHook and user. Conflict(s): ['x']");
 *   TW_NOT_FOUND        — a hook requested a name that is neither published, a variable nor global_step;
 *   TW_FAILED_PRECONDITION — the session is closed ("Session is closed."), stop was already requested
 *                         ("Run called even after should_stop requested."), an earlier run failed, or
 *                         run was called from inside a step function, or another thread is inside the
 *                         session ("… a session is used by one thread at a time …");
 *   TW_OUT_OF_RANGE / TW_STOP_ITERATION — the step ended the input (no after_run; not a failure);
 *   the recoverable status — recovery gave up after TW_OPT_MAX_RECOVERY_ATTEMPTS;
 *   any status a hook or the step returned — the session is then failed: on_error has run on every
 *                         hook, later runs return TW_FAILED_PRECONDITION, close skips end.
 * In a job of many ranks (trainwatch/distributed.h) the run ends with a vote of every rank (D4–D10): the
 * run may then return another rank's failure (its status, the message prefixed "rank R of N: "), recover
 * because another rank must, roll back with the others, or fail with the collective's own status
 * (TW_DEADLINE_EXCEEDED, TW_UNAVAILABLE: a rank dead or silent past TW_OPT_COLLECTIVE_TIMEOUT_SECS, D9).
 * A preemption (TW_OPT_CATCH_PREEMPTION_SIGNALS, tw_session_notify_preemption) ends the run with TW_OK
 * after the chief's save, should_stop 1 and tw_session_preempted 1 (D10). */
TW_NODISCARD TW_API tw_status tw_session_run(tw_session *session, const tw_tensor *feeds, size_t n_feeds,
                                             tw_step_fn step, void *user_data);

/* The same step without hooks and without touching global_step — for evaluation, iterator resets and
 * other auxiliary work — keeping recovery (TF users' run_without_hooks request). It may also be called
 * from inside a step function (TF's step_context.session.run). Same statuses as tw_session_run, minus
 * the hook-related ones. In a job of many ranks (trainwatch/distributed.h) it is this rank's alone: no
 * vote, no recovery, and a failure does not fail the session (D15). */
TW_NODISCARD TW_API tw_status tw_session_run_without_hooks(tw_session *session, const tw_tensor *feeds, size_t n_feeds,
                                                           tw_step_fn step, void *user_data);

/* 1 when the session should stop: a hook or the caller requested it, the session is closed or failed,
 * or session is NULL. Never fails (TF's W2/W4/W11). */
TW_API int tw_session_should_stop(const tw_session *session);

/* Requests a stop (the Coordinator's request_stop). From a callback of a run it acts as the hook's
 * request_stop: it latches when the run ends (after every after_run; a later run is refused, H29).
 * Between runs, or from another thread (any thread may call this, also while the session runs), it is
 * the Coordinator's: tw_session_should_stop returns 1 at once, the run in progress finishes normally
 * and later runs are not refused. A re-creation by recovery clears either (H30). In a job of many ranks
 * (trainwatch/distributed.h) should_stop does not turn 1 on one rank alone: the next run's vote stops
 * every rank after it (D5).
 * Errors: TW_INVALID_ARGUMENT (NULL), TW_FAILED_PRECONDITION (closed). */
TW_NODISCARD TW_API tw_status tw_session_request_stop(tw_session *session);

/* Closes the session: end on every hook in order (skipped if a run failed; the first failing end stops
 * the rest, H18), then releases the inner session and the checkpoint directory's lock. The session is
 * closed even when end fails.
 * In a job of many ranks, a session that did not fail then meets every rank in a barrier (D12), whose
 * failure (TW_DEADLINE_EXCEEDED, …) close returns when end succeeded. tw_session_preempted still
 * reports a preemption after close (D10).
 * Errors: TW_INVALID_ARGUMENT (NULL), TW_FAILED_PRECONDITION ("Session is already closed."; called
 * from inside a run of the session; another thread is inside it), any status a hook's end returned,
 * the collective's status. */
TW_NODISCARD TW_API tw_status tw_session_close(tw_session *session);

/* Frees the session and returns TW_OK. An open session is closed first without calling end or on_error
 * (the caller abandoned it). Releases the session's hook references. NULL is a no-op (TW_OK).
 * Errors: TW_FAILED_PRECONDITION when called from inside one of the session's own callbacks (a hook,
 * the step function, a checkpoint listener, an init or ready function) or while another thread is
 * inside the session: nothing is freed and the session stays valid and usable; destroy it once the
 * call running the callback has returned. */
TW_NODISCARD TW_API tw_status tw_session_destroy(tw_session *session);

/* The current global step; 0 for NULL. In after_run this is already the value after the step (TF's
 * "re-read the real global step"), while a "global_step" fetch holds the value at the start of the run
 * (TF's stale read). Read it from the thread that uses the session. */
TW_API int64_t tw_session_global_step(const tw_session *session);

/* Sets the global step (e.g. after restoring from a foreign checkpoint). Inside a step function use
 * tw_step_context_set_global_step instead. Errors: TW_INVALID_ARGUMENT, TW_FAILED_PRECONDITION (closed;
 * another thread is inside the session). */
TW_NODISCARD TW_API tw_status tw_session_set_global_step(tw_session *session, int64_t value);

/* TF's scaffold.saver.save(sess, prefix, global_step) inside a session (docs/tf-semantics.md C27): saves
 * the registered variables and the global step, as they are now, to "<prefix>-<global_step>" (or
 * `prefix` itself when global_step is TW_UNSET) through the session's own saver — the one its
 * CheckpointSaverHook and restore use: its lock on TW_OPT_CHECKPOINT_DIR, its state file and its
 * retention (TW_OPT_MAX_TO_KEEP, TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS, TW_OPT_CHECKPOINT_RECYCLE_FILES).
 * Nothing else: no checkpoint listener, no NaN check, no event in the summary directory. A write of a
 * saver hook in the background is waited for first. The checkpoint goes only where the session saves:
 * `prefix`'s directory must be TW_OPT_CHECKPOINT_DIR or the directory of one of its
 * CheckpointSaverHooks, which save there with the session's saver (compared as directories: another
 * spelling or a symbolic link of it is the same). A session that only restores (no saver hook, no
 * preemption save, C24) takes the directory's lock at its first such save, until close, after reading
 * the state file's list of kept checkpoints (as TF's restore does for its saver).
 * *out_path receives the checkpoint's path, owned by the session and valid until the next successful
 * call on it or its destruction; untouched on error.
 * Thread rules: on the session's thread — from a hook's callback (after_create_session, before_run,
 * after_run, end), a step function, a checkpoint listener, or between runs — never from a progress sink
 * (tw_set_progress_sink).
 * Errors: TW_INVALID_ARGUMENT (NULL out_path, session or prefix; empty prefix; the session has no
 * TW_OPT_CHECKPOINT_DIR and no CheckpointSaverHook; prefix's directory is none of those; the prefix
 * collides with the state file), TW_NOT_FOUND ("Parent directory of <prefix> doesn't exist, can't
 * save."), TW_FAILED_PRECONDITION (closed; another thread is inside the session; called from a progress
 * sink; a worker session; a job with sharded variables, whose checkpoints every rank writes together;
 * the directory's lock is held by another writer, named in the message), and the errors of
 * tw_saver_save (TW_IO, TW_RESOURCE_EXHAUSTED, TW_PERMISSION_DENIED, a device's status). On any error
 * the previous checkpoints and state file are untouched. */
TW_NODISCARD TW_API tw_status tw_session_save_checkpoint(const char **out_path, tw_session *session, const char *prefix,
                                                         int64_t global_step);

/* A registered variable's view by name; *out points at the caller's buffer (zero copy), the name and
 * shape arrays are owned by the session and valid until it is destroyed.
 * Errors: TW_INVALID_ARGUMENT (NULL arguments, out->struct_size too small), TW_NOT_FOUND. */
TW_NODISCARD TW_API tw_status tw_session_get_variable(tw_tensor *out, const tw_session *session, const char *name);

/* An output the step published in the current run (what a hook may fetch), by exact name: readable
 * inside after_run, while that run is in progress — published views borrow the step's memory, so nothing
 * is readable between runs (a hook that needs a value later requests it and copies it). *out borrows
 * the output; valid until the run returns.
 * Errors: TW_INVALID_ARGUMENT (NULL session/name/out, out->struct_size too small), TW_NOT_FOUND ("the
 * step published no output named 'x' in this run"), TW_FAILED_PRECONDITION (not in after_run: before
 * the step, in begin/end, between runs). */
TW_NODISCARD TW_API tw_status tw_session_get_output(tw_tensor *out, const tw_session *session, const char *name);

/* Number of registered variables, and the i-th one (registration order); errors as above, plus
 * TW_OUT_OF_RANGE for an index past the end. */
TW_API size_t tw_session_variable_count(const tw_session *session);
TW_NODISCARD TW_API tw_status tw_session_variable_at(tw_tensor *out, const tw_session *session, size_t index);

/* The session's hooks in the order they run (for a MonitoredTrainingSession: the defaults it added,
 * T6): count, and the i-th hook, borrowed (valid while the session is open; take a reference by
 * keeping your own). Errors: TW_INVALID_ARGUMENT (NULL), TW_OUT_OF_RANGE (index), TW_FAILED_PRECONDITION
 * (closed: a closed session holds no hooks). */
TW_API size_t tw_session_hook_count(const tw_session *session);
TW_NODISCARD TW_API tw_status tw_session_hook_at(tw_hook **out, const tw_session *session, size_t index);

/* 1 for a chief, 0 for a worker or NULL. With a collective (trainwatch/distributed.h) and TW_OPT_IS_CHIEF
 * left at its default, the chief is rank 0. */
TW_API int tw_session_is_chief(const tw_session *session);

/* How many times the inner session was created: 1 after creation, +1 per recovery. 0 for NULL. */
TW_API int64_t tw_session_creation_count(const tw_session *session);

/* Notes a preemption, as SIGTERM or SIGUSR1 would with TW_OPT_CATCH_PREEMPTION_SIGNALS (for a launcher
 * that learns of it another way, e.g. a cloud's metadata server): at the end of the run in progress (or
 * the next run) every rank of the job — or the one process — stops at the same step, the chief saving a
 * checkpoint there into TW_OPT_CHECKPOINT_DIR first (docs/tf-semantics.md D10). Only sets a flag: may be
 * called from any thread (not from a signal handler: use the option). Errors: TW_INVALID_ARGUMENT. */
TW_NODISCARD TW_API tw_status tw_session_notify_preemption(tw_session *session);

/* 1 when the session stopped because of a preemption (a caught signal or tw_session_notify_preemption):
 * the tw_session_run that acted on it returned TW_OK after the save, with tw_session_should_stop 1, and
 * it stays 1 through and after tw_session_close — the way run and close report it, so that a launcher
 * can requeue the job. 0 otherwise, and for NULL. */
TW_API int tw_session_preempted(const tw_session *session);

/* ---------------------------------------------------------------------------------------------- */
/* Run context (inside before_run / after_run)                                                    */
/* ---------------------------------------------------------------------------------------------- */

/* One run context is shared by every hook in a run (TF's H5). Requests and results are per hook: the
 * context always acts for the hook whose callback is running. Calling these outside before_run/after_run
 * returns TW_FAILED_PRECONDITION. */

/* Requests the value named `name` for this hook's after_run (SessionRunArgs.fetches). A name is an
 * output the step publishes, a variable, or "global_step" (its value at the start of the run). A name
 * containing '*', '?' or '[' is a glob pattern with fnmatch rules ("grad/" followed by '*' fetches
 * every gradient): it fetches every
 * published output or variable that matches and is not an error when nothing matches; an exact name
 * that does not exist fails the run with TW_NOT_FOUND. Requesting the same name twice is a no-op.
 * Errors: TW_INVALID_ARGUMENT (NULL, empty name), TW_FAILED_PRECONDITION (not in before_run). */
TW_NODISCARD TW_API tw_status tw_run_context_request_fetch(tw_run_context *ctx, const char *name);

/* Adds a feed for this run (SessionRunArgs.feed_dict). The view is copied, the data borrowed until the
 * run returns. A name another hook already fed fails the run at once with TF's text (H22).
 * Errors: TW_INVALID_ARGUMENT (malformed view, empty name, conflict), TW_FAILED_PRECONDITION. */
TW_NODISCARD TW_API tw_status tw_run_context_add_feed(tw_run_context *ctx, const tw_tensor *feed);

/* SessionRunContext.request_stop(): latches after every hook's after_run; never cancels this run.
 * Errors: TW_INVALID_ARGUMENT (NULL), TW_FAILED_PRECONDITION. */
TW_NODISCARD TW_API tw_status tw_run_context_request_stop(tw_run_context *ctx);

/* 1 once any hook requested stop during this run, else 0 (also for NULL). */
TW_API int tw_run_context_stop_requested(const tw_run_context *ctx);

/* The session running this context (TF's run_context.session), for tw_session_run_without_hooks,
 * variables and the global step. NULL for NULL. */
TW_API tw_session *tw_run_context_session(tw_run_context *ctx);

/* The caller's feeds of this run (SessionRunContext.original_args): count, and the i-th view.
 * Errors: TW_INVALID_ARGUMENT, TW_OUT_OF_RANGE (index). */
TW_API size_t tw_run_context_original_feed_count(const tw_run_context *ctx);
TW_NODISCARD TW_API tw_status tw_run_context_original_feed(tw_tensor *out, const tw_run_context *ctx, size_t index);

/* In after_run: this hook's results (SessionRunValues.results). A hook that requested nothing has no
 * results (TF's None). get_result looks up one requested exact name, or one name a pattern matched;
 * result_count/result_at enumerate every resolved value in request order. Views are valid until the
 * run returns. Errors: TW_INVALID_ARGUMENT (NULL, out->struct_size), TW_NOT_FOUND ("hook 'h' did not
 * request 'x'"), TW_OUT_OF_RANGE (index), TW_FAILED_PRECONDITION (not in after_run). */
TW_NODISCARD TW_API tw_status tw_run_context_get_result(tw_tensor *out, const tw_run_context *ctx, const char *name);
TW_API size_t tw_run_context_result_count(const tw_run_context *ctx);
TW_NODISCARD TW_API tw_status tw_run_context_result_at(tw_tensor *out, const tw_run_context *ctx, size_t index);

/* The names (and patterns) the acting hook requested so far in this run, in request order — in
 * before_run after tw_hook_call_before_run, what the built-in requested (TF's SessionRunArgs of
 * super().before_run). Valid in before_run and after_run; request_count is 0 elsewhere or for NULL. The
 * string is valid until the hook requests another name or the run returns.
 * Errors: TW_INVALID_ARGUMENT (ctx/out NULL), TW_OUT_OF_RANGE (index), TW_FAILED_PRECONDITION (not in
 * before_run/after_run). */
TW_API size_t tw_run_context_request_count(const tw_run_context *ctx);
TW_NODISCARD TW_API tw_status tw_run_context_request_at(const char **out, const tw_run_context *ctx, size_t index);

/* ---------------------------------------------------------------------------------------------- */
/* Step context (inside the step function)                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* The merged feeds of this run (hook feeds, then the caller's): count, i-th view, and lookup by name.
 * Views are valid until the step returns. Errors: TW_INVALID_ARGUMENT, TW_OUT_OF_RANGE, TW_NOT_FOUND. */
TW_API size_t tw_step_context_feed_count(const tw_step_context *ctx);
TW_NODISCARD TW_API tw_status tw_step_context_feed_at(tw_tensor *out, const tw_step_context *ctx, size_t index);
TW_NODISCARD TW_API tw_status tw_step_context_get_feed(tw_tensor *out, const tw_step_context *ctx, const char *name);

/* 1 if some hook requested `name` in this run (exactly or through a pattern), so the step can skip
 * computing what nobody asked for; 0 otherwise or for NULL arguments. */
TW_API int tw_step_context_is_requested(const tw_step_context *ctx, const char *name);

/* The names and patterns hooks requested in this run, in first-request order; the string is valid
 * until the step returns. Errors: TW_INVALID_ARGUMENT, TW_OUT_OF_RANGE. */
TW_API size_t tw_step_context_requested_count(const tw_step_context *ctx);
TW_NODISCARD TW_API tw_status tw_step_context_requested_at(const char **out, const tw_step_context *ctx, size_t index);

/* Publishes an output of this run under out->name for hooks to fetch. publish borrows the data, which
 * must stay valid until tw_session_run returns; publish_copy copies it into session-owned memory that
 * lives until the next run. A device view (trainwatch/device.h) is borrowed by publish as it is; publish_copy
 * keeps a host copy of it, so the output is then host memory. Re-publishing a name replaces it.
 * Errors: TW_INVALID_ARGUMENT (malformed view, empty name, "global_step" or a variable's name, a strided
 * device view), TW_RESOURCE_EXHAUSTED (copy); publish_copy of a device view also TW_FAILED_PRECONDITION
 * (no device registered for it) or a failing device operation's status. */
TW_NODISCARD TW_API tw_status tw_step_context_publish(tw_step_context *ctx, const tw_tensor *output);
TW_NODISCARD TW_API tw_status tw_step_context_publish_copy(tw_step_context *ctx, const tw_tensor *output);

/* global_step at the start of this run. 0 for NULL. */
TW_API int64_t tw_step_context_global_step(const tw_step_context *ctx);

/* Sets global_step to `value` when the step succeeds, instead of the automatic +1.
 * Errors: TW_INVALID_ARGUMENT (NULL). */
TW_NODISCARD TW_API tw_status tw_step_context_set_global_step(tw_step_context *ctx, int64_t value);

/* TF's StepContext.request_stop(): returns TW_STOP_ITERATION with the message "step_fn has requested
 * the iterations to stop." for the step to return at once. It sets no stop flag (W23): a loop on
 * tw_session_should_stop must look at the run's status. */
TW_NODISCARD TW_API tw_status tw_step_context_request_stop(tw_step_context *ctx);

/* The session running this step (TF's step_context.session): use tw_session_run_without_hooks for a
 * run without hooks. NULL for NULL. */
TW_API tw_session *tw_step_context_session(tw_step_context *ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_SESSION_H */
