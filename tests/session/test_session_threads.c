/* A session and other threads: a second thread entering run, run_without_hooks, close,
 * set_global_step or destroy while one thread is inside the session is refused with
 * TW_FAILED_PRECONDITION ("one thread at a time") instead of corrupting it; request_stop and
 * should_stop work from any thread (the Coordinator); hooks released while their session runs stay
 * alive until the session lets go. Every interleaving is forced with a gate, never with sleeps, and the
 * ThreadSanitizer build of tools/test runs this file. Against the public header only. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "recorder.h"

/* A counter guarded by a mutex, which threads wait on. */
typedef struct gate {
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  int value;
} gate;

static void gate_init(gate *g) {
  pthread_mutex_init(&g->mutex, NULL);
  pthread_cond_init(&g->changed, NULL);
  g->value = 0;
}
static void gate_destroy(gate *g) {
  pthread_cond_destroy(&g->changed);
  pthread_mutex_destroy(&g->mutex);
}
static void gate_add(gate *g, int n) {
  pthread_mutex_lock(&g->mutex);
  g->value += n;
  pthread_cond_broadcast(&g->changed);
  pthread_mutex_unlock(&g->mutex);
}
static void gate_wait(gate *g, int at_least) {
  pthread_mutex_lock(&g->mutex);
  while (g->value < at_least) pthread_cond_wait(&g->changed, &g->mutex);
  pthread_mutex_unlock(&g->mutex);
}

/* The step of the running thread: says it is inside (entered += 1), then waits for `released`. */
typedef struct parked {
  gate entered;
  gate released;
  int runs;
} parked;

static tw_status parked_step(void *u, tw_step_context *ctx) {
  parked *p = u;
  (void)ctx;
  p->runs++;
  gate_add(&p->entered, 1);
  gate_wait(&p->released, p->runs);
  return TW_OK;
}

static tw_status plain_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

typedef struct intruder {
  tw_session *session;
  parked *parked;
  tw_status run, run_without_hooks, close, set_global_step, destroy;
  char message[512];
  tw_status request_stop;
  int should_stop;
  tw_hook *hook; /* released by the intruder while the session runs, when set */
} intruder;

/* While the owner is parked in its step: every call that needs the session to itself is refused. */
static void *intrude(void *u) {
  intruder *t = u;
  gate_wait(&t->parked->entered, 1);
  t->run = tw_session_run(t->session, NULL, 0, plain_step, NULL);
  snprintf(t->message, sizeof(t->message), "%s", tw_last_error_message());
  t->run_without_hooks = tw_session_run_without_hooks(t->session, NULL, 0, plain_step, NULL);
  t->close = tw_session_close(t->session);
  t->set_global_step = tw_session_set_global_step(t->session, 100);
  t->destroy = tw_session_destroy(t->session);
  gate_add(&t->parked->released, 1);
  return NULL;
}

static void a_second_thread_is_refused(void **state) {
  (void)state;
  parked p;
  intruder t;
  pthread_t thread;
  tw_session *s = NULL;
  int64_t step = -1;
  memset(&p, 0, sizeof(p));
  memset(&t, 0, sizeof(t));
  gate_init(&p.entered);
  gate_init(&p.released);
  assert_int_equal(tw_monitored_session_create(&s, NULL, NULL, 0), TW_OK);
  t.session = s;
  t.parked = &p;
  assert_int_equal(pthread_create(&thread, NULL, intrude, &t), 0);
  assert_int_equal(tw_session_run(s, NULL, 0, parked_step, &p), TW_OK);
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_int_equal(t.run, TW_FAILED_PRECONDITION);
  assert_non_null(strstr(t.message, "one thread at a time"));
  assert_int_equal(t.run_without_hooks, TW_FAILED_PRECONDITION);
  assert_int_equal(t.close, TW_FAILED_PRECONDITION);
  assert_int_equal(t.set_global_step, TW_FAILED_PRECONDITION);
  assert_int_equal(t.destroy, TW_FAILED_PRECONDITION);
  /* nothing changed: one step ran, the session is open and usable */
  step = tw_session_global_step(s);
  assert_int_equal(step, 1);
  assert_int_equal(tw_session_should_stop(s), 0);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  gate_destroy(&p.entered);
  gate_destroy(&p.released);
}

/* W25 still holds: the owner's own nested run_without_hooks is not "another thread". */
static tw_status nesting_step(void *u, tw_step_context *ctx) {
  return tw_session_run_without_hooks(tw_step_context_session(ctx), NULL, 0, plain_step, u);
}

static void the_owner_may_nest(void **state) {
  (void)state;
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_session_create(&s, NULL, NULL, 0), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, nesting_step, NULL), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* The Coordinator's request_stop from another thread, mid-run: should_stop turns 1 at once, the run
 * finishes with its after_run, and the session is not failed. */
static void *stop_mid_run(void *u) {
  intruder *t = u;
  gate_wait(&t->parked->entered, 1);
  t->request_stop = tw_session_request_stop(t->session);
  t->should_stop = tw_session_should_stop(t->session);
  if (t->hook != NULL) tw_hook_destroy(t->hook); /* the caller's reference, released mid-run */
  gate_add(&t->parked->released, 1);
  return NULL;
}

