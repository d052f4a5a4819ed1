/* Progress of saves and restores (C26; tw_set_progress_sink, trainwatch/checkpoint.h): with every_n_secs 0
 * every chunk is reported, bytes_done never goes back, and the last report of a save and of a restore
 * has bytes_done == bytes_total == the variables' bytes; the default sink writes those reports as INFO
 * lines of the library's logger. Against the public header only; no timing is asserted. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <trainwatch.h>

enum { kMaxReports = 256 };

typedef struct report {
  tw_progress_kind kind;
  char path[512];
  int64_t done, total;
  double secs;
  int finished;
} report;

typedef struct reports {
  report r[kMaxReports];
  int n;
} reports;

static void record(void *user_data, tw_progress_kind kind, const char *path, int64_t bytes_done, int64_t bytes_total,
                   double elapsed_secs, int finished) {
  reports *log = user_data;
  if (log->n == kMaxReports) return;
  report *r = &log->r[log->n++];
  r->kind = kind;
  snprintf(r->path, sizeof(r->path), "%s", path);
  r->done = bytes_done;
  r->total = bytes_total;
  r->secs = elapsed_secs;
  r->finished = finished;
}

/* Three float32 variables of 3 MiB each: with 4 MiB chunks, several chunks in all. */
enum { kVariables = 3, kElements = 3 << 18 };
static const int64_t kBytes = (int64_t)kVariables * kElements * 4;

typedef struct model {
  float *w[kVariables];
  tw_saver *saver;
  char dir[64];
} model;

static int setup(void **state) {
  static const int64_t shape[1] = {kElements};
  static const char *const names[kVariables] = {"a", "b", "c"};
  model *m = calloc(1, sizeof(model));
  tw_tensor vars[kVariables];
  for (int v = 0; v < kVariables; ++v) {
    m->w[v] = malloc(kElements * sizeof(float));
    for (int i = 0; i < kElements; ++i) m->w[v][i] = (float)((i * 7 + v) % 1000) * 0.01f;
    tw_tensor t = TW_TENSOR_INIT;
    t.name = names[v];
    t.dtype = TW_FLOAT32;
    t.ndim = 1;
    t.shape = shape;
    t.data = m->w[v];
    vars[v] = t;
  }
  snprintf(m->dir, sizeof(m->dir), "/tmp/tw_progress_XXXXXX");
  if (mkdtemp(m->dir) == NULL) return -1;
  if (tw_saver_create(&m->saver, vars, kVariables) != TW_OK) return -1;
  *state = m;
  return 0;
}

static int teardown(void **state) {
  model *m = *state;
  char command[128];
  assert_int_equal(tw_set_progress_sink(2.0, NULL, NULL), TW_OK);
  tw_set_log_sink(NULL, NULL);
  tw_saver_destroy(m->saver);
  for (int v = 0; v < kVariables; ++v) free(m->w[v]);
  snprintf(command, sizeof(command), "rm -rf '%s'", m->dir);
  const int removed = system(command) == 0;
  free(m);
  return removed ? 0 : -1;
}

/* The reports of one operation: its kind and path, bytes_done never going back, one finished report,
 * the last, with bytes_done == bytes_total == `bytes`. */
static void assert_one_operation(const reports *log, tw_progress_kind kind, const char *path, int64_t bytes) {
  assert_true(log->n >= 2); /* at least one chunk's report and the final one */
  for (int i = 0; i < log->n; ++i) {
    const report *r = &log->r[i];
    assert_int_equal(r->kind, kind);
    assert_string_equal(r->path, path);
    assert_int_equal(r->total, bytes);
    assert_true(r->done >= 0 && r->done <= r->total);
    assert_true(r->secs >= 0.0);
    if (i > 0) {
      assert_true(r->done >= log->r[i - 1].done);
      assert_true(r->secs >= log->r[i - 1].secs);
    }
    assert_int_equal(r->finished, i == log->n - 1);
  }
  assert_int_equal(log->r[log->n - 1].done, bytes);
}

