/* SummarySaverHook (B35–B40): configuration, START + summaries on the first run at the real step, the
 * later trigger steps, scalars and histograms of published values picked by pattern, flush at end, the
 * shared per-directory writer, histograms only of the values asked for (B49); event files decoded with
 * CRCs checked. Against the public header only. */
#define _POSIX_C_SOURCE 200809L
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hook_test_util.h"
#include "period_options.h"

static const char *const kSummaries[] = {"summaries/*"};

static tw_status create_saver(tw_hook **out, int64_t steps, double secs, const char *dir, int histograms,
                              const char *const *names, size_t n, tw_summary_writer *writer) {
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, steps), TW_OK);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_EVERY_N_SECS, secs), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_OUTPUT_DIR, dir), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_HISTOGRAMS, histograms), TW_OK);
  const tw_status st = tw_summary_saver_hook_create(out, names, n, opts, writer);
  tw_options_destroy(opts);
  return st;
}

static void B35_configuration_errors(void **state) {
  (void)state;
  tw_hook *hook = (tw_hook *)0x1;
  assert_int_equal(create_saver(&hook, 10, TW_UNSET_SECS, NULL, 1, kSummaries, 1, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "At least one of output_dir or summary_writer must be provided.");
  assert_int_equal(create_saver(&hook, 10, 60.0, "/tmp/x", 1, kSummaries, 1, NULL), TW_INVALID_ARGUMENT); /* T3 */
  assert_string_equal(tw_last_error_message(), "Can not provide both every_secs and every_steps.");
  assert_int_equal(create_saver(&hook, TW_UNSET, TW_UNSET_SECS, "/tmp/x", 1, kSummaries, 1, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Either every_secs or every_steps should be provided.");
  assert_int_equal(create_saver(&hook, 10, TW_UNSET_SECS, "/tmp/x", 1, NULL, 2, NULL), TW_INVALID_ARGUMENT);
  assert_ptr_equal(hook, (tw_hook *)0x1);
}

static void B38_B39_trigger_steps_start_and_values(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[512];
  read_value v[64];
  publisher p = make_publisher();
  tw_hook *hook = NULL;
  p.with_summaries = 1;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  assert_int_equal(create_saver(&hook, 3, TW_UNSET_SECS, dir, 1, kSummaries, 1, NULL), TW_OK);
  tw_session *s = open_session(&hook, 1, NULL);
  for (int i = 0; i < 7; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK); /* B40: flushed here */
  assert_true(find_event_file(dir, 0, path, sizeof(path)));
  const int n = read_events(path, v, 64);
  /* file_version; START at 1 (the real step after the first run); summaries at 1, 4, 7 (2 values each) */
  assert_int_equal(n, 1 + 1 + 3 * 2);
  assert_int_equal(v[0].kind, TW_EVENT_FILE_VERSION);
  assert_int_equal(v[1].kind, TW_EVENT_SESSION_LOG);
  assert_int_equal(v[1].session_log_status, TW_SESSION_LOG_START);
  assert_int_equal(v[1].step, 1);
  const int64_t steps[3] = {1, 4, 7};
  const int runs[3] = {0, 3, 6};
  for (int k = 0; k < 3; ++k) {
    read_value *scalar = &v[2 + 2 * k], *histogram = &v[3 + 2 * k];
    assert_int_equal(scalar->step, steps[k]);
    assert_string_equal(scalar->tag, "summaries/loss");
    assert_int_equal(scalar->value_kind, TW_SUMMARY_VALUE_SCALAR);
    assert_true(scalar->scalar == p.loss[runs[k]]);
    assert_int_equal(histogram->step, steps[k]);
    assert_string_equal(histogram->tag, "summaries/w");
    assert_int_equal(histogram->value_kind, TW_SUMMARY_VALUE_HISTOGRAM);
    assert_true(histogram->histogram_num == 4.0);
  }
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&scratch);
}

static void B36_every_value_by_default_histograms_off(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[512];
  read_value v[16];
  publisher p = make_publisher();
  tw_hook *hook = NULL;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  assert_int_equal(create_saver(&hook, 100, TW_UNSET_SECS, dir, 0, NULL, 0, NULL), TW_OK);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_true(find_event_file(dir, 0, path, sizeof(path)));
  assert_int_equal(read_events(path, v, 16), 3); /* file_version, START, "loss" ("w" has 4 elements) */
  assert_string_equal(v[2].tag, "loss");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&scratch);
}

static void B38_secs_mode_and_shared_writer(void **state) {
  (void)state;
  scratch_dir scratch;
  read_value v[32];
  publisher p = make_publisher();
  tw_summary_writer *writer = NULL;
  tw_hook *hooks[2];
  p.with_summaries = 1;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  assert_int_equal(tw_summary_writer_open(&writer, dir), TW_OK);
  /* 1e9 s: only the first run; the step counter shares the writer through the cache */
  assert_int_equal(create_saver(&hooks[0], TW_UNSET, 1e9, NULL, 1, kSummaries, 1, writer), TW_OK);
  assert_int_equal(step_counter_hook(&hooks[1], 2, TW_UNSET_SECS, dir, NULL), TW_OK);
  tw_session *s = open_session(hooks, 2, NULL);
  for (int i = 0; i < 3; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  const int n = read_events(tw_summary_writer_path(writer), v, 32);
  assert_int_equal(n, 1 + 1 + 2 + 1); /* version, START, 2 values at step 1, global_step/sec at 3 */
  assert_string_equal(v[4].tag, "global_step/sec");
  assert_int_equal(v[4].step, 3);
  tw_summary_writer_destroy(writer);
  scratch_dir_destroy(&scratch);
}

static void nan_histogram_and_missing_name_fail_the_run(void **state) {
  (void)state;
  static const char *const exact[] = {"summaries/w", "not_published"};
  scratch_dir scratch;
  publisher p = make_publisher();
  tw_hook *hook = NULL;
  p.with_summaries = 1;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  p.w[2] = NAN;
  assert_int_equal(create_saver(&hook, 1, TW_UNSET_SECS, dir, 1, kSummaries, 1, NULL), TW_OK);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Nan in summary histogram for: summaries/w");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(create_saver(&hook, 1, TW_UNSET_SECS, dir, 1, exact, 2, NULL), TW_OK);
  s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_NOT_FOUND);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  scratch_dir_destroy(&scratch);
}

/* Creates the hook over every value ("*") with TW_OPT_SUMMARY_HISTOGRAM_NAMES = names (NULL: unset). */
static tw_status create_saver_naming_histograms(tw_hook **out, const char *dir, const char *names) {
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 100), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_OUTPUT_DIR, dir), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_SUMMARY_HISTOGRAM_NAMES, names), TW_OK);
  const tw_status st = tw_summary_saver_hook_create(out, NULL, 0, opts, NULL);
  tw_options_destroy(opts);
  return st;
}

