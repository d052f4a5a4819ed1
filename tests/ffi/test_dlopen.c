/* trainwatch through dlopen: the library is never linked; every function comes from dlsym through
 * bindings/dlopen/tw_dlopen.h. Checks the runtime version against the header's, the loader's failure
 * paths, errors read back through dlsym'd functions, and the parity scenario (tests/parity/) in C.
 *
 * argv[1]: the path of libtrainwatch.so.0; argv[2]: tests/parity/expected.txt. */
#include "scratch_dir.h" /* first: it selects the POSIX feature level */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tw_dlopen.h"

static const char *g_library;
static const char *g_expected;
static tw_dlopen_api tw;

static int load(void **state) {
  (void)state;
  if (tw_dlopen_load(&tw, g_library) != 0) {
    fprintf(stderr, "%s\n", tw.error);
    return -1;
  }
  return 0;
}

static int unload(void **state) {
  (void)state;
  tw_dlopen_unload(&tw);
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Loader                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

static void runtime_version_is_the_headers(void **state) {
  (void)state;
  assert_int_equal(tw.version_number(), TW_VERSION_NUMBER);
  assert_string_equal(tw.version_string(), TW_VERSION_STRING);
  assert_int_equal(tw.version_number() / 10000, TW_VERSION_MAJOR);
}

static void missing_library_fails_cleanly(void **state) {
  tw_dlopen_api other;
  (void)state;
  assert_int_equal(tw_dlopen_load(&other, "/nonexistent/libtrainwatch.so.0"), -1);
  assert_null(other.handle);
  assert_null(other.session_run);
  assert_non_null(strstr(other.error, "/nonexistent/libtrainwatch.so.0"));
  assert_int_equal(tw_dlopen_load(&other, NULL), -1);
  assert_string_equal(other.error, "path is NULL");
}

static void library_without_the_api_is_refused(void **state) {
  tw_dlopen_api other;
  (void)state;
  /* libm is always there and has no tw_* symbol. */
  assert_int_equal(tw_dlopen_load(&other, "libm.so.6"), -1);
  assert_null(other.handle);
  assert_non_null(strstr(other.error, "no symbol tw_version_number"));
}

static void errors_come_back_through_dlsym(void **state) {
  tw_hook *hook = (tw_hook *)0x1;
  (void)state;
  assert_int_equal(tw.stop_at_step_hook_create(&hook, TW_UNSET, TW_UNSET), TW_INVALID_ARGUMENT);
  assert_ptr_equal(hook, (tw_hook *)0x1); /* out-param untouched */
  assert_string_equal(tw.last_error_message(), "One of num_steps or last_step must be specified.");
  assert_string_equal(tw.status_name(TW_NAN_LOSS), "TW_NAN_LOSS");
  assert_int_equal(tw.options_create(NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw.session_run(NULL, NULL, 0, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_int_not_equal(strlen(tw.last_error_message()), 0);
}

/* ---------------------------------------------------------------------------------------------- */
/* The parity scenario (tests/parity/README.md)                                                   */
/* ---------------------------------------------------------------------------------------------- */

#define MAX_LINES 64
typedef struct trace {
  char lines[MAX_LINES][128];
  int n;
  int overflow;
} trace;

/* Called from callbacks: never asserts there (a cmocka failure longjmps, which must not cross the
 * library's frames); an overflow is asserted after the scenario. */
static void trace_add(trace *t, const char *format, ...) {
  va_list args;
  if (t->n == MAX_LINES) {
    t->overflow = 1;
    return;
  }
  va_start(args, format);
  vsnprintf(t->lines[t->n++], sizeof(t->lines[0]), format, args);
  va_end(args);
}

/* Numbers as the scenario prints them: integral values in decimal, NaN as "nan". */
static const char *number(char *buf, size_t size, double v) {
  if (isnan(v))
    snprintf(buf, size, "nan");
  else
    snprintf(buf, size, "%.0f", v);
  return buf;
}

static const char *weights(char *buf, size_t size, const float w[4]) {
  char a[4][16];
  snprintf(buf, size, "%s,%s,%s,%s", number(a[0], 16, w[0]), number(a[1], 16, w[1]), number(a[2], 16, w[2]),
           number(a[3], 16, w[3]));
  return buf;
}

/* The counting hook. */
static tw_status count_begin(void *u, tw_session *s) {
  (void)s;
  trace_add(u, "begin");
  return TW_OK;
}
static tw_status count_after_create_session(void *u, tw_session *s) {
  const int64_t step = tw.session_global_step(s);
  trace_add(u, "after_create_session global_step=%lld", (long long)step);
  return TW_OK;
}
static tw_status count_before_run(void *u, tw_run_context *ctx) {
  tw_status st;
  trace_add(u, "before_run");
  if ((st = tw.run_context_request_fetch(ctx, "loss")) != TW_OK) return st;
  return tw.run_context_request_fetch(ctx, "global_step");
}
static tw_status count_after_run(void *u, tw_run_context *ctx) {
  tw_tensor loss, step;
  char buf[32];
  tw_status st;
  tw_tensor_init(&loss);
  tw_tensor_init(&step);
  if ((st = tw.run_context_get_result(&loss, ctx, "loss")) != TW_OK) return st;
  if ((st = tw.run_context_get_result(&step, ctx, "global_step")) != TW_OK) return st;
  if (loss.dtype != TW_FLOAT32 || step.dtype != TW_INT64) return tw.set_error(TW_INTERNAL, "unexpected dtypes");
  trace_add(u, "after_run loss=%s global_step=%lld", number(buf, sizeof(buf), *(const float *)loss.data),
            (long long)*(const int64_t *)step.data);
  return TW_OK;
}
static tw_status count_end(void *u, tw_session *s) {
  const int64_t step = tw.session_global_step(s);
  trace_add(u, "end global_step=%lld", (long long)step);
  return TW_OK;
}
static void count_on_error(void *u, tw_session *s, tw_status error) {
  (void)s;
  trace_add(u, "on_error %s", tw.status_name(error));
}

static tw_hook *counting_hook(trace *t) {
  tw_hook_callbacks cb;
  tw_hook *hook = NULL;
  memset(&cb, 0, sizeof(cb));
  cb.struct_size = sizeof(cb);
  cb.begin = count_begin;
  cb.after_create_session = count_after_create_session;
  cb.before_run = count_before_run;
  cb.after_run = count_after_run;
  cb.end = count_end;
  cb.on_error = count_on_error;
  assert_int_equal(tw.hook_create(&hook, "counter", &cb, t), TW_OK);
  return hook;
}

/* The model: w += x on every step, loss = sum(w). */
typedef struct model {
  float w[4];
  trace *trace;
} model;

static tw_status train_step(void *u, tw_step_context *ctx) {
  model *m = u;
  tw_tensor x, loss;
  float sum = 0.0f;
  char buf[32];
  tw_status st;
  tw_tensor_init(&x);
  if ((st = tw.step_context_get_feed(&x, ctx, "x")) != TW_OK) return st;
  trace_add(m->trace, "step global_step=%lld x=%s", (long long)tw.step_context_global_step(ctx),
            number(buf, sizeof(buf), *(const float *)x.data));
  for (int i = 0; i < 4; ++i) {
    m->w[i] += *(const float *)x.data;
    sum += m->w[i];
  }
  tw_tensor_init(&loss);
  loss.name = "loss";
  loss.dtype = TW_FLOAT32;
  loss.data = &sum;
  return tw.step_context_publish_copy(ctx, &loss);
}

static tw_options *model_options(model *m, const char *checkpoint_dir) {
  static const int64_t shape[1] = {4};
  tw_options *opts = NULL;
  tw_tensor var;
  assert_int_equal(tw.options_create(&opts), TW_OK);
  tw_tensor_init(&var);
  var.name = "w";
  var.dtype = TW_FLOAT32;
  var.data = m->w;
  var.ndim = 1;
  var.shape = shape;
  assert_int_equal(tw.options_add_variable(opts, &var), TW_OK);
  if (checkpoint_dir != NULL) {
    assert_int_equal(tw.options_set_string(opts, TW_OPT_CHECKPOINT_DIR, checkpoint_dir), TW_OK);
  }
  return opts;
}

static tw_session *open_session(tw_options *opts, tw_hook **hooks, size_t n) {
  tw_session *session = NULL;
  assert_int_equal(tw.monitored_session_create(&session, opts, hooks, n), TW_OK);
  for (size_t i = 0; i < n; ++i) tw.hook_destroy(hooks[i]); /* the session holds its own references */
  tw.options_destroy(opts);
  return session;
}

static tw_status run_with_x(tw_session *session, model *m, float value) {
  static const char *const name = "x";
  tw_tensor x;
  tw_status st;
  tw_tensor_init(&x);
  x.name = name;
  x.dtype = TW_FLOAT32;
  x.data = &value;
  st = tw.session_run(session, &x, 1, train_step, m);
  trace_add(m->trace, "run %s", tw.status_name(st));
  return st;
}

static void finish(tw_session *session, model *m) {
  char buf[64];
  trace_add(m->trace, "close %s", tw.status_name(tw.session_close(session)));
  assert_int_equal(tw.session_destroy(session), TW_OK);
  trace_add(m->trace, "w=%s", weights(buf, sizeof(buf), m->w));
}

static void phase_train(trace *t, const char *dir) {
  model m = {{0, 0, 0, 0}, t};
  tw_options *opts = model_options(&m, dir);
  tw_hook *hooks[3];
  tw_session *session;
  int64_t step = -1;
  char latest[512];
  assert_int_equal(tw.options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 2), TW_OK);
  assert_int_equal(tw.options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, 0), TW_OK);
  hooks[0] = counting_hook(t);
  assert_int_equal(tw.stop_at_step_hook_create(&hooks[1], TW_UNSET, 5), TW_OK);
  assert_int_equal(tw.checkpoint_saver_hook_create(&hooks[2], dir, opts, NULL, 0), TW_OK);
  session = open_session(opts, hooks, 3);
  while (!tw.session_should_stop(session)) assert_int_equal(run_with_x(session, &m, 1.0f), TW_OK);
  step = tw.session_global_step(session);
  trace_add(t, "global_step=%lld", (long long)step);
  finish(session, &m);
  assert_int_equal(tw.latest_checkpoint(latest, sizeof(latest), dir), TW_OK);
  trace_add(t, "latest_checkpoint=%s", strrchr(latest, '/') + 1);
}

static void phase_nan(trace *t) {
  model m = {{0, 0, 0, 0}, t};
  tw_hook *hooks[2];
  tw_session *session;
  hooks[0] = counting_hook(t);
  assert_int_equal(tw.nan_tensor_hook_create(&hooks[1], "loss", 1), TW_OK);
  session = open_session(model_options(&m, NULL), hooks, 2);
  assert_int_equal(run_with_x(session, &m, 1.0f), TW_OK);
  assert_int_equal(run_with_x(session, &m, 1.0f), TW_OK);
  assert_int_equal(run_with_x(session, &m, NAN), TW_NAN_LOSS);
  assert_non_null(strstr(tw.last_error_message(), "NaN loss during training."));
  assert_int_equal(run_with_x(session, &m, 1.0f), TW_FAILED_PRECONDITION);
  finish(session, &m);
}

static void phase_restore(trace *t, const char *dir) {
  model m = {{0, 0, 0, 0}, t};
  tw_hook *hooks[2];
  tw_session *session;
  char buf[64];
  hooks[0] = counting_hook(t);
  assert_int_equal(tw.stop_at_step_hook_create(&hooks[1], TW_UNSET, 6), TW_OK);
  session = open_session(model_options(&m, dir), hooks, 2);
  trace_add(t, "restored w=%s", weights(buf, sizeof(buf), m.w));
  while (!tw.session_should_stop(session)) assert_int_equal(run_with_x(session, &m, 1.0f), TW_OK);
  finish(session, &m);
}

/* The MonitoredTrainingSession phases: TF's defaults but for the checkpoint frequency (every 3 steps)
 * and no summaries or step-count logging, so that only the checkpoint saver runs besides `hooks`. */
static tw_session *open_training_session(model *m, const char *dir, trace *t, int64_t last_step) {
  tw_options *opts = model_options(m, dir);
  tw_hook *hooks[2];
  tw_session *session = NULL;
  assert_int_equal(tw.options_set_int64(opts, TW_OPT_IS_CHIEF, 1), TW_OK);
  assert_int_equal(tw.options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 3), TW_OK);
  assert_int_equal(tw.options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(tw.options_set_int64(opts, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 0), TW_OK);
  hooks[0] = counting_hook(t);
  assert_int_equal(tw.stop_at_step_hook_create(&hooks[1], TW_UNSET, last_step), TW_OK);
  assert_int_equal(tw.monitored_training_session_create(&session, opts, hooks, 2, NULL, 0), TW_OK);
  for (size_t i = 0; i < 2; ++i) tw.hook_destroy(hooks[i]);
  tw.options_destroy(opts);
  return session;
}

static void phase_training_session(trace *t, const char *dir, int64_t last_step) {
  model m = {{0, 0, 0, 0}, t};
  tw_session *session = open_training_session(&m, dir, t, last_step);
  char latest[512];
  while (!tw.session_should_stop(session)) assert_int_equal(run_with_x(session, &m, 1.0f), TW_OK);
  finish(session, &m);
  assert_int_equal(tw.latest_checkpoint(latest, sizeof(latest), dir), TW_OK);
  trace_add(t, "latest=%s", strrchr(latest, '/') + 1);
}

/* Reads section `name` of the expected file ("[name]" up to the next section; '#' comments and blank
 * lines skipped) and compares it line by line with the trace. */
static void assert_matches_expected(const trace *t, const char *name) {
  FILE *f = fopen(g_expected, "r");
  char line[256], header[64];
  int in_section = 0, i = 0;
  assert_false(t->overflow);
  assert_non_null(f);
  snprintf(header, sizeof(header), "[%s]", name);
  while (fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '\0' || line[0] == '#') continue;
    if (line[0] == '[') {
      in_section = strcmp(line, header) == 0;
      continue;
    }
    if (!in_section) continue;
    if (i >= t->n) fail_msg("[%s] trace ends before expected line %d: '%s'", name, i + 1, line);
    if (strcmp(line, t->lines[i]) != 0) {
      fail_msg("[%s] line %d: expected '%s', got '%s'", name, i + 1, line, t->lines[i]);
    }
    ++i;
  }
  fclose(f);
  assert_true(i > 0); /* the section exists */
  if (i != t->n) fail_msg("[%s] %d extra trace lines, first: '%s'", name, t->n - i, t->lines[i]);
}

static void parity_scenario(void **state) {
  scratch_dir dir, mts_dir;
  static trace train, nan, restore, mts, mts_resume;
  (void)state;
  memset(&train, 0, sizeof(train));
  memset(&nan, 0, sizeof(nan));
  memset(&restore, 0, sizeof(restore));
  memset(&mts, 0, sizeof(mts));
  memset(&mts_resume, 0, sizeof(mts_resume));
  assert_int_equal(scratch_dir_create(&dir), 0);
  assert_int_equal(scratch_dir_create(&mts_dir), 0);
  tw.set_log_level(TW_LOG_ERROR); /* the scenario's warnings are expected */
  phase_train(&train, dir.path);
  phase_nan(&nan);
  phase_restore(&restore, dir.path);
  phase_training_session(&mts, mts_dir.path, 4);
  phase_training_session(&mts_resume, mts_dir.path, 6);
  tw.set_log_level(TW_LOG_INFO);
  scratch_dir_destroy(&dir);
  scratch_dir_destroy(&mts_dir);
  assert_matches_expected(&train, "train");
  assert_matches_expected(&nan, "nan");
  assert_matches_expected(&restore, "restore");
  assert_matches_expected(&mts, "mts");
  assert_matches_expected(&mts_resume, "mts_resume");
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runtime_version_is_the_headers),
      cmocka_unit_test(missing_library_fails_cleanly),
      cmocka_unit_test(library_without_the_api_is_refused),
      cmocka_unit_test(errors_come_back_through_dlsym),
      cmocka_unit_test(parity_scenario),
  };
  if (argc != 3) {
    fprintf(stderr, "usage: %s LIBTRAINWATCH EXPECTED_TXT\n", argv[0]);
    return 2;
  }
  g_library = argv[1];
  g_expected = argv[2];
  return cmocka_run_group_tests_name("dlopen", tests, load, unload);
}
