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

/* Every function below passes `handle` (a cgo.Handle) as the user_data of a Go callback and
 * twgoRelease as its destroy: the library deletes the handle once it no longer needs it. On error the
 * handle is not taken (the caller deletes it). A flag `has_fn` 0 passes no callback at all. */

tw_status twgo_checkpoint_listener_create(tw_checkpoint_listener **out, const char *name, uintptr_t handle);
tw_status twgo_nan_tensor_hook_create(tw_hook **out, const char *const *watch, size_t n_watch, const tw_options *opts,
                                      uintptr_t handle);
tw_status twgo_logging_tensor_hook_create(tw_hook **out, const char *const *names, const char *const *tags,
                                          size_t n_names, const tw_options *opts, uintptr_t handle);
tw_status twgo_feed_fn_hook_create(tw_hook **out, uintptr_t handle);
tw_status twgo_final_ops_hook_create(tw_hook **out, const tw_tensor *feeds, size_t n_feeds, uintptr_t handle);
tw_status twgo_global_step_waiter_hook_create(tw_hook **out, int64_t wait_until_step, const tw_options *opts,
                                              uintptr_t handle);
tw_status twgo_checkpoint_saver_hook_set_save_fn(tw_hook *hook, uintptr_t handle);
tw_status twgo_logging_tensor_hook_set_log_fn(tw_hook *hook, uintptr_t handle);
tw_status twgo_step_counter_hook_set_record_fn(tw_hook *hook, uintptr_t handle);
tw_status twgo_options_set_init_fn(tw_options *opts, uintptr_t handle);
tw_status twgo_options_set_ready_fn(tw_options *opts, uintptr_t handle);
tw_status twgo_options_set_collective(tw_options *opts, int32_t rank, int32_t world_size, uintptr_t handle);
void twgo_set_log_sink(uintptr_t handle);
tw_status twgo_set_progress_sink(double every_n_secs, uintptr_t handle);

/* The library lends arrays of pointers to views (const tw_tensor *const *); Go reads the i-th. */
static inline const tw_tensor *twgo_tensor_at(const tw_tensor *const *values, size_t index) { return values[index]; }

#endif
