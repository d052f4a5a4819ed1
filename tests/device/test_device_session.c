/* A MonitoredTrainingSession whose variables, loss and gradients live on the fake device (V3–V9):
 * NanTensorHook counts on the device (detect, stop, fail, callback) with a few bytes crossing per
 * check, LoggingTensorHook / SummarySaverHook / FinalOpsHook read host copies, outputs and variables
 * come back as the caller's device views, feeds pass through untouched, a host-only run makes no
 * device call, and every failure names the operation and the tensor. Through the public API only. */
#define _POSIX_C_SOURCE 200809L
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <math.h>

#include "device_test_util.h"
#include "hook_test_util.h"

#define GRADS 16

/* What the step publishes: "loss" (device scalar), GRADS device gradients "grad/<i>" of 4 floats, and
 * with `host_grad` a host gradient "grad/host". The device memory is set by the test between runs. */
typedef struct model {
  device_tensor loss, w, grads[GRADS];
  char grad_names[GRADS][16];
  float host_grad[4];
  int publish_grads, host_grad_published, copy_loss;
  int64_t runs;
} model;

static model g_model;

static void model_init(model *m) {
  const float loss = 0.5f, w[4] = {1.0f, 2.5f, -3.0f, 0.0f}, zeros[4] = {0};
  memset(m, 0, sizeof(*m));
  make_device_tensor(&m->loss, "loss", TW_FLOAT32, 1, &loss);
  m->loss.view.ndim = 0;
  make_device_tensor(&m->w, "w", TW_FLOAT32, 4, w);
  for (int i = 0; i < GRADS; ++i) {
    snprintf(m->grad_names[i], sizeof(m->grad_names[i]), "grad/%d", i);
    make_device_tensor(&m->grads[i], m->grad_names[i], TW_FLOAT32, 4, zeros);
  }
}

static void model_free(model *m) {
  free_device_tensor(&m->loss);
  free_device_tensor(&m->w);
  for (int i = 0; i < GRADS; ++i) free_device_tensor(&m->grads[i]);
}

static void set_loss(model *m, float value) { assert_int_equal(fake_device_write(m->loss.data, &value, 4), 0); }

/* A view of four host floats. */
static tw_tensor host_float4(const char *name, float *data) {
  static const int64_t shape[1] = {4};
  tw_tensor t = TW_TENSOR_INIT;
  t.name = name;
  t.dtype = TW_FLOAT32;
  t.ndim = 1;
  t.shape = shape;
  t.data = data;
  return t;
}

static tw_status step(void *u, tw_step_context *ctx) {
  model *m = u;
  tw_status st;
  m->runs++;
  st = m->copy_loss ? tw_step_context_publish_copy(ctx, &m->loss.view) : tw_step_context_publish(ctx, &m->loss.view);
  if (st != TW_OK) return st;
  for (int i = 0; m->publish_grads && i < GRADS; ++i) {
    if ((st = tw_step_context_publish(ctx, &m->grads[i].view)) != TW_OK) return st;
  }
  if (m->host_grad_published) {
    tw_tensor t = host_float4("grad/host", m->host_grad);
    if ((st = tw_step_context_publish(ctx, &t)) != TW_OK) return st;
  }
  return TW_OK;
}

/* A MonitoredTrainingSession with the device variable "w" and `hook` (its reference released). */
static tw_session *open_mts(tw_hook *hook, tw_options *opts) {
  tw_session *s = NULL;
  tw_options *own = NULL;
  if (opts == NULL) {
    assert_int_equal(tw_options_create(&own), TW_OK);
    opts = own;
  }
  assert_int_equal(tw_options_add_variable(opts, &g_model.w.view), TW_OK);
  tw_hook *hooks[1] = {hook};
  if (tw_monitored_training_session_create(&s, opts, hooks, hook != NULL ? 1 : 0, NULL, 0) != TW_OK) {
    fail_msg("session: %s", tw_last_error_message());
  }
  if (hook != NULL) tw_hook_destroy(hook);
  tw_options_destroy(own);
  return s;
}

static void close_mts(tw_session *s) {
  const tw_status closed = tw_session_close(s); /* after a failed run, close reports that run's failure */
  (void)closed;
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

static tw_hook *nan_hook(const char *const *watch, size_t n, tw_nan_action action, tw_nan_fn fn, void *user_data) {
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, action), TW_OK);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, watch, n, opts, fn, user_data, NULL), TW_OK);
  tw_options_destroy(opts);
  return hook;
}