/* Runs one step publishing "loss", "summaries/loss", "other", "w", "summaries/w" under `hook` and reads
 * the event file back; returns how many events it holds. */
static int one_summary_run(tw_hook *hook, const char *dir, read_value *v, int capacity) {
  char path[512];
  publisher p = make_publisher();
  p.with_summaries = 1;
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_true(find_event_file(dir, 0, path, sizeof(path)));
  return read_events(path, v, capacity);
}

/* B49: summarising every value writes scalars only; histograms are for the values asked for by name or
 * pattern, each value once although both lists request it. */
static void B49_histograms_only_when_asked_for(void **state) {
  (void)state;
  scratch_dir scratch;
  read_value v[16];
  tw_hook *hook = NULL;
  const char *dir = scratch.path;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  assert_int_equal(create_saver_naming_histograms(&hook, dir, NULL), TW_OK);
  assert_int_equal(one_summary_run(hook, dir, v, 16), 2 + 3); /* version, START, 3 scalars */
  for (int i = 2; i < 5; ++i) assert_int_equal(v[i].value_kind, TW_SUMMARY_VALUE_SCALAR);
  scratch_dir_destroy(&scratch);

  assert_int_equal(scratch_dir_create(&scratch), 0);
  assert_int_equal(create_saver_naming_histograms(&hook, dir, "w,summaries/*"), TW_OK);
  assert_int_equal(one_summary_run(hook, dir, v, 16), 2 + 3 + 2);
  int histograms = 0;
  for (int i = 2; i < 7; ++i) {
    if (v[i].value_kind != TW_SUMMARY_VALUE_HISTOGRAM) continue;
    ++histograms;
    assert_true(strcmp(v[i].tag, "w") == 0 || strcmp(v[i].tag, "summaries/w") == 0);
    assert_true(v[i].histogram_num == 4.0);
  }
  assert_int_equal(histograms, 2);
  scratch_dir_destroy(&scratch);
}

static void B49_an_empty_histogram_name_is_refused(void **state) {
  (void)state;
  tw_hook *hook = (tw_hook *)0x1;
  assert_int_equal(create_saver_naming_histograms(&hook, "/tmp/x", "w,,b"), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "TW_OPT_SUMMARY_HISTOGRAM_NAMES \"w,,b\": an entry is empty");
  assert_int_equal(create_saver_naming_histograms(&hook, "/tmp/x", ""), TW_INVALID_ARGUMENT);
  assert_ptr_equal(hook, (tw_hook *)0x1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B35_configuration_errors),
      cmocka_unit_test(B38_B39_trigger_steps_start_and_values),
      cmocka_unit_test(B36_every_value_by_default_histograms_off),
      cmocka_unit_test(B38_secs_mode_and_shared_writer),
      cmocka_unit_test(nan_histogram_and_missing_name_fail_the_run),
      cmocka_unit_test(B49_histograms_only_when_asked_for),
      cmocka_unit_test(B49_an_empty_histogram_name_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
