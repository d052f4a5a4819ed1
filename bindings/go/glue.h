/* C side of the Go binding: the callback table and step function that forward to the exported Go
 * functions, and calls that take Go memory as plain arguments (never stored in C memory). */
#ifndef TRAINWATCH_GO_GLUE_H
#define TRAINWATCH_GO_GLUE_H

#include <stdint.h>
#include <stdlib.h>

#include <trainwatch.h>

enum {
  TWGO_BEGIN = 0,
  TWGO_AFTER_CREATE_SESSION = 1,
  TWGO_BEFORE_RUN = 2,
  TWGO_AFTER_RUN = 3,
  TWGO_END = 4,
  TWGO_ON_ERROR = 5
};

/* A hook whose user_data is a cgo.Handle to a Go hook wrapper. */
tw_status twgo_hook_create(tw_hook **out, const char *name, uintptr_t handle);

/* tw_hook_wrap of inner with the same trampolines: a Go hook that subclasses a built-in one. */
tw_status twgo_hook_wrap(tw_hook **out, const char *name, tw_hook *inner, uintptr_t handle);

/* tw_session_run / tw_session_run_without_hooks with the Go step trampoline. */
tw_status twgo_session_run(tw_session *session, const tw_tensor *feeds, size_t n_feeds, uintptr_t handle,
                           int without_hooks);

/* tw_step_context_publish_copy of (dtype, data, shape): the view is built here, on the C stack. */
tw_status twgo_publish_copy(tw_step_context *ctx, const char *name, int32_t dtype, void *data, int32_t ndim,
                            const int64_t *shape);

/* tw_scan of a view built here. */
tw_status twgo_scan(tw_scan_result *out, int32_t dtype, void *data, int32_t ndim, const int64_t *shape);

#endif
