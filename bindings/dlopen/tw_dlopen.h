/*
 * tw_dlopen.h — use libtrainwatch through dlopen/dlsym instead of linking it (plugins, optional
 * features, picking a library at run time). Header-only, C99, POSIX.
 *
 *   tw_dlopen_api tw;
 *   if (tw_dlopen_load(&tw, "libtrainwatch.so.0") != 0) { fprintf(stderr, "%s\n", tw.error); … }
 *   tw.session_run(session, feeds, n_feeds, step, model);
 *   tw_dlopen_unload(&tw);
 *
 * The types and constants come from <trainwatch.h>; only the functions are looked up. Each entry of
 * TW_DLOPEN_FUNCTIONS is written out by hand (so that the program needs no link-time reference to
 * the library) and checked at compile time against the header's own prototype: a signature that
 * drifts from the header is a compile error (-Werror=incompatible-pointer-types), never a crash.
 *
 * tw_dlopen_load also refuses a library whose ABI major (tw_version_number() / 10000) differs from
 * the header's TW_VERSION_MAJOR, and one that is older than the header (a function the header
 * promises may be missing or behave differently).
 */
#ifndef TW_DLOPEN_H
#define TW_DLOPEN_H

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <trainwatch.h>

/* A field returning tw_status warns when its result is ignored, as TW_NODISCARD does for the header's
 * functions (GCC and clang; the attribute applies to the pointer's function type). */
#if defined(__GNUC__) || defined(__clang__)
#define TW_DLOPEN_STATUS __attribute__((warn_unused_result)) tw_status
#else
#define TW_DLOPEN_STATUS tw_status
#endif

/* X(return type, name without the "tw_" prefix, parameter list) — every function the loader
 * resolves. Extend the list to reach more of the API. */
#define TW_DLOPEN_FUNCTIONS(X)                                                                                 \
  X(unsigned, version_number, (void))                                                                          \
  X(const char *, version_string, (void))                                                                      \
  X(const char *, status_name, (tw_status))                                                                    \
  X(const char *, last_error_message, (void))                                                                  \
  X(TW_DLOPEN_STATUS, set_error, (tw_status, const char *))                                                    \
  X(void, set_log_level, (tw_log_level))                                                                       \
  X(TW_DLOPEN_STATUS, options_create, (tw_options **))                                                         \
  X(void, options_destroy, (tw_options *))                                                                     \
  X(TW_DLOPEN_STATUS, options_set_int64, (tw_options *, tw_option, int64_t))                                   \
  X(TW_DLOPEN_STATUS, options_set_double, (tw_options *, tw_option, double))                                   \
  X(TW_DLOPEN_STATUS, options_set_string, (tw_options *, tw_option, const char *))                             \
  X(TW_DLOPEN_STATUS, options_add_variable, (tw_options *, const tw_tensor *))                                 \
  X(TW_DLOPEN_STATUS, hook_create, (tw_hook **, const char *, const tw_hook_callbacks *, void *))              \
  X(void, hook_destroy, (tw_hook *))                                                                           \
  X(TW_DLOPEN_STATUS, stop_at_step_hook_create, (tw_hook **, int64_t, int64_t))                                \
  X(TW_DLOPEN_STATUS, nan_tensor_hook_create, (tw_hook **, const char *, int))                                 \
  X(TW_DLOPEN_STATUS, checkpoint_saver_hook_create,                                                            \
    (tw_hook **, const char *, const tw_options *, tw_checkpoint_listener *const *, size_t))                   \
  X(TW_DLOPEN_STATUS, monitored_session_create, (tw_session **, const tw_options *, tw_hook *const *, size_t)) \
  X(TW_DLOPEN_STATUS, monitored_training_session_create,                                                       \
    (tw_session **, const tw_options *, tw_hook *const *, size_t, tw_hook *const *, size_t))                   \
  X(TW_DLOPEN_STATUS, session_run, (tw_session *, const tw_tensor *, size_t, tw_step_fn, void *))              \
  X(int, session_should_stop, (const tw_session *))                                                            \
  X(TW_DLOPEN_STATUS, session_close, (tw_session *))                                                           \
  X(TW_DLOPEN_STATUS, session_destroy, (tw_session *))                                                         \
  X(int64_t, session_global_step, (const tw_session *))                                                        \
  X(TW_DLOPEN_STATUS, run_context_request_fetch, (tw_run_context *, const char *))                             \
  X(TW_DLOPEN_STATUS, run_context_get_result, (tw_tensor *, const tw_run_context *, const char *))             \
  X(tw_session *, run_context_session, (tw_run_context *))                                                     \
  X(TW_DLOPEN_STATUS, step_context_get_feed, (tw_tensor *, const tw_step_context *, const char *))             \
  X(TW_DLOPEN_STATUS, step_context_publish_copy, (tw_step_context *, const tw_tensor *))                       \
  X(int64_t, step_context_global_step, (const tw_step_context *))                                              \
  X(TW_DLOPEN_STATUS, latest_checkpoint, (char *, size_t, const char *))

