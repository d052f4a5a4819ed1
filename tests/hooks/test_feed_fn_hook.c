/* FeedFnHook (B44) with the feed conflict rules H22/H23. Against the public header only. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hook_test_util.h"
#include "recorder.h"

/* Feeds "x" = batch (a float the callback bumps each call), from a reused array. */
typedef struct feeder {
  float batch;
  tw_tensor feeds[1];
  size_t count;
  int calls;
  int destroyed;
  tw_status fail;
  int null_array;
} feeder;

static tw_status feed(void *u, const tw_tensor **feeds, size_t *n) {
  feeder *f = u;
  f->calls++;
  if (f->fail != TW_OK) return tw_set_error(f->fail, "no more batches");
  f->batch += 1.0f;
  f->feeds[0] = (tw_tensor)TW_TENSOR_INIT;
  f->feeds[0].name = "x";
  f->feeds[0].dtype = TW_FLOAT32;
  f->feeds[0].data = &f->batch;
  *feeds = f->null_array ? NULL : f->feeds;
  *n = f->count;
  return TW_OK;
}
static void feeder_destroy(void *u) { ((feeder *)u)->destroyed++; }

static float g_seen;
static tw_status read_x(void *u, tw_step_context *ctx) {
  tw_tensor x = TW_TENSOR_INIT;
  (void)u;
  tw_status st = tw_step_context_get_feed(&x, ctx, "x");
  if (st != TW_OK) return st;
  g_seen = *(const float *)x.data;
  return TW_OK;
}

static void B44_feeds_every_run(void **state) {
  (void)state;
  feeder f = {0};
  tw_hook *hook = NULL;
  f.count = 1;
  assert_int_equal(tw_feed_fn_hook_create(&hook, feed, &f, feeder_destroy), TW_OK);
  assert_string_equal(tw_hook_name(hook), "FeedFnHook");
  tw_session *s = open_session(&hook, 1, NULL);
  for (int i = 1; i <= 3; ++i) {
    assert_int_equal(tw_session_run(s, NULL, 0, read_x, NULL), TW_OK);
    assert_true(g_seen == (float)i);
  }
  assert_int_equal(f.calls, 3);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(f.destroyed, 1);
}

static void H22_two_hooks_feeding_one_name(void **state) {
  (void)state;
  event_log log = {{0}};
  recorder r;
  feeder f = {0};
  tw_hook *hooks[2];
  f.count = 1;
  hooks[0] = make_recorder(&r, "a", &log);
  r.feed_name = "x";
  assert_int_equal(tw_feed_fn_hook_create(&hooks[1], feed, &f, NULL), TW_OK);
  tw_session *s = open_session(hooks, 2, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, read_x, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(),
                      "FeedFnHook feed 0: Same tensor is fed by two hooks. Conflict(s): ['x']");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void H23_hook_and_user_feeding_one_name(void **state) {
  (void)state;
  feeder f = {0};
  float mine = 9.0f;
  tw_tensor user = TW_TENSOR_INIT;
  tw_hook *hook = NULL;
  f.count = 1;
  user.name = "x";
  user.dtype = TW_FLOAT32;
  user.data = &mine;
  assert_int_equal(tw_feed_fn_hook_create(&hook, feed, &f, NULL), TW_OK);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, &user, 1, read_x, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Same tensor is fed by a SessionRunHook and user. Conflict(s): ['x']");
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static void callback_errors_fail_the_run(void **state) {
  (void)state;
  feeder f = {0};
  tw_hook *hook = NULL;
  f.fail = TW_OUT_OF_RANGE; /* end of input: a clean end, as from the step */
  assert_int_equal(tw_feed_fn_hook_create(&hook, feed, &f, NULL), TW_OK);
  tw_session *s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, read_x, NULL), TW_OUT_OF_RANGE);
  assert_string_equal(tw_last_error_message(), "FeedFnHook feed_fn: no more batches");
  assert_int_equal(tw_session_destroy(s), TW_OK);

  f.fail = TW_OK;
  f.count = 1;
  f.null_array = 1;
  assert_int_equal(tw_feed_fn_hook_create(&hook, feed, &f, NULL), TW_OK);
  s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, read_x, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "FeedFnHook feed_fn: returned 1 feeds but a NULL array");
  assert_int_equal(tw_session_destroy(s), TW_OK);

  f.null_array = 0;
  f.count = 0; /* no feeds: the step finds no "x" */
  assert_int_equal(tw_feed_fn_hook_create(&hook, feed, &f, NULL), TW_OK);
  s = open_session(&hook, 1, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, read_x, NULL), TW_NOT_FOUND);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(B44_feeds_every_run),
      cmocka_unit_test(H22_two_hooks_feeding_one_name),
      cmocka_unit_test(H23_hook_and_user_feeding_one_name),
      cmocka_unit_test(callback_errors_fail_the_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
