#include "glue.h"

#include <string.h>

#include "_cgo_export.h"

static tw_status hook_begin(void *user, tw_session *session) {
  return twgoHookCall((uintptr_t)user, TWGO_BEGIN, session, NULL, TW_OK);
}
static tw_status hook_after_create_session(void *user, tw_session *session) {
  return twgoHookCall((uintptr_t)user, TWGO_AFTER_CREATE_SESSION, session, NULL, TW_OK);
}
static tw_status hook_before_run(void *user, tw_run_context *ctx) {
  return twgoHookCall((uintptr_t)user, TWGO_BEFORE_RUN, NULL, ctx, TW_OK);
}
static tw_status hook_after_run(void *user, tw_run_context *ctx) {
  return twgoHookCall((uintptr_t)user, TWGO_AFTER_RUN, NULL, ctx, TW_OK);
}
static tw_status hook_end(void *user, tw_session *session) {
  return twgoHookCall((uintptr_t)user, TWGO_END, session, NULL, TW_OK);
}
static void hook_on_error(void *user, tw_session *session, tw_status error) {
  (void)twgoHookCall((uintptr_t)user, TWGO_ON_ERROR, session, NULL, error);
}
static void hook_destroy(void *user) { twgoHookDestroy((uintptr_t)user); }

static tw_hook_callbacks go_callbacks(void) {
  tw_hook_callbacks cb;
  memset(&cb, 0, sizeof(cb));
  cb.struct_size = sizeof(cb);
  cb.begin = hook_begin;
  cb.after_create_session = hook_after_create_session;
  cb.before_run = hook_before_run;
  cb.after_run = hook_after_run;
  cb.end = hook_end;
  cb.on_error = hook_on_error;
  cb.destroy = hook_destroy;
  return cb;
}

tw_status twgo_hook_create(tw_hook **out, const char *name, uintptr_t handle) {
  const tw_hook_callbacks cb = go_callbacks();
  return tw_hook_create(out, name, &cb, (void *)handle);
}

tw_status twgo_hook_wrap(tw_hook **out, const char *name, tw_hook *inner, uintptr_t handle) {
  const tw_hook_callbacks cb = go_callbacks();
  return tw_hook_wrap(out, name, inner, &cb, (void *)handle);
}

static tw_status step(void *user, tw_step_context *ctx) { return twgoStep((uintptr_t)user, ctx); }

tw_status twgo_session_run(tw_session *session, const tw_tensor *feeds, size_t n_feeds, uintptr_t handle,
                           int without_hooks) {
  if (without_hooks) return tw_session_run_without_hooks(session, feeds, n_feeds, step, (void *)handle);
  return tw_session_run(session, feeds, n_feeds, step, (void *)handle);
}

static tw_tensor view(const char *name, int32_t dtype, void *data, int32_t ndim, const int64_t *shape) {
  tw_tensor t = TW_TENSOR_INIT;
  t.name = name;
  t.dtype = dtype;
  t.data = data;
  t.ndim = ndim;
  t.shape = shape;
  return t;
}

tw_status twgo_publish_copy(tw_step_context *ctx, const char *name, int32_t dtype, void *data, int32_t ndim,
                            const int64_t *shape) {
  tw_tensor t = view(name, dtype, data, ndim, shape);
  return tw_step_context_publish_copy(ctx, &t);
}

tw_status twgo_scan(tw_scan_result *out, int32_t dtype, void *data, int32_t ndim, const int64_t *shape) {
  tw_tensor t = view("tensor", dtype, data, ndim, shape);
  tw_scan_result_init(out);
  return tw_scan(out, &t);
}

/* ---- checkpoint listeners ---- */

