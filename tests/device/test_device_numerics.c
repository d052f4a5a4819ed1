/* tw_scan, tw_has_nonfinite, tw_check_numerics and tw_tensor_stats on device views (V2, V4), and every
 * way they fail (V1, V7, V8), on the fake device: its memory is PROT_NONE to the library, so a scan
 * that read a device view itself would crash here. */
#include <math.h>

#include "device_test_util.h"

static const float kMixed[6] = {1.0f, NAN, INFINITY, -INFINITY, 2.0f, NAN};

/* V2: a device view is counted on its device: one count_nonfinite call, 40 bytes to the host, no copy. */
static void V2_scan_counts_on_the_device(void **state) {
  (void)state;
  device_tensor t;
  make_device_tensor(&t, "x", TW_FLOAT32, 6, kMixed);
  tw_scan_result r = TW_SCAN_RESULT_INIT;
  assert_int_equal(tw_scan(&r, &t.view), TW_OK);
  assert_int_equal(r.nan_count, 2);
  assert_int_equal(r.pos_inf_count, 1);
  assert_int_equal(r.neg_inf_count, 1);
  assert_int_equal(r.first_nonfinite_index, 1);
  const fake_device_counter count = fake_device_counts("count_nonfinite");
  assert_int_equal(count.calls, 1);
  assert_true(count.bytes <= 64);
  assert_int_equal(fake_device_counts("copy_to_host").calls, 0);
  assert_int_equal(fake_device_counts("wait").calls, 1);
  free_device_tensor(&t);
}

/* V2: every float dtype, as trainwatch/numerics.h classifies it; integers are finite. */
static void V2_scan_every_dtype_on_the_device(void **state) {
  (void)state;
  const uint16_t f16[3] = {0x3C00, 0x7E00, 0xFC00};  /* 1, NaN, -Inf */
  const uint16_t bf16[3] = {0x3F80, 0x7FC0, 0x7F80}; /* 1, NaN, +Inf */
  const double f64[3] = {1.0, -INFINITY, NAN};
  const uint8_t e4m3[3] = {0x38, 0x7F, 0xFF}; /* 1, NaN, NaN */
  const uint8_t e5m2[3] = {0x3C, 0x7C, 0x7F}; /* 1, +Inf, NaN */
  const int32_t i32[3] = {-1, 0, 0x7FC00000};
  const struct {
    tw_dtype dtype;
    const void *bytes;
    int64_t nan, pos, neg, first;
  } cases[] = {
      {TW_FLOAT16, f16, 1, 0, 1, 1},        {TW_BFLOAT16, bf16, 1, 1, 0, 1},    {TW_FLOAT64, f64, 1, 0, 1, 1},
      {TW_FLOAT8_E4M3FN, e4m3, 2, 0, 0, 1}, {TW_FLOAT8_E5M2, e5m2, 1, 1, 0, 1}, {TW_INT32, i32, 0, 0, 0, -1},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    device_tensor t;
    make_device_tensor(&t, "x", cases[i].dtype, 3, cases[i].bytes);
    tw_scan_result r = TW_SCAN_RESULT_INIT;
    assert_int_equal(tw_scan(&r, &t.view), TW_OK);
    assert_int_equal(r.nan_count, cases[i].nan);
    assert_int_equal(r.pos_inf_count, cases[i].pos);
    assert_int_equal(r.neg_inf_count, cases[i].neg);
    assert_int_equal(r.first_nonfinite_index, cases[i].first);
    int bad = -1;
    assert_int_equal(tw_has_nonfinite(&bad, &t.view), TW_OK);
    assert_int_equal(bad, cases[i].first >= 0);
    free_device_tensor(&t);
  }
}

/* V2: check_numerics keeps TF's text for a device view. */
static void V2_check_numerics_on_the_device(void **state) {
  (void)state;
  device_tensor t;
  make_device_tensor(&t, "x", TW_FLOAT32, 6, kMixed);
  assert_int_equal(tw_check_numerics(&t.view, "grads"), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "grads : Tensor had Inf and NaN values");
  const float finite[6] = {1, 2, 3, 4, 5, 6};
  set_device_floats(&t, finite, 6);
  assert_int_equal(tw_check_numerics(&t.view, "grads"), TW_OK);
  assert_int_equal(fake_device_counts("count_nonfinite").calls, 2);
  free_device_tensor(&t);
}

/* V4: statistics of a device view come from a host copy (one copy_to_host of its bytes). */
static void V4_tensor_stats_through_a_host_copy(void **state) {
  (void)state;
  const float values[4] = {1.0f, -3.0f, 4.0f, NAN};
  device_tensor t;
  make_device_tensor(&t, "x", TW_FLOAT32, 4, values);
  tw_numerics_stats s = TW_NUMERICS_STATS_INIT;
  assert_int_equal(tw_tensor_stats(&s, &t.view), TW_OK);
  assert_int_equal(s.element_count, 4);
  assert_int_equal(s.finite_count, 3);
  assert_int_equal(s.nan_count, 1);
  assert_true(s.min == -3.0 && s.max == 4.0);
  assert_true(fabs(s.mean - 2.0 / 3.0) < 1e-6);
  const fake_device_counter copy = fake_device_counts("copy_to_host");
  assert_int_equal(copy.calls, 1);
  assert_int_equal(copy.bytes, 16);
  assert_int_equal(tw_tensor_element_count(&t.view), 4); /* reads no data */
  free_device_tensor(&t);
}

