/* ProfilerHook (B45–B47): trace steps (never the first run), timeline-<step>.json files checked by
 * Python's json module (check_timeline.py), TF's log line, configuration errors. Public header only. */
#define _POSIX_C_SOURCE 200809L
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "hook_test_util.h"
#include "period_options.h"
#include "recorder.h"

static tw_status plain_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

static void B45_configuration_errors(void **state) {
  (void)state;
  tw_hook *hook = (tw_hook *)0x1;
  assert_int_equal(profiler_hook(&hook, 10, 5.0, "/tmp"), TW_INVALID_ARGUMENT); /* T3 */
  assert_string_equal(tw_last_error_message(), "Can not provide both every_secs and every_steps.");
  assert_int_equal(profiler_hook(&hook, TW_UNSET, TW_UNSET_SECS, "/tmp"), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Either every_secs or every_steps should be provided.");
  assert_int_equal(profiler_hook(NULL, 10, TW_UNSET_SECS, "/tmp"), TW_INVALID_ARGUMENT);
  assert_ptr_equal(hook, (tw_hook *)0x1);
}

static int file_exists(const char *dir, int64_t step) {
  char path[512];
  snprintf(path, sizeof(path), "%s/timeline-%lld.json", dir, (long long)step);
  return access(path, F_OK) == 0;
}

/* Runs check_timeline.py on dir/timeline-<step>.json; 0 when the trace is as expected. */
static int check_timeline_of(const char *dir, int64_t step, const char *profiler) {
  char command[2048];
  const char *python = getenv("TW_PYTHON"), *script = getenv("TW_CHECK_TIMELINE");
  assert_non_null(python);
  assert_non_null(script);
  snprintf(command, sizeof(command),
           "'%s' '%s' '%s/timeline-%lld.json' a.before_run %s.before_run b.before_run step "
           "a.after_run %s.after_run b.after_run",
           python, script, dir, (long long)step, profiler, profiler);
  return system(command);
}

static int check_timeline(const char *dir, int64_t step) { return check_timeline_of(dir, step, "ProfilerHook"); }

static void B47_traces_every_n_steps_but_not_the_first_run(void **state) {
  (void)state;
  scratch_dir scratch;
  char expected[600];
  event_log log = {{0}};
  recorder a, b;
  tw_hook *hooks[3];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  hooks[0] = make_recorder(&a, "a", &log);
  assert_int_equal(profiler_hook(&hooks[1], 3, TW_UNSET_SECS, dir), TW_OK);
  hooks[2] = make_recorder(&b, "b", &log);
  tw_session *s = open_session(hooks, 3, NULL);
  start_capture();
  for (int i = 0; i < 8; ++i) assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  stop_capture();
  /* the first run primes the timer at 0; the runs ending at steps 3 and 6 are traced */
  for (int64_t step = 0; step <= 9; ++step) assert_int_equal(file_exists(dir, step), step == 3 || step == 6);
  assert_int_equal(count_lines_starting("Saving timeline for "), 2);
  snprintf(expected, sizeof(expected), "Saving timeline for 3 into '%s/timeline-3.json'.", dir);
  assert_string_equal(line_starting("Saving timeline for ", 0), expected);
  assert_int_equal(check_timeline(dir, 3), 0);
  assert_int_equal(check_timeline(dir, 6), 0);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&scratch);
}

static void B47_secs_mode_and_failed_traced_run(void **state) {
  (void)state;
  scratch_dir scratch;
  event_log log = {{0}};
  recorder a;
  tw_hook *hooks[2];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  hooks[0] = make_recorder(&a, "a", &log);
  assert_int_equal(profiler_hook(&hooks[1], TW_UNSET, 0.0, dir), TW_OK); /* every new step */
  tw_session *s = open_session(hooks, 2, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK); /* primes */
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK); /* traced: timeline-2 */
  assert_true(file_exists(dir, 2));
  assert_false(file_exists(dir, 1));
  a.fail_phase = PH_AFTER; /* the next traced run fails: no file */
  a.fail_status = TW_INTERNAL;
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_INTERNAL);
  assert_false(file_exists(dir, 3));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&scratch);
}

/* A wrapper that decides itself which runs to trace (a binding's subclass running TF's after_run, H33):
 * it calls the built-in after_run only in the runs of `picked` (0-based run indexes). */
typedef struct picky {
  tw_hook *inner;
  int run;
  const int *picked;
  int n_picked;
} picky;

static tw_status picky_after_run(void *u, tw_run_context *ctx) {
  picky *p = u;
  const int run = p->run++;
  for (int i = 0; i < p->n_picked; ++i) {
    if (p->picked[i] == run) return tw_hook_call_after_run(p->inner, ctx);
  }
  return TW_OK;
}

/* The first run primes the built-in (nothing recorded); every later run is recorded, and a run whose
 * built-in after_run was called is written, whole, from its first before_run. */
static void B47_H33_a_wrapper_calling_after_run_on_its_own_runs_gets_their_traces(void **state) {
  (void)state;
  scratch_dir scratch;
  event_log log = {{0}};
  recorder a, b;
  tw_hook *hooks[3];
  const int picked[] = {0, 3, 5};
  picky p = {NULL, 0, picked, 3};
  tw_hook_callbacks cb = TW_HOOK_CALLBACKS_INIT;
  cb.after_run = picky_after_run;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  hooks[0] = make_recorder(&a, "a", &log);
  assert_int_equal(profiler_hook(&p.inner, 1, TW_UNSET_SECS, dir), TW_OK); /* its own timer: every run */
  assert_int_equal(tw_hook_wrap(&hooks[1], "Picky", p.inner, &cb, &p), TW_OK);
  tw_hook_destroy(p.inner);
  hooks[2] = make_recorder(&b, "b", &log);
  tw_session *s = open_session(hooks, 3, NULL);
  for (int i = 0; i < 7; ++i) assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  /* runs 3 and 5 end at steps 4 and 6; run 0 only primed */
  for (int64_t step = 0; step <= 8; ++step) assert_int_equal(file_exists(dir, step), step == 4 || step == 6);
  assert_int_equal(check_timeline_of(dir, 4, "Picky"), 0);
  assert_int_equal(check_timeline_of(dir, 6, "Picky"), 0);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&scratch);
}

static void unwritable_directory_fails_begin(void **state) {
  (void)state;
  tw_hook *hook = NULL;
  tw_session *s = NULL;
  assert_int_equal(profiler_hook(&hook, 1, TW_UNSET_SECS, "/proc/no/such/dir"), TW_OK);
  assert_int_not_equal(tw_monitored_session_create(&s, NULL, &hook, 1), TW_OK);
  assert_null(s);
  tw_hook_destroy(hook);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B45_configuration_errors),
      cmocka_unit_test(B47_traces_every_n_steps_but_not_the_first_run),
      cmocka_unit_test(B47_secs_mode_and_failed_traced_run),
      cmocka_unit_test(B47_H33_a_wrapper_calling_after_run_on_its_own_runs_gets_their_traces),
      cmocka_unit_test(unwritable_directory_fails_begin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
