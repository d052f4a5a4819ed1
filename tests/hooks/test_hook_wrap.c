/* tw_hook_wrap: TF's "subclass a built-in hook" by composition (docs/ARCHITECTURE.md). A wrapper's callbacks run in
 * place of the inner hook's; tw_hook_call_* is super(). Cites the behaviours the built-ins keep or skip
 * (B31–B33 NanTensorHook, H9–H14 ordering and errors). Against the public header only. */
#define _DEFAULT_SOURCE /* scandir */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hook_test_util.h"
#include "recorder.h"

/* A NanTensorHook "subclass" overriding after_run: its custom action records the loss it saw (TF's
 * run_values.results) and, when call_super is set, then runs super().after_run. */
typedef struct nan_subclass {
  tw_hook *inner;
  int call_super;
  int after_runs;
  int custom_actions; /* runs whose loss was NaN, seen by the custom action */
  float last_loss;
  tw_status super_status;
  int destroyed;
} nan_subclass;

static tw_status nan_subclass_after_run(void *u, tw_run_context *ctx) {
  nan_subclass *sub = u;
  tw_tensor loss = TW_TENSOR_INIT;
  sub->after_runs++;
  if (tw_run_context_get_result(&loss, ctx, "loss") != TW_OK) return TW_INTERNAL;
  sub->last_loss = *(const float *)loss.data;
  if (isnan(sub->last_loss)) sub->custom_actions++;
  if (!sub->call_super) return TW_OK;
  sub->super_status = tw_hook_call_after_run(sub->inner, ctx);
  return sub->super_status;
}

static void nan_subclass_destroy(void *u) { ((nan_subclass *)u)->destroyed++; }

static tw_hook *wrap_nan_hook(nan_subclass *sub, int fail_on_nan_loss) {
  tw_hook_callbacks cb;
  tw_hook *inner = NULL, *wrapper = NULL;
  memset(&cb, 0, sizeof(cb));
  cb.struct_size = sizeof(cb);
  cb.after_run = nan_subclass_after_run;
  cb.destroy = nan_subclass_destroy;
  assert_int_equal(tw_nan_tensor_hook_create(&inner, "loss", fail_on_nan_loss), TW_OK);
  sub->inner = inner;
  assert_int_equal(tw_hook_wrap(&wrapper, "NanTensorHookCustom", inner, &cb, sub), TW_OK);
  return wrapper; /* the caller keeps `inner` (sub->inner) and releases it */
}

/* B33 through super(): the custom action runs, then the built-in check fails the run with NaN loss. */
static void test_nan_subclass_calling_super_fails_on_nan_B33(void **state) {
  (void)state;
  nan_subclass sub;
  memset(&sub, 0, sizeof(sub));
  sub.call_super = 1;
  publisher p = make_publisher();
  p.loss[1] = NAN;
  tw_hook *hook = wrap_nan_hook(&sub, 1);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_non_null(s);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(sub.super_status, TW_OK);
  assert_true(sub.last_loss == p.loss[0]); /* the subclass's after_run sees the built-in's fetch */
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_NAN_LOSS);
  assert_non_null(strstr(tw_last_error_message(), "hook 'NanTensorHookCustom' after_run: NaN loss during training."));
  assert_int_equal(sub.after_runs, 2);
  assert_int_equal(sub.custom_actions, 1);
  assert_int_equal(sub.super_status, TW_NAN_LOSS);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(sub.destroyed, 1);
  tw_hook_destroy(sub.inner);
}

/* The seed's pattern: an after_run that does not call super replaces the built-in action — the NaN is
 * seen by the custom action only, and training goes on. */
