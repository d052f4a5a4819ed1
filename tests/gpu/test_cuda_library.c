/* libtrainwatch with libtrainwatch_cuda's table registered (tw_set_device) on a real GPU: what a C
 * program gets for CUDA tensors through the public API (tools/gpu-check runs it; not part of the CPU
 * suites, where tests/device/ drives the same calls over the fake device).
 *
 * tw_scan, tw_has_nonfinite and tw_check_numerics count on the device and agree with the host functions
 * on a host copy of the same bytes; tw_tensor_stats reads a host copy; a NanTensorHook fails
 * the run whose device loss turned NaN; with the registration removed a CUDA view is refused by
 * name. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#define TW_EXPERIMENTAL_API
#include <cuda_runtime_api.h>
#include <trainwatch.h>
#include <trainwatch/cuda.h>

#define CUDA_OK(call)                                                                                    \
  do {                                                                                                   \
    cudaError_t e_ = (call);                                                                             \
    if (e_ != cudaSuccess) fail_msg("%s: %s (%s)", #call, cudaGetErrorString(e_), cudaGetErrorName(e_)); \
  } while (0)

enum { kCount = 100003 };

/* A CUDA copy of `host` (count elements of dtype) and the views of both. */
typedef struct pair {
  int64_t shape[1];
  tw_tensor host, device;
} pair;

static void make_pair(pair *p, const char *name, tw_dtype dtype, void *host, int64_t count) {
  p->shape[0] = count;
  tw_tensor_init(&p->host);
  p->host.name = name;
  p->host.dtype = dtype;
  p->host.data = host;
  p->host.ndim = 1;
  p->host.shape = p->shape;
  p->device = p->host;
  const size_t bytes = (size_t)count * tw_dtype_size(dtype);
  CUDA_OK(cudaMalloc(&p->device.data, bytes));
  CUDA_OK(cudaMemcpy(p->device.data, host, bytes, cudaMemcpyHostToDevice));
  p->device.device_type = TW_DEVICE_CUDA;
  p->device.device_id = 0;
}

static void free_pair(pair *p) { CUDA_OK(cudaFree(p->device.data)); }

static int register_cuda(void **state) {
  (void)state;
  tw_device table;
  void *user_data = NULL;
  if (tw_cuda_device_create(&table, &user_data, NULL) != TW_OK) {
    print_error("tw_cuda_device_create: %s\n", tw_last_error_message());
    return -1;
  }
  if (tw_set_device(&table, user_data) != TW_OK) {
    print_error("tw_set_device: %s\n", tw_last_error_message());
    table.destroy(user_data);
    return -1;
  }
  return 0;
}

static int unregister_cuda(void **state) {
  (void)state;
  return tw_unset_device(TW_DEVICE_CUDA) == TW_OK ? 0 : -1;
}

/* Bits of each float dtype: a finite pattern and NaN, +Inf, -Inf (NaN again for float8_e4m3fn). */
static void fill(tw_dtype dtype, unsigned char *data, int64_t n) {
  const size_t size = tw_dtype_size(dtype);
  for (int64_t i = 0; i < n; i++) {
    const uint64_t one = dtype == TW_FLOAT64         ? 0x3FF0000000000000ULL
                         : dtype == TW_FLOAT32       ? 0x3F800000u
                         : dtype == TW_FLOAT16       ? 0x3C00u
                         : dtype == TW_BFLOAT16      ? 0x3F80u
                         : dtype == TW_FLOAT8_E4M3FN ? 0x38u
                                                     : 0x3Cu;
    memcpy(data + (size_t)i * size, &one, size); /* little-endian: the low bytes */
  }
}

static void put(tw_dtype dtype, unsigned char *data, int64_t i, int kind /* 0 NaN, 1 +Inf, 2 -Inf */) {
  static const uint64_t bits[6][3] = {
      {0x7FF8000000000000ULL, 0x7FF0000000000000ULL, 0xFFF0000000000000ULL}, /* float64 */
      {0x7FC00000u, 0x7F800000u, 0xFF800000u},                               /* float32 */
      {0x7E00u, 0x7C00u, 0xFC00u},                                           /* float16 */
      {0x7FC0u, 0x7F80u, 0xFF80u},                                           /* bfloat16 */
      {0x7Fu, 0x7Fu, 0xFFu},                                                 /* float8_e4m3fn: NaN only */
      {0x7Eu, 0x7Cu, 0xFCu},                                                 /* float8_e5m2 */
  };
  const int row = dtype == TW_FLOAT64         ? 0
                  : dtype == TW_FLOAT32       ? 1
                  : dtype == TW_FLOAT16       ? 2
                  : dtype == TW_BFLOAT16      ? 3
                  : dtype == TW_FLOAT8_E4M3FN ? 4
                                              : 5;
  const size_t size = tw_dtype_size(dtype);
  memcpy(data + (size_t)i * size, &bits[row][kind], size);
}

static const tw_dtype kFloats[6] = {TW_FLOAT64, TW_FLOAT32, TW_FLOAT16, TW_BFLOAT16, TW_FLOAT8_E4M3FN, TW_FLOAT8_E5M2};