static tw_hook *logging_hook(const char *const *names, size_t n) {
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_logging_tensor_hook_create(&hook, names, NULL, n, opts, NULL, NULL, NULL), TW_OK);
  tw_options_destroy(opts);
  return hook;
}

static int model_setup(void **state) {
  if (fake_setup(state) != 0) return -1;
  model_init(&g_model);
  return 0;
}

static int model_teardown(void **state) {
  model_free(&g_model);
  return fake_teardown(state);
}

/* V3: a NaN in a device loss fails the run as on the host, counted on the device: one count_nonfinite
 * per check, 40 bytes (at most 64) crossing, no copy of the value. */
static void V3_nan_hook_fails_on_a_device_loss(void **state) {
  (void)state;
  tw_session *s = open_mts(nan_hook((const char *const[]){"loss"}, 1, TW_NAN_ACTION_FAIL, NULL, NULL), NULL);
  fake_device_reset_counts();
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  set_loss(&g_model, NAN);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_NAN_LOSS);
  assert_message_has("NaN loss during training. (tensor 'loss', step ");
  assert_message_has(": 1 NaN, 0 +Inf, 0 -Inf, first at index 0)");
  const fake_device_counter count = fake_device_counts("count_nonfinite");
  assert_int_equal(count.calls, 3);
  assert_true(count.bytes / count.calls <= 64);
  assert_int_equal(fake_device_counts("copy_to_host").calls, 0);
  assert_int_equal(fake_device_counts("alloc_pinned").calls, 1); /* the results buffer, reused */
  close_mts(s);
}

/* V3: TW_NAN_ACTION_STOP on a device +Inf requests stop. */
static void V3_nan_hook_stops_on_a_device_inf(void **state) {
  (void)state;
  tw_session *s = open_mts(nan_hook((const char *const[]){"loss"}, 1, TW_NAN_ACTION_STOP, NULL, NULL), NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_false(tw_session_should_stop(s));
  set_loss(&g_model, INFINITY);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_true(tw_session_should_stop(s));
  close_mts(s);
}

typedef struct nan_calls {
  int calls;
  char name[32];
  int64_t nan, pos, neg, first;
} nan_calls;

static tw_status on_nan(void *u, tw_session *session, const tw_nan_event *e) {
  nan_calls *c = u;
  (void)session;
  c->calls++;
  snprintf(c->name, sizeof(c->name), "%s", e->tensor_name);
  c->nan = e->nan_count, c->pos = e->pos_inf_count, c->neg = e->neg_inf_count, c->first = e->first_nonfinite_index;
  return TW_OK;
}

/* V3: many watched device tensors are counted with ONE count_nonfinite per check (16 gradients, the
 * loss and the variable: 18 tensors, 720 bytes), and the callback hears the bad one with its counts. */
static void V3_many_watched_tensors_one_count_per_check(void **state) {
  (void)state;
  nan_calls c;
  memset(&c, 0, sizeof(c));
  const char *const watch[] = {"loss", "grad/*", "w"};
  tw_session *s = open_mts(nan_hook(watch, 3, TW_NAN_ACTION_CALLBACK, on_nan, &c), NULL);
  g_model.publish_grads = 1;
  fake_device_reset_counts();
  for (int i = 0; i < 3; ++i) assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_int_equal(c.calls, 0);
  const float bad[4] = {1.0f, -INFINITY, NAN, NAN};
  assert_int_equal(fake_device_write(g_model.grads[7].data, bad, sizeof(bad)), 0);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_int_equal(c.calls, 1);
  assert_string_equal(c.name, "grad/7");
  assert_int_equal(c.nan, 2);
  assert_int_equal(c.pos, 0);
  assert_int_equal(c.neg, 1);
  assert_int_equal(c.first, 1);
  const fake_device_counter count = fake_device_counts("count_nonfinite");
  assert_int_equal(count.calls, 4);
  assert_int_equal(count.items, 4 * (GRADS + 2));
  assert_int_equal(count.bytes, 4 * (GRADS + 2) * 40);
  assert_int_equal(fake_device_counts("wait").calls, 4);
  assert_int_equal(fake_device_counts("copy_to_host").calls, 0);
  close_mts(s);
}

/* V3: host and device values watched together: the host one is scanned on the host. */
static void V3_host_and_device_values_together(void **state) {
  (void)state;
  nan_calls c;
  memset(&c, 0, sizeof(c));
  const char *const watch[] = {"loss", "grad/*"};
  tw_session *s = open_mts(nan_hook(watch, 2, TW_NAN_ACTION_CALLBACK, on_nan, &c), NULL);
  g_model.host_grad_published = 1;
  g_model.host_grad[3] = NAN;
  fake_device_reset_counts();
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_int_equal(c.calls, 1);
  assert_string_equal(c.name, "grad/host");
  assert_int_equal(c.first, 3);
  assert_int_equal(fake_device_counts("count_nonfinite").items, 1); /* the loss only */
  close_mts(s);
}

/* V9: a run whose values are all host memory makes no device call, though a device is registered and
 * the NaN, logging and summary hooks read every value. */
static void V9_host_only_run_makes_no_device_call(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_SUMMARY_DIR, dir.path), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 1), TW_OK);
  float w[4] = {1, 2, 3, 4};
  tw_tensor host_w = host_float4("v", w);
  assert_int_equal(tw_options_add_variable(opts, &host_w), TW_OK);
  tw_hook *hooks[2] = {nan_hook((const char *const[]){"loss"}, 1, TW_NAN_ACTION_FAIL, NULL, NULL),
                       logging_hook((const char *const[]){"loss", "w", "v"}, 3)};
  tw_session *s = NULL;
  assert_int_equal(tw_monitored_training_session_create(&s, opts, hooks, 2, NULL, 0), TW_OK);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
  publisher p = make_publisher();
  fake_device_reset_counts();
  for (int i = 0; i < 3; ++i) assert_int_equal(tw_session_run(s, NULL, 0, publish_values, &p), TW_OK);
  close_mts(s);
  assert_int_equal(fake_device_total_calls(), 0);
  tw_options_destroy(opts);
  scratch_dir_destroy(&dir);
}