static void save_and_restore_report_every_chunk_to_the_callback(void **state) {
  model *m = *state;
  reports *log = calloc(1, sizeof(reports));
  char prefix[128];
  const char *path = NULL;
  snprintf(prefix, sizeof(prefix), "%s/model.ckpt", m->dir);
  assert_int_equal(tw_set_progress_sink(0.0, record, log), TW_OK);
  assert_int_equal(tw_saver_save(&path, m->saver, prefix, 7), TW_OK);
  assert_one_operation(log, TW_PROGRESS_SAVE, path, kBytes);

  char saved[512];
  snprintf(saved, sizeof(saved), "%s", path);
  for (int v = 0; v < kVariables; ++v) memset(m->w[v], 0, kElements * sizeof(float));
  log->n = 0;
  assert_int_equal(tw_saver_restore(m->saver, saved), TW_OK);
  assert_one_operation(log, TW_PROGRESS_RESTORE, saved, kBytes);
  assert_true(m->w[2][kElements - 1] == (float)(((kElements - 1) * 7 + 2) % 1000) * 0.01f);

  /* a restore that fails is reported by its status, never as finished */
  log->n = 0;
  char missing[600];
  snprintf(missing, sizeof(missing), "%s/none", m->dir);
  assert_int_equal(tw_saver_restore(m->saver, missing), TW_NOT_FOUND);
  for (int i = 0; i < log->n; ++i) assert_int_equal(log->r[i].finished, 0);
  free(log);
}

/* The default sink: INFO lines of the logger. */
typedef struct lines {
  char text[kMaxReports][640];
  int n;
} lines;

static void keep_line(void *user_data, tw_log_level level, const char *message) {
  lines *l = user_data;
  if (level == TW_LOG_INFO && l->n < kMaxReports) snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", message);
}

/* The lines that start with `what` followed by " checkpoint <path>: ". */
static int count_lines(const lines *l, const char *what, const char *path) {
  char prefix[600];
  int n = 0;
  snprintf(prefix, sizeof(prefix), "%s checkpoint %s: ", what, path);
  for (int i = 0; i < l->n; ++i) n += strncmp(l->text[i], prefix, strlen(prefix)) == 0;
  return n;
}

static void the_default_sink_logs_progress_lines(void **state) {
  model *m = *state;
  lines *l = calloc(1, sizeof(lines));
  char prefix[128], saved[512], expected[640];
  const char *path = NULL;
  snprintf(prefix, sizeof(prefix), "%s/model.ckpt", m->dir);
  tw_set_log_sink(keep_line, l);
  assert_int_equal(tw_set_progress_sink(0.0, NULL, NULL), TW_OK);
  assert_int_equal(tw_saver_save(&path, m->saver, prefix, 8), TW_OK);
  snprintf(saved, sizeof(saved), "%s", path);
  assert_int_equal(tw_saver_restore(m->saver, saved), TW_OK);
  tw_set_log_sink(NULL, NULL);

  assert_true(count_lines(l, "Saving", saved) >= 1);
  assert_int_equal(count_lines(l, "Saved", saved), 1);
  assert_true(count_lines(l, "Restoring", saved) >= 1);
  assert_int_equal(count_lines(l, "Restored", saved), 1);
  /* "Saving checkpoint <path>: 4.2 of 9.4 MB (44%), 250.3 MB/s, 0.0 s left" */
  snprintf(expected, sizeof(expected), "of %.1f MB (", (double)kBytes / 1e6);
  for (int i = 0; i < l->n; ++i) {
    if (strncmp(l->text[i], "Saving ", 7) == 0 || strncmp(l->text[i], "Restoring ", 10) == 0) {
      assert_non_null(strstr(l->text[i], expected));
      assert_non_null(strstr(l->text[i], " MB/s, "));
      assert_non_null(strstr(l->text[i], " s left"));
    }
  }
  snprintf(expected, sizeof(expected), "Saved checkpoint %s: %.1f MB in ", saved, (double)kBytes / 1e6);
  int found = 0;
  for (int i = 0; i < l->n; ++i) found += strncmp(l->text[i], expected, strlen(expected)) == 0;
  assert_int_equal(found, 1);
  free(l);
}

static void bad_every_n_secs_is_refused(void **state) {
  (void)state;
  assert_int_equal(tw_set_progress_sink(-1.0, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "every_n_secs must be a finite number >= 0, not -1");
  assert_int_equal(tw_set_progress_sink(NAN, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_set_progress_sink(INFINITY, NULL, NULL), TW_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(save_and_restore_report_every_chunk_to_the_callback, setup, teardown),
      cmocka_unit_test_setup_teardown(the_default_sink_logs_progress_lines, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_every_n_secs_is_refused, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
