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