/* V7: a device type nobody registered is TW_FAILED_PRECONDITION naming the tensor and what to install. */
static void V7_no_device_registered(void **state) {
  (void)state;
  device_tensor t;
  make_device_tensor(&t, "dense/kernel", TW_FLOAT32, 6, kMixed);
  assert_int_equal(fake_device_unregister(TW_DEVICE_CUDA), TW_OK);
  tw_scan_result r = TW_SCAN_RESULT_INIT;
  assert_int_equal(tw_scan(&r, &t.view), TW_FAILED_PRECONDITION);
  assert_message_has("tensor 'dense/kernel'");
  assert_message_has("no device is registered for cuda");
  assert_message_has("libtrainwatch_cuda");
  tw_numerics_stats s = TW_NUMERICS_STATS_INIT;
  assert_int_equal(tw_tensor_stats(&s, &t.view), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_check_numerics(&t.view, "m"), TW_FAILED_PRECONDITION);
  t.view.device_type = TW_DEVICE_EXT;
  assert_int_equal(tw_scan(&r, &t.view), TW_FAILED_PRECONDITION);
  assert_message_has("tw_set_device");
  assert_int_equal(fake_device_register(TW_DEVICE_CUDA), TW_OK); /* for the teardown */
  free_device_tensor(&t);
}

/* V8: each operation that fails fails the call with its status, naming the operation, the device and
 * the tensor; a failed count is never "all finite". */
static void V8_each_failing_operation_is_named(void **state) {
  (void)state;
  static const char *const scan_ops[] = {"alloc_pinned", "count_nonfinite", "record", "wait"};
  device_tensor t;
  make_device_tensor(&t, "loss", TW_FLOAT32, 6, kMixed);
  for (size_t i = 0; i < sizeof(scan_ops) / sizeof(scan_ops[0]); ++i) {
    /* a fresh table: its scratch buffers are not allocated yet */
    assert_int_equal(fake_device_register(TW_DEVICE_CUDA), TW_OK);
    fake_device_fail(scan_ops[i], 1, TW_UNAVAILABLE);
    tw_scan_result r = TW_SCAN_RESULT_INIT;
    int bad = 0;
    assert_int_equal(tw_scan(&r, &t.view), TW_UNAVAILABLE);
    assert_message_has("device fake:0, count_nonfinite of 'loss': ");
    assert_message_has(scan_ops[i]);
    assert_message_has("injected failure");
    /* A count enqueued without an event may still write its results: that buffer is abandoned. */
    if (strcmp(scan_ops[i], "record") == 0) assert_true(fake_device_reclaim_pinned() >= 40);
    assert_int_equal(tw_has_nonfinite(&bad, &t.view), TW_OK); /* one failure only */
    assert_int_equal(bad, 1);
  }
  static const char *const copy_ops[] = {"alloc_pinned", "copy_to_host", "record", "wait"};
  for (size_t i = 0; i < sizeof(copy_ops) / sizeof(copy_ops[0]); ++i) {
    assert_int_equal(fake_device_register(TW_DEVICE_CUDA), TW_OK);
    fake_device_fail(copy_ops[i], 1, TW_INTERNAL);
    tw_numerics_stats s = TW_NUMERICS_STATS_INIT;
    assert_int_equal(tw_tensor_stats(&s, &t.view), TW_INTERNAL);
    assert_message_has("'loss'");
    assert_message_has(copy_ops[i]);
    if (strcmp(copy_ops[i], "record") == 0) assert_true(fake_device_reclaim_pinned() >= 24);
  }
  free_device_tensor(&t);
}

/* V1: a device view must be contiguous, its device_type and device_id non-negative; a function that
 * reads host memory only refuses a device view by name instead of reading it. */
static void V1_malformed_and_misplaced_device_views(void **state) {
  (void)state;
  device_tensor t;
  const float values[6] = {0};
  make_device_tensor(&t, "w", TW_FLOAT32, 6, values);
  const int64_t shape[2] = {2, 3}, strides[2] = {1, 2};
  tw_tensor strided = t.view;
  strided.ndim = 2;
  strided.shape = shape;
  strided.strides = strides;
  tw_scan_result r = TW_SCAN_RESULT_INIT;
  assert_int_equal(tw_scan(&r, &strided), TW_INVALID_ARGUMENT);
  assert_message_has("device views must be contiguous");
  tw_tensor bad_id = t.view;
  bad_id.device_id = -1;
  assert_int_equal(tw_scan(&r, &bad_id), TW_INVALID_ARGUMENT);
  assert_message_has("device_id");
  /* FinalOpsHook copies its feeds when it is created: host memory only. */
  tw_hook *hook = NULL;
  assert_int_equal(tw_final_ops_hook_create(&hook, &t.view, 1, NULL, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_final_ops_hook_create(&hook, &t.view, 1, (tw_step_fn)1, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_message_has("feeds[0]");
  assert_message_has("device memory");
  assert_int_equal(fake_device_total_calls(), 0);
  free_device_tensor(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      DEVICE_TEST(V2_scan_counts_on_the_device),
      DEVICE_TEST(V2_scan_every_dtype_on_the_device),
      DEVICE_TEST(V2_check_numerics_on_the_device),
      DEVICE_TEST(V4_tensor_stats_through_a_host_copy),
      DEVICE_TEST(V7_no_device_registered),
      DEVICE_TEST(V8_each_failing_operation_is_named),
      DEVICE_TEST(V1_malformed_and_misplaced_device_views),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