static void test_nan_subclass_without_super_runs_custom_action_only(void **state) {
  (void)state;
  nan_subclass sub;
  memset(&sub, 0, sizeof(sub));
  publisher p = make_publisher();
  p.loss[1] = NAN;
  tw_hook *hook = wrap_nan_hook(&sub, 1);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_non_null(s);
  for (int i = 0; i < 3; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(sub.after_runs, 3);
  assert_int_equal(sub.custom_actions, 1);
  assert_false(tw_session_should_stop(s));
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(sub.inner);
  assert_int_equal(sub.destroyed, 1);
}

/* A table of NULL slots is the inner hook: B32/B33 unchanged (fail_on_nan_loss=False: stop, no error). */
static void test_wrapper_overriding_nothing_is_the_inner_hook_B34(void **state) {
  (void)state;
  tw_hook_callbacks cb;
  tw_hook *inner = NULL, *wrapper = NULL;
  publisher p = make_publisher();
  p.loss[1] = NAN;
  memset(&cb, 0, sizeof(cb));
  cb.struct_size = sizeof(cb);
  assert_int_equal(tw_nan_tensor_hook_create(&inner, "loss", 0), TW_OK);
  assert_int_equal(tw_hook_wrap(&wrapper, NULL, inner, &cb, NULL), TW_OK);
  assert_string_equal(tw_hook_name(wrapper), tw_hook_name(inner));
  tw_hook_destroy(inner); /* the wrapper keeps its own reference */
  tw_session *s = open_session(&wrapper, 1, NULL);
  assert_non_null(s);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_false(tw_session_should_stop(s));
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_true(tw_session_should_stop(s)); /* the inner's request_stop acted for the wrapper */
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* super().before_run returns the built-in's SessionRunArgs: after it the wrapper's requests list
 * "loss"; the wrapper's own request joins it, and after_run reads both results. */
typedef struct args_probe {
  tw_hook *inner;
  size_t count_before_super, count_after_super;
  char first_request[32];
  size_t results;
  float loss;
  float w0;
} args_probe;

static tw_status probe_before_run(void *u, tw_run_context *ctx) {
  args_probe *probe = u;
  const char *name = NULL;
  tw_status st;
  probe->count_before_super = tw_run_context_request_count(ctx);
  if ((st = tw_hook_call_before_run(probe->inner, ctx)) != TW_OK) return st;
  probe->count_after_super = tw_run_context_request_count(ctx);
  if ((st = tw_run_context_request_at(&name, ctx, 0)) != TW_OK) return st;
  snprintf(probe->first_request, sizeof(probe->first_request), "%s", name);
  return tw_run_context_request_fetch(ctx, "w");
}

static tw_status probe_after_run(void *u, tw_run_context *ctx) {
  args_probe *probe = u;
  tw_tensor t = TW_TENSOR_INIT;
  probe->results = tw_run_context_result_count(ctx);
  if (tw_run_context_result_at(&t, ctx, 0) != TW_OK) return TW_INTERNAL;
  probe->loss = *(const float *)t.data;
  if (tw_run_context_get_result(&t, ctx, "w") != TW_OK) return TW_INTERNAL;
  probe->w0 = ((const float *)t.data)[0];
  return tw_hook_call_after_run(probe->inner, ctx);
}

static void test_super_before_run_returns_the_builtin_fetch_B31(void **state) {
  (void)state;
  args_probe probe;
  tw_hook_callbacks cb;
  tw_hook *wrapper = NULL;
  const char *name = NULL;
  memset(&probe, 0, sizeof(probe));
  memset(&cb, 0, sizeof(cb));
  cb.struct_size = sizeof(cb);
  cb.before_run = probe_before_run;
  cb.after_run = probe_after_run;
  assert_int_equal(tw_nan_tensor_hook_create(&probe.inner, "loss", 1), TW_OK);
  assert_int_equal(tw_hook_wrap(&wrapper, "probe", probe.inner, &cb, &probe), TW_OK);
  publisher p = make_publisher();
  tw_session *s = open_session(&wrapper, 1, NULL);
  assert_non_null(s);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(probe.count_before_super, 0);
  assert_int_equal(probe.count_after_super, 1);
  assert_string_equal(probe.first_request, "loss");
  assert_int_equal(probe.results, 2);
  assert_true(probe.loss == p.loss[0]);
  assert_true(probe.w0 == p.w[0]);
  /* Outside a run there are no requests. */
  assert_int_equal(tw_run_context_request_count(NULL), 0);
  assert_int_equal(tw_run_context_request_at(&name, NULL, 0), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(probe.inner);
}

/* tw_hook_call_* from the wrong place: FAILED_PRECONDITION with a message, and the run goes on. */
typedef struct misuse {
  tw_hook *inner; /* the wrapper's inner */
  tw_hook *other; /* some other hook */
  tw_status from_plain, wrong_kind, wrong_inner, wrong_ctx_session;
} misuse;

static tw_status misuse_plain_after_run(void *u, tw_run_context *ctx) {
  misuse *m = u;
  m->from_plain = tw_hook_call_after_run(m->inner, ctx);
  return TW_OK;
}

static tw_status misuse_wrapper_before_run(void *u, tw_run_context *ctx) {
  misuse *m = u;
  m->wrong_kind = tw_hook_call_after_run(m->inner, ctx);
  m->wrong_inner = tw_hook_call_before_run(m->other, ctx);
  m->wrong_ctx_session = tw_hook_call_end(m->inner, tw_run_context_session(ctx));
  return tw_hook_call_before_run(m->inner, ctx);
}

static void test_hook_call_from_the_wrong_place_is_failed_precondition(void **state) {
  (void)state;
  misuse m;
  tw_hook_callbacks plain_cb, wrap_cb;
  tw_hook *hooks[2];
  memset(&m, 0, sizeof(m));
  memset(&plain_cb, 0, sizeof(plain_cb));
  memset(&wrap_cb, 0, sizeof(wrap_cb));
  plain_cb.struct_size = wrap_cb.struct_size = sizeof(tw_hook_callbacks);
  plain_cb.after_run = misuse_plain_after_run;
  wrap_cb.before_run = misuse_wrapper_before_run;
  assert_int_equal(tw_nan_tensor_hook_create(&m.inner, "loss", 1), TW_OK);
  assert_int_equal(tw_stop_at_step_hook_create(&m.other, 100, TW_UNSET), TW_OK);
  assert_int_equal(tw_hook_create(&hooks[0], "plain", &plain_cb, &m), TW_OK);
  assert_int_equal(tw_hook_wrap(&hooks[1], "wrapper", m.inner, &wrap_cb, &m), TW_OK);
  publisher p = make_publisher();
  tw_session *s = open_session(hooks, 2, NULL);
  assert_non_null(s);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(m.from_plain, TW_FAILED_PRECONDITION);
  assert_int_equal(m.wrong_kind, TW_FAILED_PRECONDITION);
  assert_int_equal(m.wrong_inner, TW_FAILED_PRECONDITION);
  assert_int_equal(m.wrong_ctx_session, TW_FAILED_PRECONDITION);
  /* Outside any callback. */
  assert_int_equal(tw_hook_call_end(m.inner, s), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "tw_hook_call_end: only valid inside the end callback"));
  assert_int_equal(tw_hook_call_begin(NULL, s), TW_INVALID_ARGUMENT);
  tw_hook_call_on_error(m.inner, s, TW_INTERNAL); /* does nothing, never crashes */
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(m.inner);
  tw_hook_destroy(m.other);
}

/* A wrapped hook runs through its wrapper only: listing it too, or wrapping it twice, is refused; and
 * it cannot join a second open session while its wrapper is in one. */
static void test_wrapped_hook_belongs_to_its_wrappers_session(void **state) {
  (void)state;
  tw_hook_callbacks cb;
  tw_hook *inner = NULL, *w1 = NULL, *w2 = NULL, *hooks[2];
  tw_session *s = NULL, *t = NULL;
  memset(&cb, 0, sizeof(cb));
  cb.struct_size = sizeof(cb);
  assert_int_equal(tw_nan_tensor_hook_create(&inner, "loss", 1), TW_OK);
  assert_int_equal(tw_hook_wrap(&w1, "w1", inner, &cb, NULL), TW_OK);
  assert_int_equal(tw_hook_wrap(&w2, "w2", inner, &cb, NULL), TW_OK);
  hooks[0] = inner;
  hooks[1] = w1;
  assert_int_equal(tw_monitored_session_create(&s, NULL, hooks, 2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "hooks[1] ('w1') wraps hooks[0] ('NanTensorHook')"));
  hooks[0] = w1;
  hooks[1] = inner;
  assert_int_equal(tw_monitored_session_create(&s, NULL, hooks, 2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "is wrapped by hooks[0] ('w1')"));
  hooks[1] = w2;
  assert_int_equal(tw_monitored_session_create(&s, NULL, hooks, 2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "both wrap hook 'NanTensorHook'"));
  assert_int_equal(tw_monitored_session_create(&s, NULL, &w1, 1), TW_OK);
  assert_int_equal(tw_monitored_session_create(&t, NULL, &inner, 1), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_monitored_session_create(&t, NULL, &w2, 1), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "wraps hook 'NanTensorHook', which already belongs"));
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_monitored_session_create(&t, NULL, &w2, 1), TW_OK); /* free again after close */
  assert_int_equal(tw_session_destroy(t), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(w1);
  tw_hook_destroy(w2);
  tw_hook_destroy(inner);
  assert_int_equal(tw_hook_wrap(&w1, NULL, NULL, &cb, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_hook_wrap(&w1, "", inner, &cb, NULL), TW_INVALID_ARGUMENT);
}

/* A wrapper whose every callback logs "w.<callback>" and then calls super() on its inner recorder —
 * or, with swallow set, returns TW_OK whatever super() returned. */
typedef struct logging_wrapper {
  tw_hook *inner;
  event_log *log;
  int swallow;
  tw_status super_error; /* what the last failing super() returned */
} logging_wrapper;

static tw_status lw_result(logging_wrapper *w, tw_status st) {
  if (st != TW_OK) w->super_error = st;
  return w->swallow ? TW_OK : st;
}
static tw_status lw_begin(void *u, tw_session *s) {
  logging_wrapper *w = u;
  log_event(w->log, "w.begin");
  return lw_result(w, tw_hook_call_begin(w->inner, s));
}
static tw_status lw_acs(void *u, tw_session *s) {
  logging_wrapper *w = u;
  log_event(w->log, "w.acs");
  return lw_result(w, tw_hook_call_after_create_session(w->inner, s));
}
static tw_status lw_before(void *u, tw_run_context *ctx) {
  logging_wrapper *w = u;
  log_event(w->log, "w.before");
  return lw_result(w, tw_hook_call_before_run(w->inner, ctx));
}
static tw_status lw_after(void *u, tw_run_context *ctx) {
  logging_wrapper *w = u;
  log_event(w->log, "w.after");
  return lw_result(w, tw_hook_call_after_run(w->inner, ctx));
}
static tw_status lw_end(void *u, tw_session *s) {
  logging_wrapper *w = u;
  log_event(w->log, "w.end");
  return lw_result(w, tw_hook_call_end(w->inner, s));
}
static void lw_on_error(void *u, tw_session *s, tw_status error) {
  logging_wrapper *w = u;
  log_event(w->log, "w.error");
  tw_hook_call_on_error(w->inner, s, error);
}

static event_log g_order;

/* Session [a, w(i), b]; the caller keeps nothing. */
static tw_session *open_wrapped_between(recorder *a, recorder *i, recorder *b, logging_wrapper *w) {
  static const tw_hook_callbacks table = {
      sizeof(tw_hook_callbacks), lw_begin, lw_acs, lw_before, lw_after, lw_end, lw_on_error, NULL};
  tw_hook *hooks[3], *inner;
  log_clear(&g_order);
  hooks[0] = make_recorder(a, "a", &g_order);
  inner = make_recorder(i, "i", &g_order);
  hooks[2] = make_recorder(b, "b", &g_order);
  w->inner = inner;
  w->log = &g_order;
  assert_int_equal(tw_hook_wrap(&hooks[1], "w", inner, &table, w), TW_OK);
  tw_hook_destroy(inner); /* the wrapper's reference keeps it */
  return open_session(hooks, 3, NULL);
}

/* H6, H8, H9, H12, H17: the wrapper is one hook at its place in the list; super() runs the inner
 * inside the wrapper's callback, so the inner's calls come right after the wrapper's. */
static void test_wrapper_runs_at_its_place_in_tf_order_H6_H9_H12(void **state) {
  (void)state;
  recorder a, i, b;
  logging_wrapper w;
  step_plan plan;
  memset(&w, 0, sizeof(w));
  memset(&plan, 0, sizeof(plan));
  plan.log = &g_order;
  tw_session *s = open_wrapped_between(&a, &i, &b, &w);
  assert_non_null(s);
  assert_int_equal(tw_session_run(s, NULL, 0, recording_step, &plan), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_string_equal(g_order.text,
                      "a.begin w.begin i.begin b.begin a.acs w.acs i.acs b.acs "
                      "a.before w.before i.before b.before step a.after w.after i.after b.after "
                      "a.end w.end i.end b.end");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(i.destroyed, 1);
}

/* H13/H15: the inner's failure comes back to the wrapper; returned, it fails the run (later hooks'
 * after_run skipped, on_error everywhere, the inner hearing it through super()); swallowed, the run
 * goes on as if nothing happened. */
static void test_inner_failure_is_the_wrappers_to_return_or_swallow_H13_H15(void **state) {
  (void)state;
  for (int swallow = 0; swallow < 2; ++swallow) {
    recorder a, i, b;
    logging_wrapper w;
    step_plan plan;
    memset(&w, 0, sizeof(w));
    memset(&plan, 0, sizeof(plan));
    plan.log = &g_order;
    w.swallow = swallow;
    tw_session *s = open_wrapped_between(&a, &i, &b, &w);
    assert_non_null(s);
    i.fail_phase = PH_AFTER;
    i.fail_status = TW_DATA_LOSS;
    log_clear(&g_order);
    const tw_status st = tw_session_run(s, NULL, 0, recording_step, &plan);
    assert_int_equal(w.super_error, TW_DATA_LOSS);
    if (swallow) {
      assert_int_equal(st, TW_OK);
      assert_string_equal(g_order.text, "a.before w.before i.before b.before step a.after w.after i.after b.after");
    } else {
      assert_int_equal(st, TW_DATA_LOSS);
      assert_non_null(
          strstr(tw_last_error_message(), "hook 'w' after_run: hook 'i' after_run: recorder failed on purpose"));
      assert_string_equal(g_order.text,
                          "a.before w.before i.before b.before step a.after w.after i.after "
                          "a.error(TW_DATA_LOSS) w.error i.error(TW_DATA_LOSS) b.error(TW_DATA_LOSS)");
    }
    assert_int_equal(tw_session_destroy(s), TW_OK);
  }
}

/* tw_session_get_output: a published output by name in after_run (TF's run_context.session.run(name));
 * NOT_FOUND names what is missing; FAILED_PRECONDITION before the step and between runs. */
typedef struct output_probe {
  tw_status in_before, missing;
  float in_after;
} output_probe;

static tw_status probe_output_before(void *u, tw_run_context *ctx) {
  output_probe *probe = u;
  tw_tensor t = TW_TENSOR_INIT;
  probe->in_before = tw_session_get_output(&t, tw_run_context_session(ctx), "loss");
  return TW_OK;
}

static tw_status probe_output_after(void *u, tw_run_context *ctx) {
  output_probe *probe = u;
  tw_tensor t = TW_TENSOR_INIT;
  tw_status st = tw_session_get_output(&t, tw_run_context_session(ctx), "loss");
  if (st != TW_OK) return st;
  probe->in_after = *(const float *)t.data;
  probe->missing = tw_session_get_output(&t, tw_run_context_session(ctx), "nope");
  return TW_OK;
}

static void test_get_output_in_after_run_only(void **state) {
  (void)state;
  output_probe probe;
  tw_hook_callbacks cb;
  tw_hook *hook = NULL;
  tw_tensor t = TW_TENSOR_INIT;
  memset(&probe, 0, sizeof(probe));
  memset(&cb, 0, sizeof(cb));
  cb.struct_size = sizeof(cb);
  cb.before_run = probe_output_before;
  cb.after_run = probe_output_after;
  assert_int_equal(tw_hook_create(&hook, "probe", &cb, &probe), TW_OK);
  publisher p = make_publisher();
  tw_session *s = open_session(&hook, 1, NULL);
  assert_non_null(s);
  assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  assert_int_equal(probe.in_before, TW_FAILED_PRECONDITION);
  assert_true(probe.in_after == p.loss[0]);
  assert_int_equal(probe.missing, TW_NOT_FOUND);
  assert_int_equal(tw_session_get_output(&t, s, "loss"), TW_FAILED_PRECONDITION); /* between runs */
  assert_non_null(strstr(tw_last_error_message(), "output 'loss' cannot be read now"));
  assert_int_equal(tw_session_get_output(&t, s, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_session_get_output(&t, NULL, "loss"), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nan_subclass_calling_super_fails_on_nan_B33),
      cmocka_unit_test(test_nan_subclass_without_super_runs_custom_action_only),
      cmocka_unit_test(test_wrapper_overriding_nothing_is_the_inner_hook_B34),
      cmocka_unit_test(test_super_before_run_returns_the_builtin_fetch_B31),
      cmocka_unit_test(test_hook_call_from_the_wrong_place_is_failed_precondition),
      cmocka_unit_test(test_wrapped_hook_belongs_to_its_wrappers_session),
      cmocka_unit_test(test_wrapper_runs_at_its_place_in_tf_order_H6_H9_H12),
      cmocka_unit_test(test_inner_failure_is_the_wrappers_to_return_or_swallow_H13_H15),
      cmocka_unit_test(test_get_output_in_after_run_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