static tw_status listener_begin(void *user) { return twgoListenerCall((uintptr_t)user, 0, NULL, 0, NULL); }
static tw_status listener_before_save(void *user, tw_session *session, int64_t step) {
  return twgoListenerCall((uintptr_t)user, 1, session, step, NULL);
}
static tw_status listener_after_save(void *user, tw_session *session, int64_t step, int *request_stop) {
  return twgoListenerCall((uintptr_t)user, 2, session, step, request_stop);
}
static tw_status listener_end(void *user, tw_session *session, int64_t step) {
  return twgoListenerCall((uintptr_t)user, 3, session, step, NULL);
}
static void release(void *user) { twgoRelease((uintptr_t)user); }

tw_status twgo_checkpoint_listener_create(tw_checkpoint_listener **out, const char *name, uintptr_t handle) {
  tw_checkpoint_listener_callbacks cb = TW_CHECKPOINT_LISTENER_CALLBACKS_INIT;
  cb.begin = listener_begin;
  cb.before_save = listener_before_save;
  cb.after_save = listener_after_save;
  cb.end = listener_end;
  cb.destroy = release;
  return tw_checkpoint_listener_create(out, name, &cb, (void *)handle);
}

/* ---- built-in hooks with Go callbacks ---- */

/* create(ARGS…, fn, user_data, destroy) with the Go value behind handle and its C callback fn, or with
 * no callback when handle is 0 (nothing to release then). */
#define WITH_GO_FN(create, handle, fn, ...) \
  ((handle) == 0 ? create(__VA_ARGS__, NULL, NULL, NULL) : create(__VA_ARGS__, fn, (void *)(handle), release))

static tw_status nan_fn(void *user, tw_session *session, const tw_nan_event *event) {
  return twgoNanCall((uintptr_t)user, session, (char *)event->tensor_name, event->global_step, event->nan_count,
                     event->pos_inf_count, event->neg_inf_count, event->first_nonfinite_index);
}

tw_status twgo_nan_tensor_hook_create(tw_hook **out, const char *const *watch, size_t n_watch, const tw_options *opts,
                                      uintptr_t handle) {
  return WITH_GO_FN(tw_nan_tensor_hook_create_with_options, handle, nan_fn, out, watch, n_watch, opts);
}

static tw_status formatter(void *user, const tw_tensor *const *values, size_t n_values, char *buffer,
                           size_t buffer_size, size_t *length) {
  return twgoFormat((uintptr_t)user, (tw_tensor **)values, n_values, buffer, buffer_size, length);
}

tw_status twgo_logging_tensor_hook_create(tw_hook **out, const char *const *names, const char *const *tags,
                                          size_t n_names, const tw_options *opts, uintptr_t handle) {
  return WITH_GO_FN(tw_logging_tensor_hook_create, handle, formatter, out, names, tags, n_names, opts);
}

static tw_status feed_fn(void *user, const tw_tensor **feeds, size_t *n_feeds) {
  tw_tensor *array = NULL;
  const tw_status status = twgoFeeds((uintptr_t)user, &array, n_feeds);
  *feeds = array;
  return status;
}

tw_status twgo_feed_fn_hook_create(tw_hook **out, uintptr_t handle) {
  return tw_feed_fn_hook_create(out, feed_fn, (void *)handle, release);
}

tw_status twgo_final_ops_hook_create(tw_hook **out, const tw_tensor *feeds, size_t n_feeds, uintptr_t handle) {
  return tw_final_ops_hook_create(out, feeds, n_feeds, step, (void *)handle, release);
}

static tw_status global_step_fn(void *user, tw_session *session, int64_t *global_step) {
  return twgoGlobalStep((uintptr_t)user, session, global_step);
}

tw_status twgo_global_step_waiter_hook_create(tw_hook **out, int64_t wait_until_step, const tw_options *opts,
                                              uintptr_t handle) {
  return WITH_GO_FN(tw_global_step_waiter_hook_create, handle, global_step_fn, out, wait_until_step, opts);
}

/* ---- hook extension points (TF's overridable _save, _log_tensors, _log_and_record) ---- */

