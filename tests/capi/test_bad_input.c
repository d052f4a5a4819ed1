/* Bad input at every C entry point of the core API: a status and a message naming the problem, never
 * a crash. One row per case: a call, the status it must return, and a phrase its message must hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "recorder.h"

static event_log g_log;
static float g_value = 1.0f;
static int64_t g_shape[2] = {2, 3};
static int64_t g_negative_shape[1] = {-4};

static tw_tensor good_tensor(const char *name) {
  tw_tensor t = TW_TENSOR_INIT;
  t.name = name;
  t.dtype = TW_FLOAT32;
  t.data = &g_value;
  return t;
}

static tw_status ok_step(void *u, tw_step_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

static tw_session *open_session(void) {
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_session_create(&s, NULL, NULL, 0), TW_OK);
  return s;
}

/* ---- the cases ---- */
static tw_status options_create_null_out(void) { return tw_options_create(NULL); }
static tw_status options_set_null(void) { return tw_options_set_int64(NULL, TW_OPT_IS_CHIEF, 1); }
static tw_status options_unknown_key(void) {
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  tw_status st = tw_options_set_int64(o, (tw_option)999, 1);
  tw_options_destroy(o);
  return st;
}
static tw_status options_wrong_type(void) {
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  tw_status st = tw_options_set_double(o, TW_OPT_IS_CHIEF, 1.0);
  tw_options_destroy(o);
  return st;
}
static tw_status options_out_of_range(void) {
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  tw_status st = tw_options_set_int64(o, TW_OPT_IS_CHIEF, 2);
  tw_options_destroy(o);
  return st;
}
static tw_status options_negative_duration(void) {
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  tw_status st = tw_options_set_double(o, TW_OPT_RECOVERY_BACKOFF_SECS, -1.0);
  tw_options_destroy(o);
  return st;
}
static tw_status options_get_null_out(void) {
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  tw_status st = tw_options_get_int64(NULL, o, TW_OPT_IS_CHIEF);
  tw_options_destroy(o);
  return st;
}
static tw_status options_recoverable_ok(void) {
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  tw_status st = tw_options_set_recoverable(o, TW_OUT_OF_RANGE, 1);
  tw_options_destroy(o);
  return st;
}
static tw_status add_variable_with(tw_tensor t) {
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  tw_status st = tw_options_add_variable(o, &t);
  tw_options_destroy(o);
  return st;
}
static tw_status variable_null(void) {
  tw_options *o = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  tw_status st = tw_options_add_variable(o, NULL);
  tw_options_destroy(o);
  return st;
}
static tw_status variable_no_name(void) { return add_variable_with(good_tensor(NULL)); }
static tw_status variable_empty_name(void) { return add_variable_with(good_tensor("")); }
static tw_status variable_reserved_name(void) { return add_variable_with(good_tensor("global_step")); }
static tw_status variable_bad_struct_size(void) {
  tw_tensor t = good_tensor("w");
  t.struct_size = 8;
  return add_variable_with(t);
}
static tw_status variable_bad_dtype(void) {
  tw_tensor t = good_tensor("w");
  t.dtype = 42;
  return add_variable_with(t);
}
static tw_status variable_negative_shape(void) {
  tw_tensor t = good_tensor("w");
  t.ndim = 1;
  t.shape = g_negative_shape;
  return add_variable_with(t);
}
static tw_status variable_null_data(void) {
  tw_tensor t = good_tensor("w");
  t.data = NULL;
  return add_variable_with(t);
}
static tw_status variable_not_contiguous(void) {
  static int64_t strides[2] = {1, 2};
  static float data[6];
  tw_tensor t = good_tensor("w");
  t.data = data;
  t.ndim = 2;
  t.shape = g_shape;
  t.strides = strides;
  return add_variable_with(t);
}
static tw_status variable_duplicate(void) {
  tw_options *o = NULL;
  tw_tensor t = good_tensor("w");
  assert_int_equal(tw_options_create(&o), TW_OK);
  assert_int_equal(tw_options_add_variable(o, &t), TW_OK);
  tw_status st = tw_options_add_variable(o, &t);
  tw_options_destroy(o);
  return st;
}
static tw_status hook_null_out(void) {
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  return tw_hook_create(NULL, "h", &cb, NULL);
}
static tw_status hook_null_name(void) {
  tw_hook *h = NULL;
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  return tw_hook_create(&h, NULL, &cb, NULL);
}
static tw_status hook_empty_name(void) {
  tw_hook *h = NULL;
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  return tw_hook_create(&h, "", &cb, NULL);
}
static tw_status hook_null_callbacks(void) {
  tw_hook *h = NULL;
  return tw_hook_create(&h, "h", NULL, NULL);
}
static tw_status hook_small_struct_size(void) {
  tw_hook *h = NULL;
  tw_hook_callbacks cb = {4, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  return tw_hook_create(&h, "h", &cb, NULL);
}
static tw_status hook_unknown_slots(void) {
  /* a table from a newer header whose extra slot is set */
  struct {
    tw_hook_callbacks known;
    void (*future)(void);
  } table;
  tw_hook *h = NULL;
  memset(&table, 0, sizeof(table));
  table.known.struct_size = sizeof(table);
  table.future = (void (*)(void))ok_step;
  return tw_hook_create(&h, "h", &table.known, NULL);
}
static tw_status session_null_out(void) { return tw_monitored_session_create(NULL, NULL, NULL, 0); }
static tw_status session_null_hook_array(void) {
  tw_session *s = NULL;
  return tw_monitored_session_create(&s, NULL, NULL, 2);
}
static tw_status session_null_hook_entry(void) {
  tw_session *s = NULL;
  tw_hook *hooks[1] = {NULL};
  return tw_monitored_session_create(&s, NULL, hooks, 1);
}
static tw_status session_hook_twice(void) {
  recorder r;
  tw_session *s = NULL;
  tw_hook *h = make_recorder(&r, "twice", &g_log);
  tw_hook *hooks[2] = {h, h};
  tw_status st = tw_monitored_session_create(&s, NULL, hooks, 2);
  tw_hook_destroy(h);
  return st;
}
static tw_status singular_worker(void) {
  tw_options *o = NULL;
  tw_session *s = NULL;
  assert_int_equal(tw_options_create(&o), TW_OK);
  assert_int_equal(tw_options_set_int64(o, TW_OPT_IS_CHIEF, 0), TW_OK);
  tw_status st = tw_singular_monitored_session_create(&s, o, NULL, 0);
  tw_options_destroy(o);
  return st;
}
static tw_status run_null_session(void) { return tw_session_run(NULL, NULL, 0, ok_step, NULL); }
static tw_status run_null_step(void) {
  tw_session *s = open_session();
  tw_status st = tw_session_run(s, NULL, 0, NULL, NULL);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status run_null_feeds(void) {
  tw_session *s = open_session();
  tw_status st = tw_session_run(s, NULL, 3, ok_step, NULL);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status run_feed_without_name(void) {
  tw_session *s = open_session();
  tw_tensor feed = good_tensor(NULL);
  tw_status st = tw_session_run(s, &feed, 1, ok_step, NULL);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status run_duplicate_feeds(void) {
  tw_session *s = open_session();
  tw_tensor feeds[2];
  feeds[0] = good_tensor("x");
  feeds[1] = good_tensor("x");
  tw_status st = tw_session_run(s, feeds, 2, ok_step, NULL);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status run_malformed_feed(void) {
  tw_session *s = open_session();
  tw_tensor feed = good_tensor("x");
  feed.struct_size = 0;
  tw_status st = tw_session_run(s, &feed, 1, ok_step, NULL);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status run_after_close(void) {
  tw_session *s = open_session();
  assert_int_equal(tw_session_close(s), TW_OK);
  tw_status st = tw_session_run(s, NULL, 0, ok_step, NULL);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status close_twice(void) {
  tw_session *s = open_session();
  assert_int_equal(tw_session_close(s), TW_OK);
  tw_status st = tw_session_close(s);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status close_null(void) { return tw_session_close(NULL); }
static tw_status set_global_step_after_close(void) {
  tw_session *s = open_session();
  assert_int_equal(tw_session_close(s), TW_OK);
  tw_status st = tw_session_set_global_step(s, 3);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status get_variable_small_out(void) {
  tw_session *s = open_session();
  tw_tensor out = TW_TENSOR_INIT;
  out.struct_size = 3;
  tw_status st = tw_session_get_variable(&out, s, "w");
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status get_variable_null_name(void) {
  tw_session *s = open_session();
  tw_tensor out = TW_TENSOR_INIT;
  tw_status st = tw_session_get_variable(&out, s, NULL);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return st;
}
static tw_status stop_at_step_neither(void) {
  tw_hook *h = NULL;
  return tw_stop_at_step_hook_create(&h, TW_UNSET, TW_UNSET);
}

/* Context calls outside their phase, made from inside a step function. */
static tw_status misuse_step(void *u, tw_step_context *ctx) {
  tw_status *out = u;
  tw_tensor t = good_tensor("");
  (void)ctx;
  *out = tw_step_context_publish(ctx, &t);
  return TW_OK;
}
static tw_status publish_empty_name(void) {
  tw_status inner = TW_OK;
  tw_session *s = open_session();
  assert_int_equal(tw_session_run(s, NULL, 0, misuse_step, &inner), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return inner;
}
static tw_status publish_global_step_step(void *u, tw_step_context *ctx) {
  tw_tensor t = good_tensor("global_step");
  *(tw_status *)u = tw_step_context_publish_copy(ctx, &t);
  return TW_OK;
}
static tw_status publish_global_step(void) {
  tw_status inner = TW_OK;
  tw_session *s = open_session();
  assert_int_equal(tw_session_run(s, NULL, 0, publish_global_step_step, &inner), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  return inner;
}
static tw_status fetch_in_after_run(void *u, tw_run_context *ctx) {
  *(tw_status *)u = tw_run_context_request_fetch(ctx, "loss");
  return TW_OK;
}
static tw_status fetch_outside_before_run(void) {
  tw_status inner = TW_OK;
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, NULL, fetch_in_after_run, NULL, NULL, NULL};
  tw_hook *h = NULL;
  tw_session *s = NULL;
  assert_int_equal(tw_hook_create(&h, "late", &cb, &inner), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, NULL, &h, 1), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, ok_step, NULL), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(h);
  return inner;
}
static tw_status result_in_before_run(void *u, tw_run_context *ctx) {
  tw_tensor t = TW_TENSOR_INIT;
  *(tw_status *)u = tw_run_context_get_result(&t, ctx, "loss");
  return TW_OK;
}
static tw_status result_outside_after_run(void) {
  tw_status inner = TW_OK;
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, result_in_before_run, NULL, NULL, NULL, NULL};
  tw_hook *h = NULL;
  tw_session *s = NULL;
  assert_int_equal(tw_hook_create(&h, "early", &cb, &inner), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, NULL, &h, 1), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, ok_step, NULL), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(h);
  return inner;
}
static tw_status unrequested_in_after_run(void *u, tw_run_context *ctx) {
  tw_tensor t = TW_TENSOR_INIT;
  *(tw_status *)u = tw_run_context_get_result(&t, ctx, "loss");
  return TW_OK;
}
static tw_status result_not_requested(void) {
  tw_status inner = TW_OK;
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, NULL, unrequested_in_after_run, NULL, NULL, NULL};
  tw_hook *h = NULL;
  tw_session *s = NULL;
  assert_int_equal(tw_hook_create(&h, "curious", &cb, &inner), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, NULL, &h, 1), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, ok_step, NULL), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(h);
  return inner;
}
static tw_status context_null(void) { return tw_run_context_request_fetch(NULL, "x"); }
static tw_status step_context_null(void) { return tw_step_context_publish(NULL, NULL); }
static tw_status requested_at_null_out(void) { return tw_step_context_requested_at(NULL, NULL, 0); }

typedef struct bad_input_case {
  const char *name;
  tw_status (*call)(void);
  tw_status expected;
  const char *phrase; /* must appear in tw_last_error_message() */
} bad_input_case;

static const bad_input_case kCases[] = {
    {"options_create(NULL)", options_create_null_out, TW_INVALID_ARGUMENT, "out is NULL"},
    {"options_set_int64(NULL opts)", options_set_null, TW_INVALID_ARGUMENT, "opts is NULL"},
    {"unknown option key", options_unknown_key, TW_INVALID_ARGUMENT, "unknown option key 999"},
    {"option of another type", options_wrong_type, TW_INVALID_ARGUMENT, "TW_OPT_IS_CHIEF is of type int64"},
    {"option out of range", options_out_of_range, TW_INVALID_ARGUMENT, "TW_OPT_IS_CHIEF must be in [0, 1]"},
    {"negative duration", options_negative_duration, TW_INVALID_ARGUMENT, "TW_OPT_RECOVERY_BACKOFF_SECS"},
    {"option getter NULL out", options_get_null_out, TW_INVALID_ARGUMENT, "out is NULL"},
    {"OUT_OF_RANGE made recoverable", options_recoverable_ok, TW_INVALID_ARGUMENT, "TW_OUT_OF_RANGE"},
    {"variable NULL", variable_null, TW_INVALID_ARGUMENT, "variable is NULL"},
    {"variable without name", variable_no_name, TW_INVALID_ARGUMENT, "variable has no name"},
    {"variable with empty name", variable_empty_name, TW_INVALID_ARGUMENT, "variable has no name"},
    {"variable named global_step", variable_reserved_name, TW_INVALID_ARGUMENT, "reserved"},
    {"variable struct_size", variable_bad_struct_size, TW_INVALID_ARGUMENT, "struct_size 8"},
    {"variable dtype", variable_bad_dtype, TW_INVALID_ARGUMENT, "invalid dtype 42"},
    {"variable negative extent", variable_negative_shape, TW_INVALID_ARGUMENT, "negative extent -4"},
    {"variable NULL data", variable_null_data, TW_INVALID_ARGUMENT, "data is NULL"},
    {"variable not contiguous", variable_not_contiguous, TW_INVALID_ARGUMENT, "'w' is not contiguous"},
    {"variable registered twice", variable_duplicate, TW_ALREADY_EXISTS, "'w' is already registered"},
    {"hook_create(NULL out)", hook_null_out, TW_INVALID_ARGUMENT, "out is NULL"},
    {"hook without name", hook_null_name, TW_INVALID_ARGUMENT, "hook name is NULL or empty"},
    {"hook with empty name", hook_empty_name, TW_INVALID_ARGUMENT, "hook name is NULL or empty"},
    {"hook without callbacks", hook_null_callbacks, TW_INVALID_ARGUMENT, "callbacks is NULL"},
    {"hook table too small", hook_small_struct_size, TW_INVALID_ARGUMENT,
     "callbacks has struct_size 4, smaller than the first version of tw_hook_callbacks"},
    {"hook table from the future", hook_unknown_slots, TW_INVALID_ARGUMENT, "does not know"},
    {"session_create(NULL out)", session_null_out, TW_INVALID_ARGUMENT, "out is NULL"},
    {"hooks NULL with a count", session_null_hook_array, TW_INVALID_ARGUMENT, "hooks is NULL but n_hooks is 2"},
    {"a NULL hook", session_null_hook_entry, TW_INVALID_ARGUMENT, "hooks[0] is NULL"},
    {"a hook added twice", session_hook_twice, TW_INVALID_ARGUMENT, "hooks[1] is hook 'twice' again"},
    {"singular session as a worker", singular_worker, TW_INVALID_ARGUMENT, "always a chief"},
    {"run(NULL session)", run_null_session, TW_INVALID_ARGUMENT, "session is NULL"},
    {"run(NULL step)", run_null_step, TW_INVALID_ARGUMENT, "step is NULL"},
    {"run(NULL feeds, 3)", run_null_feeds, TW_INVALID_ARGUMENT, "feeds is NULL but its count is 3"},
    {"feed without name", run_feed_without_name, TW_INVALID_ARGUMENT, "feeds[0] has no name"},
    {"two feeds of one name", run_duplicate_feeds, TW_INVALID_ARGUMENT, "both feed 'x'"},
    {"malformed feed", run_malformed_feed, TW_INVALID_ARGUMENT, "feeds[0] has struct_size 0"},
    {"run after close", run_after_close, TW_FAILED_PRECONDITION, "Session is closed."},
    {"close twice", close_twice, TW_FAILED_PRECONDITION, "Session is already closed."},
    {"close(NULL)", close_null, TW_INVALID_ARGUMENT, "session is NULL"},
    {"set_global_step after close", set_global_step_after_close, TW_FAILED_PRECONDITION, "Session is closed."},
    {"get_variable small out", get_variable_small_out, TW_INVALID_ARGUMENT, "out has struct_size 3"},
    {"get_variable(NULL name)", get_variable_null_name, TW_INVALID_ARGUMENT, "name is NULL"},
    {"StopAtStepHook without steps", stop_at_step_neither, TW_INVALID_ARGUMENT, "One of num_steps or last_step"},
    {"publish without name", publish_empty_name, TW_INVALID_ARGUMENT, "output has no name"},
    {"publish global_step", publish_global_step, TW_INVALID_ARGUMENT, "'global_step' is the session's"},
    {"fetch outside before_run", fetch_outside_before_run, TW_FAILED_PRECONDITION, "only be requested in before_run"},
    {"result outside after_run", result_outside_after_run, TW_FAILED_PRECONDITION, "only available in after_run"},
    {"result never requested", result_not_requested, TW_NOT_FOUND, "hook 'curious' did not request 'loss'"},
    {"run context NULL", context_null, TW_INVALID_ARGUMENT, "ctx is NULL"},
    {"step context NULL", step_context_null, TW_INVALID_ARGUMENT, "ctx is NULL"},
    {"requested_at NULL", requested_at_null_out, TW_INVALID_ARGUMENT, "ctx is NULL"},
};

static void bad_input_is_rejected_with_a_message(void **state) {
  const bad_input_case *c = *state;
  assert_int_equal(tw_set_error(TW_OK, ""), TW_OK);
  const tw_status got = c->call();
  const char *message = tw_last_error_message();
  if (got != c->expected || strstr(message, c->phrase) == NULL) {
    print_error("%s: got %s \"%s\", expected %s with \"%s\"\n", c->name, tw_status_name(got), message,
                tw_status_name(c->expected), c->phrase);
  }
  assert_int_equal(got, c->expected);
  assert_non_null(strstr(message, c->phrase));
}

/* Functions without a status answer NULL calmly. */
static void null_handles_are_harmless(void **state) {
  (void)state;
  tw_options_destroy(NULL);
  tw_hook_destroy(NULL);
  assert_int_equal(tw_session_destroy(NULL), TW_OK);
  assert_null(tw_hook_name(NULL));
  assert_int_equal(tw_session_should_stop(NULL), 1);
  assert_int_equal(tw_session_variable_count(NULL), 0);
  assert_int_equal(tw_session_is_chief(NULL), 0);
  assert_int_equal(tw_session_creation_count(NULL), 0);
  assert_int_equal(tw_session_global_step(NULL), 0);
  assert_int_equal(tw_session_preempted(NULL), 0);
  assert_int_equal(tw_run_context_stop_requested(NULL), 0);
  assert_null(tw_run_context_session(NULL));
  assert_int_equal(tw_run_context_result_count(NULL), 0);
  assert_int_equal(tw_run_context_original_feed_count(NULL), 0);
  assert_int_equal(tw_step_context_feed_count(NULL), 0);
  assert_int_equal(tw_step_context_is_requested(NULL, "x"), 0);
  assert_int_equal(tw_step_context_requested_count(NULL), 0);
  assert_int_equal(tw_step_context_global_step(NULL), 0);
  assert_null(tw_step_context_session(NULL));
}

#define CASE_COUNT (sizeof(kCases) / sizeof(kCases[0]))

int main(void) {
  struct CMUnitTest tests[CASE_COUNT + 1];
  for (size_t i = 0; i < CASE_COUNT; ++i) {
    const struct CMUnitTest row = {kCases[i].name, bad_input_is_rejected_with_a_message, NULL, NULL,
                                   (void *)&kCases[i]};
    tests[i] = row;
  }
  {
    const struct CMUnitTest last = cmocka_unit_test(null_handles_are_harmless);
    tests[CASE_COUNT] = last;
  }
  return _cmocka_run_group_tests("bad_input", tests, CASE_COUNT + 1, NULL, NULL);
}