/* the library's scans of a CUDA view equal the host functions' on the same bytes. */
static void scans_of_cuda_views_agree_with_the_host(void **state) {
  (void)state;
  static unsigned char host[kCount * 8];
  for (int d = 0; d < 6; d++) {
    const tw_dtype dtype = kFloats[d];
    fill(dtype, host, kCount);
    put(dtype, host, 70001, 1);
    put(dtype, host, 99999, 0);
    put(dtype, host, 65536, 2);
    pair p;
    make_pair(&p, "weights", dtype, host, kCount);
    tw_scan_result on_host = TW_SCAN_RESULT_INIT, on_device = TW_SCAN_RESULT_INIT;
    assert_int_equal(tw_scan(&on_host, &p.host), TW_OK);
    if (tw_scan(&on_device, &p.device) != TW_OK) fail_msg("tw_scan: %s", tw_last_error_message());
    assert_int_equal(on_device.nan_count, on_host.nan_count);
    assert_int_equal(on_device.pos_inf_count, on_host.pos_inf_count);
    assert_int_equal(on_device.neg_inf_count, on_host.neg_inf_count);
    assert_int_equal(on_device.first_nonfinite_index, 65536);
    assert_int_equal(on_device.first_nonfinite_index, on_host.first_nonfinite_index);
    int bad = -1;
    assert_int_equal(tw_has_nonfinite(&bad, &p.device), TW_OK);
    assert_int_equal(bad, 1);
    assert_int_equal(tw_check_numerics(&p.device, "after the step"), TW_INVALID_ARGUMENT);
    assert_non_null(strstr(tw_last_error_message(), "after the step : Tensor had"));
    free_pair(&p);
  }
}

/* tw_tensor_stats of a CUDA view (a host copy through the table) equals the host's. */
static void stats_of_a_cuda_view_equal_the_host(void **state) {
  (void)state;
  static float host[kCount];
  for (int i = 0; i < kCount; i++) host[i] = (float)((i * 7919) % 1000) / 100.0f - 5.0f;
  host[12345] = NAN;
  pair p;
  make_pair(&p, "activations", TW_FLOAT32, host, kCount);
  tw_numerics_stats on_host = TW_NUMERICS_STATS_INIT, on_device = TW_NUMERICS_STATS_INIT;
  assert_int_equal(tw_tensor_stats(&on_host, &p.host), TW_OK);
  if (tw_tensor_stats(&on_device, &p.device) != TW_OK) fail_msg("tw_tensor_stats: %s", tw_last_error_message());
  assert_memory_equal(&on_device, &on_host, sizeof on_host);
  free_pair(&p);
}

static pair g_loss;
static float g_loss_value;

static tw_status publish_loss(void *user_data, tw_step_context *ctx) {
  (void)user_data;
  CUDA_OK(cudaMemcpy(g_loss.device.data, &g_loss_value, sizeof g_loss_value, cudaMemcpyHostToDevice));
  return tw_step_context_publish(ctx, &g_loss.device);
}

/* a NanTensorHook watching a CUDA loss fails the run in which it turns NaN. */
static void nan_hook_fails_on_a_cuda_loss(void **state) {
  (void)state;
  g_loss_value = 0.5f;
  make_pair(&g_loss, "loss", TW_FLOAT32, &g_loss_value, 1);
  g_loss.device.ndim = 0;
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  tw_session *session = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_FAIL), TW_OK);
  const char *watch[1] = {"loss"};
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&hook, watch, 1, opts, NULL, NULL, NULL), TW_OK);
  tw_options_destroy(opts);
  assert_int_equal(tw_options_create(&opts), TW_OK);
  if (tw_monitored_training_session_create(&session, opts, &hook, 1, NULL, 0) != TW_OK)
    fail_msg("session: %s", tw_last_error_message());
  tw_hook_destroy(hook);
  tw_options_destroy(opts);
  for (int i = 0; i < 3; i++) assert_int_equal(tw_session_run(session, NULL, 0, publish_loss, NULL), TW_OK);
  g_loss_value = NAN;
  assert_int_equal(tw_session_run(session, NULL, 0, publish_loss, NULL), TW_NAN_LOSS);
  assert_non_null(strstr(tw_last_error_message(), "tensor 'loss'"));
  const tw_status closed = tw_session_close(session); /* reports the failed run again */
  (void)closed;
  assert_int_equal(tw_session_destroy(session), TW_OK);
  free_pair(&g_loss);
}

/* without a registration for CUDA a CUDA view is refused, naming it; registered again, it works. */
static void an_unregistered_type_is_refused_by_name(void **state) {
  float host[4] = {1, 2, 3, 4};
  pair p;
  make_pair(&p, "orphan", TW_FLOAT32, host, 4);
  assert_int_equal(tw_unset_device(TW_DEVICE_CUDA), TW_OK);
  tw_scan_result r = TW_SCAN_RESULT_INIT;
  assert_int_equal(tw_scan(&r, &p.device), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "orphan"));
  assert_int_equal(register_cuda(state), 0);
  assert_int_equal(tw_scan(&r, &p.device), TW_OK);
  assert_int_equal(r.first_nonfinite_index, -1);
  free_pair(&p);
}

int main(void) {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    fprintf(stderr, "test_cuda_library: no CUDA device (%s); run it on a machine with a GPU\n",
            cudaGetErrorString(error));
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scans_of_cuda_views_agree_with_the_host),
      cmocka_unit_test(stats_of_a_cuda_view_equal_the_host),
      cmocka_unit_test(nan_hook_fails_on_a_cuda_loss),
      cmocka_unit_test(an_unregistered_type_is_refused_by_name),
  };
  return cmocka_run_group_tests(tests, register_cuda, unregister_cuda);
}