static void request_stop_from_another_thread(void **state) {
  (void)state;
  event_log log;
  recorder r;
  parked p;
  intruder t;
  pthread_t thread;
  tw_session *s = NULL;
  memset(&p, 0, sizeof(p));
  memset(&t, 0, sizeof(t));
  gate_init(&p.entered);
  gate_init(&p.released);
  log_clear(&log);
  tw_hook *hook = make_recorder(&r, "r", &log);
  assert_non_null(hook);
  assert_int_equal(tw_monitored_session_create(&s, NULL, &hook, 1), TW_OK);
  t.session = s;
  t.parked = &p;
  t.hook = hook; /* the other thread releases our reference while the session runs */
  assert_int_equal(pthread_create(&thread, NULL, stop_mid_run, &t), 0);
  assert_int_equal(tw_session_run(s, NULL, 0, parked_step, &p), TW_OK);
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_int_equal(t.request_stop, TW_OK);
  assert_int_equal(t.should_stop, 1);
  assert_int_equal(tw_session_should_stop(s), 1);
  assert_int_equal(r.calls[PH_AFTER], 1); /* the run in progress finished normally */
  assert_int_equal(r.destroyed, 0);       /* the session still holds the hook */
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(r.calls[PH_END], 1);
  assert_int_equal(r.destroyed, 1);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  gate_destroy(&p.entered);
  gate_destroy(&p.released);
}

/* A training loop on one thread, a Coordinator thread that stops it once it has seen three steps. */
typedef struct loop {
  tw_session *session;
  gate steps;
  tw_status stop_status; /* the coordinator's request_stop, asserted on the test's thread */
} loop;

static tw_status counting_step(void *u, tw_step_context *ctx) {
  (void)ctx;
  gate_add(&((loop *)u)->steps, 1);
  return TW_OK;
}

static void *coordinator(void *u) {
  loop *l = u;
  gate_wait(&l->steps, 3);
  l->stop_status = tw_session_request_stop(l->session);
  return NULL;
}

static void loop_until_another_thread_stops_it(void **state) {
  (void)state;
  event_log log;
  recorder r;
  loop l;
  pthread_t thread;
  l.stop_status = TW_UNKNOWN;
  gate_init(&l.steps);
  log_clear(&log);
  tw_hook *hook = make_recorder(&r, "r", &log);
  assert_int_equal(tw_monitored_session_create(&l.session, NULL, &hook, 1), TW_OK);
  tw_hook_destroy(hook);
  assert_int_equal(pthread_create(&thread, NULL, coordinator, &l), 0);
  while (!tw_session_should_stop(l.session)) {
    assert_int_equal(tw_session_run(l.session, NULL, 0, counting_step, &l), TW_OK);
  }
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_int_equal(l.stop_status, TW_OK);
  assert_true(l.steps.value >= 3);
  assert_int_equal(tw_session_close(l.session), TW_OK);
  assert_int_equal(tw_session_destroy(l.session), TW_OK);
  gate_destroy(&l.steps);
}

/* Hooks released by another thread while their session runs: the last reference goes with the
 * session, whichever thread drops the other. */
typedef struct releaser {
  tw_hook *hooks[2];
  gate *ran;
} releaser;

static void *release_hooks(void *u) {
  releaser *rel = u;
  gate_wait(rel->ran, 1);
  tw_hook_destroy(rel->hooks[0]);
  tw_hook_destroy(rel->hooks[1]);
  return NULL;
}

static tw_status count_runs(void *u, tw_step_context *ctx) {
  (void)ctx;
  gate_add(u, 1);
  return TW_OK;
}

static void hooks_released_while_their_session_runs(void **state) {
  (void)state;
  event_log log;
  recorder a, b;
  gate ran;
  releaser rel;
  pthread_t thread;
  tw_session *s = NULL;
  gate_init(&ran);
  log_clear(&log);
  rel.hooks[0] = make_recorder(&a, "a", &log);
  rel.hooks[1] = make_recorder(&b, "b", &log);
  rel.ran = &ran;
  assert_int_equal(tw_monitored_session_create(&s, NULL, rel.hooks, 2), TW_OK);
  assert_int_equal(pthread_create(&thread, NULL, release_hooks, &rel), 0);
  for (int i = 0; i < 20; ++i) assert_int_equal(tw_session_run(s, NULL, 0, count_runs, &ran), TW_OK);
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_int_equal(a.calls[PH_AFTER], 20);
  assert_int_equal(b.calls[PH_AFTER], 20);
  assert_int_equal(a.destroyed + b.destroyed, 0);
  assert_int_equal(tw_session_destroy(s), TW_OK); /* abandoned open: no end, and the hooks go with it */
  assert_int_equal(a.calls[PH_END], 0);
  assert_int_equal(a.destroyed + b.destroyed, 2);
  gate_destroy(&ran);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_second_thread_is_refused),
      cmocka_unit_test(the_owner_may_nest),
      cmocka_unit_test(request_stop_from_another_thread),
      cmocka_unit_test(loop_until_another_thread_stops_it),
      cmocka_unit_test(hooks_released_while_their_session_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