/* V4: LoggingTensorHook logs a device value from a host copy: the same line as for the same values in
 * host memory. */
static void V4_logging_tensor_hook_logs_device_values(void **state) {
  (void)state;
  tw_session *s = open_mts(logging_hook((const char *const[]){"loss", "w"}, 2), NULL);
  /* "w" is the session's variable here, fetched by name like TF's tensors */
  start_capture();
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  stop_capture();
  const char *line = line_starting("loss = ", 0);
  assert_non_null(line);
  assert_string_equal(line, "loss = 0.5, w = [1. 2.5 -3. 0.]");
  assert_int_equal(fake_device_counts("copy_to_host").calls, 2);
  assert_int_equal(fake_device_counts("copy_to_host").bytes, 4 + 16);
  close_mts(s);
}

/* V4: SummarySaverHook writes a device scalar's value and a device variable's histogram. */
static void V4_summary_saver_hook_summarises_device_values(void **state) {
  (void)state;
  scratch_dir dir;
  char path[512];
  read_value v[16];
  assert_int_equal(scratch_dir_create(&dir), 0);
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_OUTPUT_DIR, dir.path), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_SUMMARY_HISTOGRAM_NAMES, "w"), TW_OK);
  assert_int_equal(tw_summary_saver_hook_create(&hook, (const char *const[]){"loss", "w"}, 2, opts, NULL), TW_OK);
  tw_options_destroy(opts);
  tw_session *s = open_mts(hook, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  close_mts(s);
  assert_true(find_event_file(dir.path, 0, path, sizeof(path)));
  const int n = read_events(path, v, 16);
  int scalars = 0, histograms = 0;
  for (int i = 0; i < n; ++i) {
    if (v[i].kind != TW_EVENT_SUMMARY) continue;
    if (strcmp(v[i].tag, "loss") == 0) {
      assert_true(v[i].scalar == 0.5f);
      scalars++;
    } else if (strcmp(v[i].tag, "w") == 0) {
      assert_int_equal(v[i].value_kind, TW_SUMMARY_VALUE_HISTOGRAM);
      assert_true(v[i].histogram_num == 4.0);
      histograms++;
    }
  }
  assert_int_equal(scalars, 1);
  assert_int_equal(histograms, 1);
  scratch_dir_destroy(&dir);
}

