/* Misuse that used to free a session under its own feet: tw_session_destroy from inside one of the
 * session's callbacks is refused with TW_FAILED_PRECONDITION and the session stays valid (as
 * tw_session_close is refused there). Against the public header only; the ASan build checks that
 * nothing is used after being freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "recorder.h"

/* What a callback saw when it tried to destroy (and close) its own session. */
typedef struct attempt {
  int tries;
  tw_status destroy_status;
  tw_status close_status;
  char message[512];
} attempt;

/* Destroy, then close (refused inside a run since before). */
static void try_destroy(attempt *a, tw_session *session, int also_close) {
  a->tries++;
  a->destroy_status = tw_session_destroy(session);
  snprintf(a->message, sizeof(a->message), "%s", tw_last_error_message());
  a->close_status = also_close ? tw_session_close(session) : TW_FAILED_PRECONDITION;
}

static void assert_refused(const attempt *a) {
  assert_true(a->tries > 0);
  assert_int_equal(a->destroy_status, TW_FAILED_PRECONDITION);
  assert_non_null(strstr(a->message, "own callback"));
  assert_int_equal(a->close_status, TW_FAILED_PRECONDITION);
}

/* A hook that tries in the phase it is told to. */
typedef struct destroyer {
  enum phase when;
  attempt seen;
  int destroyed;
} destroyer;

static tw_status d_begin(void *u, tw_session *s) {
  destroyer *d = u;
  if (d->when == PH_BEGIN) try_destroy(&d->seen, s, 0);
  return TW_OK;
}
static tw_status d_acs(void *u, tw_session *s) {
  destroyer *d = u;
  if (d->when == PH_ACS) try_destroy(&d->seen, s, 0);
  return TW_OK;
}
static tw_status d_before(void *u, tw_run_context *ctx) {
  destroyer *d = u;
  if (d->when == PH_BEFORE) try_destroy(&d->seen, tw_run_context_session(ctx), 1);
  return TW_OK;
}
static tw_status d_after(void *u, tw_run_context *ctx) {
  destroyer *d = u;
  if (d->when == PH_AFTER) try_destroy(&d->seen, tw_run_context_session(ctx), 1);
  return TW_OK;
}
static tw_status d_end(void *u, tw_session *s) {
  destroyer *d = u;
  if (d->when == PH_END) try_destroy(&d->seen, s, 1);
  return TW_OK;
}
static void d_destroy(void *u) { ((destroyer *)u)->destroyed++; }

static tw_status plain_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

static void destroy_from_hook_phase(enum phase when) {
  static const tw_hook_callbacks table = {
      sizeof(tw_hook_callbacks), d_begin, d_acs, d_before, d_after, d_end, NULL, d_destroy};
  destroyer d;
  tw_hook *hook = NULL;
  tw_session *s = NULL;
  int64_t step = -1;
  memset(&d, 0, sizeof(d));
  d.when = when;
  assert_int_equal(tw_hook_create(&hook, "destroyer", &table, &d), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, NULL, &hook, 1), TW_OK);
  tw_hook_destroy(hook);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  /* the session survived the attempt and still works */
  step = tw_session_global_step(s);
  assert_int_equal(step, 1);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  assert_int_equal(d.destroyed, 0); /* the session still holds the hook */
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_refused(&d.seen);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(d.destroyed, 1);
}

static void destroy_in_begin_is_refused(void **state) {
  (void)state;
  destroy_from_hook_phase(PH_BEGIN);
}
static void destroy_in_after_create_session_is_refused(void **state) {
  (void)state;
  destroy_from_hook_phase(PH_ACS);
}
static void destroy_in_before_run_is_refused(void **state) {
  (void)state;
  destroy_from_hook_phase(PH_BEFORE);
}
static void destroy_in_after_run_is_refused(void **state) {
  (void)state;
  destroy_from_hook_phase(PH_AFTER);
}
static void destroy_in_end_is_refused(void **state) {
  (void)state;
  destroy_from_hook_phase(PH_END);
}

/* The step, and a run_without_hooks nested in it (W25), cannot destroy the session either. */
static tw_status destroying_step(void *u, tw_step_context *ctx) {
  try_destroy(u, tw_step_context_session(ctx), 1);
  return TW_OK;
}
static tw_status step_nesting_a_destroy(void *u, tw_step_context *ctx) {
  return tw_session_run_without_hooks(tw_step_context_session(ctx), NULL, 0, destroying_step, u);
}

static void destroy_in_the_step_is_refused(void **state) {
  (void)state;
  attempt a, nested;
  tw_session *s = NULL;
  memset(&a, 0, sizeof(a));
  memset(&nested, 0, sizeof(nested));
  assert_int_equal(tw_monitored_session_create(&s, NULL, NULL, 0), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, destroying_step, &a), TW_OK);
  assert_refused(&a);
  assert_int_equal(tw_session_run(s, NULL, 0, step_nesting_a_destroy, &nested), TW_OK);
  assert_refused(&nested);
  memset(&a, 0, sizeof(a));
  assert_int_equal(tw_session_run_without_hooks(s, NULL, 0, destroying_step, &a), TW_OK);
  assert_refused(&a);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* The chief's init function (Scaffold.init_fn) runs during creation. */
static tw_status destroying_init(void *u, tw_session *session) {
  try_destroy(u, session, 0);
  return TW_OK;
}

static void destroy_in_the_init_fn_is_refused(void **state) {
  (void)state;
  attempt a;
  tw_options *opts = NULL;
  tw_session *s = NULL;
  memset(&a, 0, sizeof(a));
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_init_fn(opts, destroying_init, &a, NULL), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, opts, NULL, 0), TW_OK);
  tw_options_destroy(opts);
  assert_int_equal(a.tries, 1);
  assert_refused(&a);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void destroy_null_and_twice_closed(void **state) {
  (void)state;
  tw_session *s = NULL;
  assert_int_equal(tw_session_destroy(NULL), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, NULL, NULL, 0), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK); /* a closed session is freed as usual */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(destroy_in_begin_is_refused),       cmocka_unit_test(destroy_in_after_create_session_is_refused),
      cmocka_unit_test(destroy_in_before_run_is_refused),  cmocka_unit_test(destroy_in_after_run_is_refused),
      cmocka_unit_test(destroy_in_end_is_refused),         cmocka_unit_test(destroy_in_the_step_is_refused),
      cmocka_unit_test(destroy_in_the_init_fn_is_refused), cmocka_unit_test(destroy_null_and_twice_closed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
