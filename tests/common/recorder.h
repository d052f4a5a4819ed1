/* A hook that records its calls into a shared log, and a step function that does the same: what the
 * lifecycle tests assert on. Written only against the public header. */
#ifndef TW_TESTS_RECORDER_H
#define TW_TESTS_RECORDER_H

#include <stdio.h>
#include <string.h>

#include <trainwatch.h>

typedef struct event_log {
  char text[8192];
} event_log;

static inline void log_event(event_log *log, const char *event) {
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof(log->text) - used, "%s%s", used ? " " : "", event);
}

static inline void log_clear(event_log *log) { log->text[0] = '\0'; }

enum phase { PH_NONE, PH_BEGIN, PH_ACS, PH_BEFORE, PH_AFTER, PH_END };

typedef struct recorder {
  const char *name;
  event_log *log;
  /* behaviour */
  enum phase fail_phase; /* fail in this phase … */
  int fail_on_call;      /* … on this call of it (1-based; 0 = every call) */
  tw_status fail_status;
  const char *fetch;     /* requested in every before_run */
  const char *feed_name; /* fed in every before_run */
  float feed_value;
  int stop_in_before; /* request_stop in before_run */
  int stop_in_after;  /* request_stop in after_run */
  /* observations */
  int calls[6];
  int destroyed;
  tw_status last_error;
  int results_seen;   /* result count in the last after_run */
  double last_result; /* first result as double, if any */
  int64_t shape_storage[1];
} recorder;

static inline tw_status rec_maybe_fail(recorder *r, enum phase phase, const char *what) {
  char event[128];
  r->calls[phase]++;
  snprintf(event, sizeof(event), "%s.%s", r->name, what);
  log_event(r->log, event);
  if (r->fail_phase == phase && (r->fail_on_call == 0 || r->fail_on_call == r->calls[phase])) {
    return tw_set_error(r->fail_status, "recorder failed on purpose");
  }
  return TW_OK;
}

static inline tw_status rec_begin(void *u, tw_session *s) {
  (void)s;
  return rec_maybe_fail(u, PH_BEGIN, "begin");
}
static inline tw_status rec_acs(void *u, tw_session *s) {
  (void)s;
  return rec_maybe_fail(u, PH_ACS, "acs");
}
static inline tw_status rec_end(void *u, tw_session *s) {
  (void)s;
  return rec_maybe_fail(u, PH_END, "end");
}

static inline tw_status rec_before(void *u, tw_run_context *ctx) {
  recorder *r = u;
  tw_status st = rec_maybe_fail(r, PH_BEFORE, "before");
  if (st != TW_OK) return st;
  if (r->fetch && (st = tw_run_context_request_fetch(ctx, r->fetch)) != TW_OK) return st;
  if (r->feed_name) {
    tw_tensor feed = TW_TENSOR_INIT;
    feed.name = r->feed_name;
    feed.dtype = TW_FLOAT32;
    feed.data = &r->feed_value;
    if ((st = tw_run_context_add_feed(ctx, &feed)) != TW_OK) return st;
  }
  if (r->stop_in_before) return tw_run_context_request_stop(ctx);
  return TW_OK;
}

static inline double tensor_as_double(const tw_tensor *t) {
  switch (t->dtype) {
    case TW_FLOAT32: return *(const float *)t->data;
    case TW_FLOAT64: return *(const double *)t->data;
    case TW_INT64: return (double)*(const int64_t *)t->data;
    case TW_INT32: return *(const int32_t *)t->data;
    default: return -12345.0;
  }
}

static inline tw_status rec_after(void *u, tw_run_context *ctx) {
  recorder *r = u;
  tw_status st = rec_maybe_fail(r, PH_AFTER, "after");
  if (st != TW_OK) return st;
  r->results_seen = (int)tw_run_context_result_count(ctx);
  if (r->results_seen > 0) {
    tw_tensor t = TW_TENSOR_INIT;
    if (tw_run_context_result_at(&t, ctx, 0) == TW_OK) r->last_result = tensor_as_double(&t);
  }
  if (r->stop_in_after) return tw_run_context_request_stop(ctx);
  return TW_OK;
}

static inline void rec_on_error(void *u, tw_session *s, tw_status error) {
  recorder *r = u;
  char event[128];
  (void)s;
  r->last_error = error;
  snprintf(event, sizeof(event), "%s.error(%s)", r->name, tw_status_name(error));
  log_event(r->log, event);
}

static inline void rec_destroy(void *u) { ((recorder *)u)->destroyed++; }

static inline tw_hook *make_recorder(recorder *r, const char *name, event_log *log) {
  static const tw_hook_callbacks recorder_callbacks = {
      sizeof(tw_hook_callbacks), rec_begin, rec_acs, rec_before, rec_after, rec_end, rec_on_error, rec_destroy};
  tw_hook *hook = NULL;
  memset(r, 0, sizeof(*r));
  r->name = name;
  r->log = log;
  if (tw_hook_create(&hook, name, &recorder_callbacks, r) != TW_OK) return NULL;
  return hook;
}

/* A step that logs "step", publishes loss = 0.5 (copied), and returns what `result` says. */
typedef struct step_plan {
  event_log *log;
  tw_status result; /* returned every call… */
  int fail_on_call; /* …or only on this call (1-based), TW_OK otherwise */
  int calls;
  float loss;
} step_plan;

static inline tw_status recording_step(void *u, tw_step_context *ctx) {
  step_plan *p = u;
  tw_tensor loss = TW_TENSOR_INIT;
  p->calls++;
  log_event(p->log, "step");
  loss.name = "loss";
  loss.dtype = TW_FLOAT32;
  loss.data = &p->loss;
  if (tw_step_context_publish_copy(ctx, &loss) != TW_OK) return TW_INTERNAL;
  if (p->fail_on_call == 0 || p->fail_on_call == p->calls) {
    if (p->result != TW_OK) return tw_set_error(p->result, "step failed on purpose");
  }
  return TW_OK;
}

#endif /* TW_TESTS_RECORDER_H */