/* V4: tw_summary_writer_add_histogram of a device view writes the histogram of its values. */
static void V4_summary_writer_histogram_of_a_device_view(void **state) {
  (void)state;
  scratch_dir dir;
  char path[512];
  read_value v[8];
  tw_summary_writer *writer = NULL;
  assert_int_equal(scratch_dir_create(&dir), 0);
  assert_int_equal(tw_summary_writer_open(&writer, dir.path), TW_OK);
  assert_int_equal(tw_summary_writer_add_histogram(writer, "w", 3, &g_model.w.view), TW_OK);
  assert_int_equal(tw_summary_writer_flush(writer), TW_OK);
  tw_summary_writer_destroy(writer);
  assert_int_equal(fake_device_counts("copy_to_host").bytes, 16);
  assert_true(find_event_file(dir.path, 0, path, sizeof(path)));
  const int n = read_events(path, v, 8);
  int found = 0;
  for (int i = 0; i < n; ++i) {
    if (v[i].kind == TW_EVENT_SUMMARY && strcmp(v[i].tag, "w") == 0) {
      assert_true(v[i].histogram_num == 4.0);
      assert_int_equal(v[i].step, 3);
      found++;
    }
  }
  assert_int_equal(found, 1);
  scratch_dir_destroy(&dir);
}

static tw_status final_step(void *u, tw_step_context *ctx) {
  model *m = u;
  return tw_step_context_publish(ctx, &m->w.view);
}

/* V4: FinalOpsHook keeps a host copy of a device value the final step published. */
static void V4_final_ops_hook_keeps_host_copies(void **state) {
  (void)state;
  tw_hook *hook = NULL;
  assert_int_equal(tw_final_ops_hook_create(&hook, NULL, 0, final_step, &g_model, NULL), TW_OK);
  tw_session *s = NULL;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  tw_hook *hooks[1] = {hook};
  assert_int_equal(tw_monitored_training_session_create(&s, opts, hooks, 1, NULL, 0), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  tw_tensor value = TW_TENSOR_INIT;
  assert_int_equal(tw_final_ops_hook_get_value(&value, hook, "w"), TW_OK);
  assert_int_equal(value.device_type, TW_DEVICE_HOST);
  assert_int_equal(value.dtype, TW_FLOAT32);
  const float expected[4] = {1.0f, 2.5f, -3.0f, 0.0f};
  assert_memory_equal(value.data, expected, sizeof(expected));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
  tw_hook_destroy(hook);
}

/* What a hook reads in after_run: the output "loss" and the variable "w" as the session hands them out. */
typedef struct seen {
  tw_tensor loss, w;
  float loss_value; /* of a host copy */
} seen;

static tw_status read_outputs(void *u, tw_run_context *ctx) {
  seen *v = u;
  tw_session *s = tw_run_context_session(ctx);
  v->loss = (tw_tensor)TW_TENSOR_INIT;
  v->w = (tw_tensor)TW_TENSOR_INIT;
  if (tw_session_get_output(&v->loss, s, "loss") != TW_OK) return TW_INTERNAL;
  if (tw_session_get_variable(&v->w, s, "w") != TW_OK) return TW_INTERNAL;
  if (v->loss.device_type == TW_DEVICE_HOST) v->loss_value = *(const float *)v->loss.data;
  return TW_OK;
}

/* V6: tw_session_get_output / get_variable hand back the caller's device views unchanged; a
 * publish_copy of a device value keeps a host copy. */
static void V6_outputs_variables_and_published_copies(void **state) {
  (void)state;
  seen v;
  memset(&v, 0, sizeof(v));
  tw_hook_callbacks callbacks = TW_HOOK_CALLBACKS_INIT;
  callbacks.after_run = read_outputs;
  tw_hook *hook = NULL;
  assert_int_equal(tw_hook_create(&hook, "reader", &callbacks, &v), TW_OK);
  tw_session *s = open_mts(hook, NULL);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_ptr_equal(v.loss.data, g_model.loss.data);
  assert_int_equal(v.loss.device_type, TW_DEVICE_CUDA);
  assert_ptr_equal(v.w.data, g_model.w.data);
  assert_int_equal(v.w.device_type, TW_DEVICE_CUDA);
  assert_int_equal(fake_device_total_calls(), 0);

  g_model.copy_loss = 1;
  set_loss(&g_model, 0.25f);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_int_equal(v.loss.device_type, TW_DEVICE_HOST);
  assert_true(v.loss_value == 0.25f);
  assert_int_equal(fake_device_counts("copy_to_host").bytes, 4);
  /* a tw_tensor of the first version cannot say "device memory": refused, not handed out as host */
  tw_tensor v1 = TW_TENSOR_INIT;
  v1.struct_size = TW_TENSOR_SIZE_V1;
  assert_int_equal(tw_session_get_variable(&v1, s, "w"), TW_FAILED_PRECONDITION);
  assert_message_has("'w' is a view of device memory");
  assert_null(v1.data);
  close_mts(s);
}

static tw_status step_checking_feed(void *u, tw_step_context *ctx) {
  model *m = u;
  tw_tensor feed = TW_TENSOR_INIT;
  if (tw_step_context_get_feed(&feed, ctx, "x") != TW_OK) return TW_INTERNAL;
  if (feed.data != m->w.data || feed.device_type != TW_DEVICE_CUDA) return TW_DATA_LOSS;
  return step(u, ctx);
}

/* V5: a device feed reaches the step untouched, and the run makes no device call for it. */
static void V5_device_feeds_pass_through(void **state) {
  (void)state;
  tw_session *s = open_mts(NULL, NULL);
  tw_tensor feed = g_model.w.view;
  feed.name = "x";
  assert_int_equal(tw_session_run(s, &feed, 1, step_checking_feed, &g_model), TW_OK);
  assert_int_equal(fake_device_total_calls(), 0);
  close_mts(s);
}

/* V7: with no device registered, the first read of a device value fails the run naming it. */
static void V7_no_device_fails_the_run_naming_the_tensor(void **state) {
  (void)state;
  tw_session *s = open_mts(nan_hook((const char *const[]){"loss"}, 1, TW_NAN_ACTION_FAIL, NULL, NULL), NULL);
  assert_int_equal(fake_device_unregister(TW_DEVICE_CUDA), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_FAILED_PRECONDITION);
  assert_message_has("tensor 'loss' lives on cuda memory but no device is registered for cuda");
  close_mts(s);
  assert_int_equal(fake_device_register(TW_DEVICE_CUDA), TW_OK);
}

/* V8: a failing device operation fails the run, naming the operation and the tensors; never taken as
 * "all finite". */
static void V8_failing_count_fails_the_run(void **state) {
  (void)state;
  const char *const watch[] = {"loss", "grad/*"};
  tw_session *s = open_mts(nan_hook(watch, 2, TW_NAN_ACTION_FAIL, NULL, NULL), NULL);
  g_model.publish_grads = 1;
  fake_device_fail("count_nonfinite", 2, TW_INTERNAL);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_INTERNAL);
  assert_message_has("device fake:0, count_nonfinite of 'loss', 'grad/0', 'grad/1' and 14 more: ");
  assert_message_has("fake device: injected failure of count_nonfinite");
  close_mts(s);
}

