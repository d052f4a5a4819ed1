/* What the hook tests share: a log sink that keeps the lines, a step function that publishes a
 * schedule of values, temporary directories and event files read back (CRCs checked by the reader).
 * Written only against the public header. */
#ifndef TW_TESTS_HOOK_TEST_UTIL_H
#define TW_TESTS_HOOK_TEST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trainwatch.h>

/* ---- log capture ---- */

#define MAX_LINES 64
typedef struct captured_log {
  char lines[MAX_LINES][2048];
  tw_log_level levels[MAX_LINES];
  int count;
} captured_log;

static captured_log g_captured;

static inline void capture_line(void *u, tw_log_level level, const char *message) {
  (void)u;
  if (g_captured.count < MAX_LINES) {
    g_captured.levels[g_captured.count] = level;
    snprintf(g_captured.lines[g_captured.count++], sizeof(g_captured.lines[0]), "%s", message);
  }
}
static inline void start_capture(void) {
  g_captured.count = 0;
  tw_set_log_sink(capture_line, NULL);
}
static inline void stop_capture(void) { tw_set_log_sink(NULL, NULL); }

/* Lines that start with `prefix`. */
static inline int count_lines_starting(const char *prefix) {
  int n = 0;
  for (int i = 0; i < g_captured.count; ++i) n += strncmp(g_captured.lines[i], prefix, strlen(prefix)) == 0;
  return n;
}
/* The i-th line that starts with `prefix`, or NULL. */
static inline const char *line_starting(const char *prefix, int which) {
  for (int i = 0; i < g_captured.count; ++i) {
    if (strncmp(g_captured.lines[i], prefix, strlen(prefix)) == 0 && which-- == 0) return g_captured.lines[i];
  }
  return NULL;
}
static inline int ends_with(const char *text, const char *suffix) {
  size_t n = strlen(text), m = strlen(suffix);
  return n >= m && strcmp(text + n - m, suffix) == 0;
}

/* ---- a step that publishes values ---- */

/* Every run publishes "loss" (a float scalar: loss[min(run, 7)]), "w" (4 floats) and, when set,
 * "summaries/loss" and "summaries/w" with the same values, plus "other". */
typedef struct publisher {
  float loss[8];
  float w[4];
  int runs;
  int with_summaries;
} publisher;

static inline tw_status publish_values(void *u, tw_step_context *ctx) {
  static const int64_t shape4[1] = {4};
  publisher *p = u;
  tw_tensor t = TW_TENSOR_INIT;
  const int i = p->runs < 8 ? p->runs : 7;
  tw_status st;
  p->runs++;
  t.dtype = TW_FLOAT32;
  t.name = "loss";
  t.data = &p->loss[i];
  if ((st = tw_step_context_publish(ctx, &t)) != TW_OK) return st;
  if (p->with_summaries) {
    t.name = "summaries/loss";
    if ((st = tw_step_context_publish(ctx, &t)) != TW_OK) return st;
    t.name = "other";
    if ((st = tw_step_context_publish(ctx, &t)) != TW_OK) return st;
  }
  t.ndim = 1;
  t.shape = shape4;
  t.data = p->w;
  t.name = "w";
  if ((st = tw_step_context_publish(ctx, &t)) != TW_OK) return st;
  if (p->with_summaries) {
    t.name = "summaries/w";
    if ((st = tw_step_context_publish(ctx, &t)) != TW_OK) return st;
  }
  return TW_OK;
}

static inline publisher make_publisher(void) {
  publisher p;
  memset(&p, 0, sizeof(p));
  for (int i = 0; i < 8; ++i) p.loss[i] = 0.5f / (float)(i + 1);
  p.w[0] = 1.0f;
  p.w[1] = 2.5f;
  p.w[2] = -3.0f;
  p.w[3] = 0.0f;
  return p;
}

/* Opens a MonitoredSession over hooks (the caller's references are released) with opts. */
static inline tw_session *open_session(tw_hook **hooks, size_t n, const tw_options *opts) {
  tw_session *s = NULL;
  if (tw_monitored_session_create(&s, opts, hooks, n) != TW_OK) {
    fprintf(stderr, "session: %s\n", tw_last_error_message());
    return NULL;
  }
  for (size_t i = 0; i < n; ++i) tw_hook_destroy(hooks[i]);
  return s;
}

/* ---- directories and event files ---- */

/* The path of the `which`-th (sorted) events.out.tfevents.* file in dir, or 0 if none. */
static inline int find_event_file(const char *dir, int which, char *out, size_t size) {
  struct dirent **entries = NULL;
  int n = scandir(dir, &entries, NULL, alphasort), found = 0;
  for (int i = 0; i < n; ++i) {
    if (!found && strncmp(entries[i]->d_name, "events.out.tfevents.", 20) == 0 && which-- == 0) {
      found = (size_t)snprintf(out, size, "%s/%s", dir, entries[i]->d_name) < size;
    }
    free(entries[i]);
  }
  free(entries);
  return found;
}

/* One value of an event file, flattened for assertions. */
typedef struct read_value {
  int kind; /* tw_event_kind of its event */
  int64_t step;
  char tag[64];   /* summary values; "" otherwise */
  int value_kind; /* tw_summary_value_kind */
  float scalar;
  double histogram_num;
  int session_log_status;
} read_value;

/* Reads every event of `path` (the reader verifies both CRCs of every record); one entry per summary
 * value, and one per non-summary event. Returns the count, or -1 on a read error. */
static inline int read_events(const char *path, read_value *out, int capacity) {
  tw_event_reader *reader = NULL;
  tw_event event = TW_EVENT_INIT;
  tw_status st;
  int n = 0;
  if (tw_event_reader_open(&reader, path) != TW_OK) return -1;
  while ((st = tw_event_reader_next(&event, reader)) == TW_OK) {
    if (event.kind == TW_EVENT_SUMMARY) {
      for (size_t i = 0; i < event.value_count && n < capacity; ++i, ++n) {
        memset(&out[n], 0, sizeof(out[n]));
        out[n].kind = event.kind;
        out[n].step = event.step;
        snprintf(out[n].tag, sizeof(out[n].tag), "%s", event.values[i]->tag);
        out[n].value_kind = event.values[i]->kind;
        out[n].scalar = event.values[i]->simple_value;
        if (event.values[i]->histogram != NULL) out[n].histogram_num = event.values[i]->histogram->num;
      }
    } else if (n < capacity) {
      memset(&out[n], 0, sizeof(out[n]));
      out[n].kind = event.kind;
      out[n].step = event.step;
      out[n].session_log_status = event.session_log_status;
      ++n;
    }
  }
  tw_event_reader_destroy(reader);
  return st == TW_OUT_OF_RANGE ? n : -1;
}

#endif /* TW_TESTS_HOOK_TEST_UTIL_H */