static tw_status save_fn(void *user, tw_hook *hook, tw_session *session, int64_t step, int *stop) {
  return twgoSave((uintptr_t)user, hook, session, step, stop);
}
static tw_status log_fn(void *user, tw_hook *hook, const tw_tensor *const *values, size_t n_values) {
  return twgoLogTensors((uintptr_t)user, hook, (tw_tensor **)values, n_values);
}
static tw_status record_fn(void *user, tw_hook *hook, int64_t elapsed_steps, double elapsed_time, int64_t global_step) {
  return twgoRecord((uintptr_t)user, hook, elapsed_steps, elapsed_time, global_step);
}

tw_status twgo_checkpoint_saver_hook_set_save_fn(tw_hook *hook, uintptr_t handle) {
  return tw_checkpoint_saver_hook_set_save_fn(hook, save_fn, (void *)handle, release);
}
tw_status twgo_logging_tensor_hook_set_log_fn(tw_hook *hook, uintptr_t handle) {
  return tw_logging_tensor_hook_set_log_fn(hook, log_fn, (void *)handle, release);
}
tw_status twgo_step_counter_hook_set_record_fn(tw_hook *hook, uintptr_t handle) {
  return tw_step_counter_hook_set_record_fn(hook, record_fn, (void *)handle, release);
}

/* ---- options: scaffold functions and the collective ---- */

static tw_status init_fn(void *user, tw_session *session) { return twgoInit((uintptr_t)user, session); }
static tw_status ready_fn(void *user, tw_session *session, int *ready) {
  return twgoReady((uintptr_t)user, session, ready);
}

tw_status twgo_options_set_init_fn(tw_options *opts, uintptr_t handle) {
  return WITH_GO_FN(tw_options_set_init_fn, handle, init_fn, opts);
}
tw_status twgo_options_set_ready_fn(tw_options *opts, uintptr_t handle) {
  return WITH_GO_FN(tw_options_set_ready_fn, handle, ready_fn, opts);
}

static tw_status allreduce(void *user, int64_t *values, size_t count, tw_reduce_op op, double timeout_secs) {
  return twgoAllreduce((uintptr_t)user, values, count, (int32_t)op, timeout_secs);
}
static tw_status broadcast(void *user, void *data, size_t size, int32_t root, double timeout_secs) {
  return twgoBroadcast((uintptr_t)user, data, size, root, timeout_secs);
}
static tw_status barrier(void *user, double timeout_secs) { return twgoBarrier((uintptr_t)user, timeout_secs); }

tw_status twgo_options_set_collective(tw_options *opts, int32_t rank, int32_t world_size, uintptr_t handle) {
  if (handle == 0) return tw_options_set_collective(opts, NULL, NULL);
  tw_collective table = TW_COLLECTIVE_INIT;
  table.rank = rank;
  table.world_size = world_size;
  table.allreduce_int64 = allreduce;
  table.broadcast = broadcast;
  table.barrier = barrier;
  table.destroy = release;
  return tw_options_set_collective(opts, &table, (void *)handle);
}

/* ---- process-wide sinks ---- */

static void log_sink(void *user, tw_log_level level, const char *message) {
  twgoLog((uintptr_t)user, (int32_t)level, (char *)message);
}
static void progress_sink(void *user, tw_progress_kind kind, const char *path, int64_t done, int64_t total,
                          double elapsed, int finished) {
  twgoProgress((uintptr_t)user, (int32_t)kind, (char *)path, done, total, elapsed, finished);
}

void twgo_set_log_sink(uintptr_t handle) {
  if (handle == 0) {
    tw_set_log_sink(NULL, NULL);
  } else {
    tw_set_log_sink(log_sink, (void *)handle);
  }
}
tw_status twgo_set_progress_sink(double every_n_secs, uintptr_t handle) {
  if (handle == 0) return tw_set_progress_sink(every_n_secs, NULL, NULL);
  return tw_set_progress_sink(every_n_secs, progress_sink, (void *)handle);
}
