/* FinalOpsHook (B43): the final step at end(), its values copied past close, its feeds, TF's warning on
 * an end of input, and no final step after a failed run. Against the public header only. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hook_test_util.h"

typedef struct final_state {
  float accuracy; /* published by the final step (borrowed: the hook must copy it) */
  int64_t steps_seen;
  int calls;
  int destroyed;
  tw_status result;
} final_state;

static tw_status final_step(void *u, tw_step_context *ctx) {
  final_state *f = u;
  tw_tensor t = TW_TENSOR_INIT, scale = TW_TENSOR_INIT;
  tw_status st;
  f->calls++;
  if (f->result != TW_OK) return tw_set_error(f->result, "input exhausted");
  if ((st = tw_step_context_get_feed(&scale, ctx, "scale")) != TW_OK) return st;
  f->accuracy = 0.75f * *(const float *)scale.data;
  f->steps_seen = tw_step_context_global_step(ctx);
  t.name = "accuracy";
  t.dtype = TW_FLOAT32;
  t.data = &f->accuracy;
  if ((st = tw_step_context_publish(ctx, &t)) != TW_OK) return st;
  t.name = "steps";
  t.dtype = TW_INT64;
  t.data = &f->steps_seen;
  return tw_step_context_publish_copy(ctx, &t);
}
static void final_destroy(void *u) { ((final_state *)u)->destroyed++; }

static tw_status plain_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

typedef struct {
  final_state f;
} final_block;

static tw_hook *final_hook(final_block *b) {
  static float scale = 2.0f;
  tw_tensor feed = TW_TENSOR_INIT;
  tw_hook *hook = NULL;
  feed.name = "scale";
  feed.dtype = TW_FLOAT32;
  feed.data = &scale;
  assert_int_equal(tw_final_ops_hook_create(&hook, &feed, 1, final_step, &b->f, final_destroy), TW_OK);
  scale = 100.0f; /* the feed was copied at creation */
  return hook;
}

static void B43_values_available_after_close(void **state) {
  (void)state;
  final_block b;
  tw_tensor value = TW_TENSOR_INIT;
  memset(&b, 0, sizeof(b));
  tw_hook *hook = final_hook(&b);
  tw_hook *keep = hook;
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_session_create(&s, NULL, &hook, 1), TW_OK); /* keep our reference */
  assert_int_equal(tw_final_ops_hook_value_count(keep), 0);
  assert_int_equal(tw_final_ops_hook_get_value(&value, keep, "accuracy"), TW_FAILED_PRECONDITION); /* TF's None */
  for (int i = 0; i < 3; ++i) assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  assert_int_equal(b.f.calls, 0);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(b.f.calls, 1);
  b.f.accuracy = -1.0f; /* the hook holds a copy */
  assert_int_equal(tw_final_ops_hook_value_count(keep), 2);
  assert_int_equal(tw_final_ops_hook_get_value(&value, keep, "accuracy"), TW_OK);
  assert_int_equal(value.dtype, TW_FLOAT32);
  assert_true(*(const float *)value.data == 1.5f); /* 0.75 x the copied feed 2.0 */
  assert_int_equal(tw_final_ops_hook_value_at(&value, keep, 1), TW_OK);
  assert_string_equal(value.name, "steps");
  assert_int_equal(value.ndim, 0);
  assert_int_equal(((const int64_t *)value.data)[0], 3); /* global step untouched by the final run */
  assert_int_equal(tw_final_ops_hook_value_at(&value, keep, 2), TW_OUT_OF_RANGE);
  assert_int_equal(tw_final_ops_hook_get_value(&value, keep, "nope"), TW_NOT_FOUND);
  tw_hook_destroy(keep);
  assert_int_equal(b.f.destroyed, 1);
}

static void B43_end_of_input_warns_then_returns_the_status(void **state) {
  (void)state;
  final_block b;
  memset(&b, 0, sizeof(b));
  b.f.result = TW_OUT_OF_RANGE;
  tw_hook *hook = final_hook(&b);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, plain_step, NULL), TW_OK);
  start_capture();
  assert_int_equal(tw_session_close(s), TW_OUT_OF_RANGE);
  stop_capture();
  assert_int_equal(g_captured.count, 1);
  assert_int_equal(g_captured.levels[0], TW_LOG_WARNING);
  assert_true(strncmp(g_captured.lines[0],
                      "An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. This "
                      "typically means the Ops running by the FinalOpsHook have a dependency back to some input "
                      "source, which should not happen.",
                      190) == 0);
  assert_true(ends_with(g_captured.lines[0], "which ends OutOfRangeError/StopIteration. Please fix that."));
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static tw_status failing_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return tw_set_error(TW_INTERNAL, "boom");
}

static void B43_not_run_when_end_is_skipped(void **state) {
  (void)state;
  final_block b;
  tw_tensor value = TW_TENSOR_INIT;
  memset(&b, 0, sizeof(b));
  tw_hook *hook = final_hook(&b);
  tw_hook *keep = hook;
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_session_create(&s, NULL, &hook, 1), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, failing_step, NULL), TW_INTERNAL);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(b.f.calls, 0);
  assert_int_equal(tw_final_ops_hook_value_at(&value, keep, 0), TW_FAILED_PRECONDITION);
  tw_hook_destroy(keep);
}

static void value_accessors_reject_other_hooks_and_bad_arguments(void **state) {
  (void)state;
  tw_hook *other = NULL;
  tw_tensor value = TW_TENSOR_INIT;
  assert_int_equal(tw_stop_at_step_hook_create(&other, 5, TW_UNSET), TW_OK);
  assert_int_equal(tw_final_ops_hook_get_value(&value, other, "x"), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "hook 'StopAtStepHook' is not a FinalOpsHook");
  assert_int_equal(tw_final_ops_hook_value_count(other), 0);
  assert_int_equal(tw_final_ops_hook_value_count(NULL), 0);
  assert_int_equal(tw_final_ops_hook_get_value(&value, NULL, "x"), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_final_ops_hook_get_value(&value, other, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_final_ops_hook_value_at(NULL, other, 0), TW_INVALID_ARGUMENT);
  tw_hook_destroy(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B43_values_available_after_close),
      cmocka_unit_test(B43_end_of_input_warns_then_returns_the_status),
      cmocka_unit_test(B43_not_run_when_end_is_skipped),
      cmocka_unit_test(value_accessors_reject_other_hooks_and_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