/* V2: TW_OPT_CHECK_NUMERICS counts a device output on the device, TF's text naming it and the step. */
static void V2_check_numerics_option_on_a_device_output(void **state) {
  (void)state;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECK_NUMERICS, 1), TW_OK);
  tw_session *s = open_mts(NULL, opts);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_OK);
  set_loss(&g_model, NAN);
  assert_int_equal(tw_session_run(s, NULL, 0, step, &g_model), TW_INVALID_ARGUMENT);
  assert_message_has("output 'loss' at step ");
  assert_message_has(" : Tensor had NaN values");
  assert_int_equal(fake_device_counts("count_nonfinite").calls, 2);
  close_mts(s);
  tw_options_destroy(opts);
}

#define MODEL_TEST(f) cmocka_unit_test_setup_teardown(f, model_setup, model_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      MODEL_TEST(V3_nan_hook_fails_on_a_device_loss),
      MODEL_TEST(V3_nan_hook_stops_on_a_device_inf),
      MODEL_TEST(V3_many_watched_tensors_one_count_per_check),
      MODEL_TEST(V3_host_and_device_values_together),
      MODEL_TEST(V9_host_only_run_makes_no_device_call),
      MODEL_TEST(V4_logging_tensor_hook_logs_device_values),
      MODEL_TEST(V4_summary_saver_hook_summarises_device_values),
      MODEL_TEST(V4_summary_writer_histogram_of_a_device_view),
      MODEL_TEST(V4_final_ops_hook_keeps_host_copies),
      MODEL_TEST(V6_outputs_variables_and_published_copies),
      MODEL_TEST(V5_device_feeds_pass_through),
      MODEL_TEST(V7_no_device_fails_the_run_naming_the_tensor),
      MODEL_TEST(V8_failing_count_fails_the_run),
      MODEL_TEST(V2_check_numerics_option_on_a_device_output),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