#define TW_DLOPEN_FIELD_(ret, name, params) ret(*name) params;

typedef struct tw_dlopen_api {
  void *handle;    /* from dlopen; NULL when not loaded */
  char error[512]; /* why tw_dlopen_load failed */
  TW_DLOPEN_FUNCTIONS(TW_DLOPEN_FIELD_)
} tw_dlopen_api;

/* Compile-time check that every hand-written signature is the header's: assigning the header's
 * function to the field inside sizeof is type-checked but never evaluated, so nothing is linked. */
#define TW_DLOPEN_CHECK_(ret, name, params) (void)sizeof(api->name = &tw_##name);
static inline void tw_dlopen_check_signatures_(tw_dlopen_api *api) { TW_DLOPEN_FUNCTIONS(TW_DLOPEN_CHECK_) }

/* Closes the library (if loaded) and clears every function pointer; api->error is kept. */
static inline void tw_dlopen_unload(tw_dlopen_api *api) {
  char error[sizeof(api->error)];
  memcpy(error, api->error, sizeof(error));
  if (api->handle != NULL) dlclose(api->handle);
  memset(api, 0, sizeof(*api));
  memcpy(api->error, error, sizeof(error));
}

/* Opens `path` (a file name searched like any dlopen, or a path) and resolves every function.
 * Returns 0, or -1 with api->error set and api->handle NULL (nothing stays loaded). */
static inline int tw_dlopen_load(tw_dlopen_api *api, const char *path) {
  void *symbol;
  unsigned runtime;
  (void)tw_dlopen_check_signatures_;
  memset(api, 0, sizeof(*api));
  if (path == NULL) {
    snprintf(api->error, sizeof(api->error), "path is NULL");
    return -1;
  }
  api->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (api->handle == NULL) {
    snprintf(api->error, sizeof(api->error), "dlopen(%s): %s", path, dlerror());
    return -1;
  }
  /* ISO C has no cast from void * to a function pointer; POSIX guarantees the representation, so
   * the bytes are copied instead. */
#define TW_DLOPEN_RESOLVE_(ret, name, params)                                  \
  symbol = dlsym(api->handle, "tw_" #name);                                    \
  if (symbol == NULL) {                                                        \
    snprintf(api->error, sizeof(api->error), "%s: no symbol tw_" #name, path); \
    tw_dlopen_unload(api);                                                     \
    return -1;                                                                 \
  }                                                                            \
  memcpy(&api->name, &symbol, sizeof(symbol));
  TW_DLOPEN_FUNCTIONS(TW_DLOPEN_RESOLVE_)
#undef TW_DLOPEN_RESOLVE_
  runtime = api->version_number();
  if (runtime / 10000 != TW_VERSION_MAJOR || runtime < (unsigned)TW_VERSION_NUMBER) {
    snprintf(api->error, sizeof(api->error), "%s is trainwatch %u (%s) but this program was compiled against %d (%s)",
             path, runtime, api->version_string(), TW_VERSION_NUMBER, TW_VERSION_STRING);
    tw_dlopen_unload(api);
    return -1;
  }
  return 0;
}

#endif /* TW_DLOPEN_H */
