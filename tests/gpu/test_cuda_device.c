/* libtrainwatch_cuda's tw_device on a real GPU (not part of the CPU suites: tools/gpu-check runs it).
 *
 * The numerics known-answer suites (tests/numerics/known_answers.h: every bit pattern of the 8- and
 * 16-bit formats, f32/f64 special values, every offset, length and misalignment, block boundaries,
 * zero-size views and scalars) run through the table: each host view is copied to the device at the
 * same alignment (copy_to_device from pinned memory) and counted there (count_nonfinite, record,
 * wait), and its first NaN index is checked against the reference model too. Then what only a device
 * has: many tensors of every dtype in one call, a tensor past 2^31 elements, the ordering after the
 * program's stream and before its later work, copies bit-exact both ways, events, and the errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#define TW_EXPERIMENTAL_API
#include <cuda_runtime_api.h>
#include <trainwatch.h>
#include <trainwatch/cuda.h>

#include "known_answers.h"
#include "reference.h"

#define CUDA_OK(call)                                                                                    \
  do {                                                                                                   \
    cudaError_t e_ = (call);                                                                             \
    if (e_ != cudaSuccess) fail_msg("%s: %s (%s)", #call, cudaGetErrorString(e_), cudaGetErrorName(e_)); \
  } while (0)

#define TW_OK_OR_FAIL(call)                                                                  \
  do {                                                                                       \
    tw_status s_ = (call);                                                                   \
    if (s_ != TW_OK) fail_msg("%s: status %d: %s", #call, (int)s_, tw_last_error_message()); \
  } while (0)

/* The table under test and the buffers the known-answer adapter reuses. */
static tw_device table;
static void *table_state;
enum { kStagingBytes = 1 << 20 };
static unsigned char *device_buffer; /* 256-byte aligned (cudaMalloc) */
static void *staging;                /* pinned */
static tw_device_scan *scan_results; /* pinned */

static void wait_for_table(void) {
  tw_device_event *event = NULL;
  TW_OK_OR_FAIL(table.record(table_state, 0, &event));
  TW_OK_OR_FAIL(table.wait(table_state, event));
  table.release(table_state, event);
}

/* tw_scan through the device: the view's bytes go to device memory at the same offset from a 256-byte
 * boundary (so its alignment is the host view's), then one count_nonfinite. */
static tw_status device_scan(tw_scan_result *out, const tw_tensor *host_view) {
  const int64_t n = tw_tensor_element_count(host_view);
  assert_true(n >= 0);
  const size_t bytes = (size_t)n * tw_dtype_size((tw_dtype)host_view->dtype);
  const size_t offset = (uintptr_t)host_view->data % 256;
  assert_true(bytes + offset <= kStagingBytes);
  tw_tensor view = *host_view;
  view.device_type = TW_DEVICE_CUDA;
  view.device_id = 0;
  view.data = device_buffer + offset;
  view.strides = NULL; /* device views are contiguous: a strided host view is gathered in row-major order */
  if (bytes > 0) {
    if (host_view->strides != NULL)
      ref_gather(host_view, staging);
    else
      memcpy(staging, host_view->data, bytes);
    const tw_device_copy copy = {view.data, staging, bytes, "known answer"};
    TW_OK_OR_FAIL(table.copy_to_device(table_state, 0, &copy, 1));
  }
  TW_OK_OR_FAIL(table.count_nonfinite(table_state, 0, &view, 1, scan_results));
  wait_for_table();
  const tw_device_scan *r = &scan_results[0];
  const int64_t first_nan = ref_first_nan(host_view);
  if (r->first_nan_index != first_nan)
    fail_msg("%s, %lld elements: first_nan_index %lld, want %lld", tw_dtype_name((tw_dtype)view.dtype), (long long)n,
             (long long)r->first_nan_index, (long long)first_nan);
  out->nan_count = r->nan_count;
  out->pos_inf_count = r->pos_inf_count;
  out->neg_inf_count = r->neg_inf_count;
  out->first_nonfinite_index = r->first_nonfinite_index;
  return TW_OK;
}

static tw_status device_has_nonfinite(int *out, const tw_tensor *host_view) {
  tw_scan_result r = TW_SCAN_RESULT_INIT;
  const tw_status status = device_scan(&r, host_view);
  *out = r.first_nonfinite_index >= 0;
  return status;
}

/* The device has no statistics slot: the suites' stats checks run on the host library, unchanged. */
static const numerics_api device_api = {device_scan, device_has_nonfinite, tw_tensor_stats};

static int set_up(void **state) {
  (void)state;
  if (tw_cuda_device_create(&table, &table_state, NULL) != TW_OK) {
    print_error("tw_cuda_device_create: %s\n", tw_last_error_message());
    return -1;
  }
  if (cudaMalloc((void **)&device_buffer, kStagingBytes) != cudaSuccess) return -1;
  if (table.alloc_pinned(table_state, kStagingBytes, &staging) != TW_OK) return -1;
  if (table.alloc_pinned(table_state, 4096 * sizeof(tw_device_scan), (void **)&scan_results) != TW_OK) return -1;
  return 0;
}

static int tear_down(void **state) {
  (void)state;
  table.free_pinned(table_state, scan_results);
  table.free_pinned(table_state, staging);
  (void)cudaFree(device_buffer);
  table.destroy(table_state);
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* The known answers, through the device                                                          */
/* ---------------------------------------------------------------------------------------------- */

static void every_pattern_of_16_and_8_bit_formats(void **state) {
  (void)state;
  ka_exhaustive_narrow_formats(&device_api);
}

static void special_values_of_f32_and_f64(void **state) {
  (void)state;
  ka_special_values_wide_formats(&device_api);
}

static void offsets_lengths_and_misaligned_starts(void **state) {
  (void)state;
  ka_offsets_and_lengths(&device_api, 32, 256);
}

static void bad_elements_on_block_boundaries(void **state) {
  (void)state;
  ka_block_boundaries(&device_api);
}

static void zero_size_views_and_scalars(void **state) {
  (void)state;
  ka_zero_size_and_scalars(&device_api);
}

/* ---------------------------------------------------------------------------------------------- */
/* What only a device has                                                                         */
/* ---------------------------------------------------------------------------------------------- */

static void create_fills_the_table(void **state) {
  (void)state;
  assert_int_equal(table.device_type, TW_DEVICE_CUDA);
  assert_string_equal(table.name, "cuda");
  assert_int_equal(table.struct_size, sizeof(tw_device));
  assert_non_null(table.copy_to_host);
  assert_non_null(table.count_nonfinite);
  assert_non_null(table.destroy);
}

static uint64_t next_random(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Random finite bits of `dtype` (an exponent of all ones loses its top bit). */
static uint64_t random_finite(tw_dtype dtype, uint64_t *seed) {
  const size_t size = ref_size(dtype);
  uint64_t bits = next_random(seed) & (size == 8 ? ~0ULL : ((1ULL << (8 * size)) - 1));
  while (ref_classify(dtype, bits) != REF_FINITE) bits ^= 1ULL << (8 * size - 2); /* top exponent bit */
  return bits;
}

/* 300 tensors of every dtype (integers, bools, empty and scalar views among them), random lengths up to
 * a few chunks, a few bad elements each: ONE count_nonfinite, checked tensor by tensor against the
 * reference model. */
static void many_tensors_in_one_call(void **state) {
  (void)state;
  enum { kTensors = 300 };
  static const tw_dtype dtypes[] = {TW_FLOAT16,     TW_BFLOAT16, TW_FLOAT32, TW_FLOAT64, TW_FLOAT8_E4M3FN,
                                    TW_FLOAT8_E5M2, TW_INT32,    TW_BOOL,    TW_UINT8,   TW_INT64};
  uint64_t seed = 0x9E3779B97F4A7C15ULL;
  tw_tensor views[kTensors], host[kTensors];
  int64_t shapes[kTensors];
  void *device[kTensors];
  for (int i = 0; i < kTensors; i++) {
    const tw_dtype dtype = dtypes[next_random(&seed) % (sizeof dtypes / sizeof dtypes[0])];
    const int64_t n = i % 37 == 5 ? 0 : (int64_t)(next_random(&seed) % 150000) + 1;
    const size_t size = ref_size(dtype), bytes = (size_t)n * size;
    shapes[i] = n;
    void *h = malloc(bytes + 1);
    assert_non_null(h);
    for (int64_t e = 0; e < n; e++) {
      const uint64_t bits = dtype >= TW_FLOAT16 ? random_finite(dtype, &seed) : next_random(&seed); /* ints: any */
      ref_put(dtype, h, e, bits);
    }
    if (dtype >= TW_FLOAT16 && n > 0) {
      const int bad = (int)(next_random(&seed) % 4); /* 0..3 bad elements, some tensors all finite */
      for (int k = 0; k < bad; k++) {
        const int64_t at = (int64_t)(next_random(&seed) % (uint64_t)n);
        const uint64_t kinds[3] = {ref_nan(dtype), ref_pos_inf(dtype), ref_neg_inf(dtype)};
        ref_put(dtype, h, at, kinds[next_random(&seed) % 3]);
      }
    }
    CUDA_OK(cudaMalloc(&device[i], bytes + 16));
    if (bytes) CUDA_OK(cudaMemcpy(device[i], h, bytes, cudaMemcpyHostToDevice));
    tw_tensor_init(&host[i]);
    host[i].dtype = dtype;
    host[i].data = h;
    host[i].name = "many";
    /* every fifth tensor is a scalar view of one element when n == 1; else 1-D */
    host[i].ndim = n == 1 && i % 5 == 0 ? 0 : 1;
    host[i].shape = &shapes[i];
    views[i] = host[i];
    views[i].data = device[i];
    views[i].device_type = TW_DEVICE_CUDA;
  }
  memset(scan_results, 0xAB, kTensors * sizeof(tw_device_scan)); /* poison: every result must be written */
  TW_OK_OR_FAIL(table.count_nonfinite(table_state, 0, views, kTensors, scan_results));
  wait_for_table();
  for (int i = 0; i < kTensors; i++) {
    const ref_stats want = ref_stats_of(&host[i]);
    const tw_device_scan *r = &scan_results[i];
    if (r->nan_count != want.nan_count || r->pos_inf_count != want.pos_inf_count ||
        r->neg_inf_count != want.neg_inf_count || r->first_nonfinite_index != want.first_nonfinite_index ||
        r->first_nan_index != ref_first_nan(&host[i]))
      fail_msg(
          "tensor %d (%s, %lld elements): got nan %lld +inf %lld -inf %lld first %lld first nan %lld, want %lld "
          "%lld %lld %lld %lld",
          i, tw_dtype_name((tw_dtype)host[i].dtype), (long long)shapes[i], (long long)r->nan_count,
          (long long)r->pos_inf_count, (long long)r->neg_inf_count, (long long)r->first_nonfinite_index,
          (long long)r->first_nan_index, (long long)want.nan_count, (long long)want.pos_inf_count,
          (long long)want.neg_inf_count, (long long)want.first_nonfinite_index, (long long)ref_first_nan(&host[i]));
  }
  for (int i = 0; i < kTensors; i++) {
    free(host[i].data);
    CUDA_OK(cudaFree(device[i]));
  }
}

/* A float8_e5m2 tensor of 2^31 + 4096 elements (2 GiB): indices past int32, chunks past 32768 blocks. */
static void a_tensor_past_two_to_the_31_elements(void **state) {
  (void)state;
  const int64_t n = ((int64_t)1 << 31) + 4096;
  const int64_t nan_at = ((int64_t)1 << 31) + 7, ninf_at = ((int64_t)1 << 31) + 100;
  unsigned char *d = NULL;
  CUDA_OK(cudaMalloc((void **)&d, (size_t)n));
  CUDA_OK(cudaMemset(d, 0x3C, (size_t)n)); /* 1.0 in e5m2 */
  const unsigned char nan = 0x7E, ninf = 0xFC;
  CUDA_OK(cudaMemcpy(d + nan_at, &nan, 1, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d + ninf_at, &ninf, 1, cudaMemcpyHostToDevice));
  const int64_t shape[2] = {n / 4096, 4096};
  tw_tensor view = TW_TENSOR_INIT;
  view.dtype = TW_FLOAT8_E5M2;
  view.data = d;
  view.ndim = 2;
  view.shape = shape;
  view.device_type = TW_DEVICE_CUDA;
  TW_OK_OR_FAIL(table.count_nonfinite(table_state, 0, &view, 1, scan_results));
  wait_for_table();
  assert_int_equal(scan_results[0].nan_count, 1);
  assert_int_equal(scan_results[0].pos_inf_count, 0);
  assert_int_equal(scan_results[0].neg_inf_count, 1);
  assert_int_equal(scan_results[0].first_nonfinite_index, nan_at);
  assert_int_equal(scan_results[0].first_nan_index, nan_at);
  CUDA_OK(cudaFree(d));
}

/* The count runs after the program's stream: a NaN the program's stream writes behind 1 GiB of other
 * work is seen. And the program's later work runs after the table's: a copy the program enqueues right
 * after copy_to_device reads the new bytes. */
static void ordered_after_the_program_and_before_its_later_work(void **state) {
  (void)state;
  cudaStream_t program;
  CUDA_OK(cudaStreamCreateWithFlags(&program, cudaStreamNonBlocking));
  tw_device ordered;
  void *ordered_state = NULL;
  TW_OK_OR_FAIL(tw_cuda_device_create(&ordered, &ordered_state, program));
  const size_t busy_bytes = (size_t)1 << 30;
  void *busy = NULL;
  float *t = NULL;
  CUDA_OK(cudaMalloc(&busy, busy_bytes));
  CUDA_OK(cudaMalloc((void **)&t, 1024 * sizeof(float)));
  CUDA_OK(cudaMemset(t, 0, 1024 * sizeof(float)));
  float *nan_host = NULL;
  CUDA_OK(cudaHostAlloc((void **)&nan_host, 1024 * sizeof(float), cudaHostAllocDefault));
  for (int i = 0; i < 1024; i++) nan_host[i] = i == 1000 ? NAN : 2.0f;
  for (int round = 0; round < 3; round++) {
    CUDA_OK(cudaMemsetAsync(busy, round, busy_bytes, program));
    CUDA_OK(cudaMemcpyAsync(t, nan_host, 1024 * sizeof(float), cudaMemcpyHostToDevice, program));
    const int64_t shape[1] = {1024};
    tw_tensor view = TW_TENSOR_INIT;
    view.dtype = TW_FLOAT32;
    view.data = t;
    view.ndim = 1;
    view.shape = shape;
    view.device_type = TW_DEVICE_CUDA;
    TW_OK_OR_FAIL(ordered.count_nonfinite(ordered_state, 0, &view, 1, scan_results));
    tw_device_event *event = NULL;
    TW_OK_OR_FAIL(ordered.record(ordered_state, 0, &event));
    TW_OK_OR_FAIL(ordered.wait(ordered_state, event));
    ordered.release(ordered_state, event);
    assert_int_equal(scan_results[0].nan_count, 1);
    assert_int_equal(scan_results[0].first_nan_index, 1000);
    CUDA_OK(cudaMemsetAsync(t, 0, 1024 * sizeof(float), program)); /* finite again for the next round */
  }
  /* The other way: the program's copy after copy_to_device sees the table's bytes. */
  float *pinned = NULL, *back = NULL;
  TW_OK_OR_FAIL(ordered.alloc_pinned(ordered_state, 1024 * sizeof(float), (void **)&pinned));
  CUDA_OK(cudaHostAlloc((void **)&back, 1024 * sizeof(float), cudaHostAllocDefault));
  for (int i = 0; i < 1024; i++) pinned[i] = (float)i + 0.5f;
  CUDA_OK(cudaMemsetAsync(busy, 7, busy_bytes, program)); /* the table's copy waits behind this */
  const tw_device_copy copy = {t, pinned, 1024 * sizeof(float), "t"};
  TW_OK_OR_FAIL(ordered.copy_to_device(ordered_state, 0, &copy, 1));
  CUDA_OK(cudaMemcpyAsync(back, t, 1024 * sizeof(float), cudaMemcpyDeviceToHost, program));
  CUDA_OK(cudaStreamSynchronize(program));
  assert_memory_equal(back, pinned, 1024 * sizeof(float));
  ordered.free_pinned(ordered_state, pinned);
  CUDA_OK(cudaFreeHost(back));
  CUDA_OK(cudaFreeHost(nan_host));
  CUDA_OK(cudaFree(t));
  CUDA_OK(cudaFree(busy));
  ordered.destroy(ordered_state);
  CUDA_OK(cudaStreamDestroy(program));
}

/* 64 MiB of random bytes in 5 copies of odd sizes: host -> device -> host, bit-exact; query says done
 * after wait. */
static void copies_are_bit_exact_and_events_complete(void **state) {
  (void)state;
  enum { kParts = 5 };
  const size_t sizes[kParts] = {1, 4093, (size_t)1 << 20, ((size_t)32 << 20) + 3, ((size_t)31 << 20) - 7};
  size_t total = 0;
  for (int i = 0; i < kParts; i++) total += sizes[i];
  unsigned char *out = NULL, *in = NULL, *d = NULL;
  TW_OK_OR_FAIL(table.alloc_pinned(table_state, total, (void **)&out));
  TW_OK_OR_FAIL(table.alloc_pinned(table_state, total, (void **)&in));
  assert_int_equal((uintptr_t)out % 64, 0);
  CUDA_OK(cudaMalloc((void **)&d, total));
  uint64_t seed = 42;
  for (size_t i = 0; i < total; i++) out[i] = (unsigned char)next_random(&seed);
  memset(in, 0, total);
  tw_device_copy up[kParts], down[kParts];
  size_t at = 0;
  for (int i = 0; i < kParts; i++) {
    up[i] = (tw_device_copy){d + at, out + at, sizes[i], "part"};
    down[i] = (tw_device_copy){in + at, d + at, sizes[i], "part"};
    at += sizes[i];
  }
  TW_OK_OR_FAIL(table.copy_to_device(table_state, 0, up, kParts));
  TW_OK_OR_FAIL(table.copy_to_host(table_state, 0, down, kParts));
  tw_device_event *event = NULL;
  int done = -1;
  TW_OK_OR_FAIL(table.record(table_state, 0, &event));
  TW_OK_OR_FAIL(table.query(table_state, event, &done));
  assert_true(done == 0 || done == 1);
  TW_OK_OR_FAIL(table.wait(table_state, event));
  TW_OK_OR_FAIL(table.query(table_state, event, &done));
  assert_int_equal(done, 1);
  table.release(table_state, event);
  assert_memory_equal(in, out, total);
  table.free_pinned(table_state, in);
  table.free_pinned(table_state, out);
  CUDA_OK(cudaFree(d));
}

/* Every failure is a status with a message naming the CUDA call or the argument; nothing aborts. */
static void errors_are_statuses_with_messages(void **state) {
  (void)state;
  int devices = 0;
  CUDA_OK(cudaGetDeviceCount(&devices));
  tw_device_event *event = NULL;
  assert_int_equal(table.record(table_state, devices, &event), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "device_id"));
  assert_int_equal(table.count_nonfinite(table_state, -1, NULL, 0, scan_results), TW_OK); /* nothing to do */

  void *huge = NULL;
  const tw_status too_much = table.alloc_pinned(table_state, (size_t)1 << 62, &huge); /* CUDA's code decides */
  assert_true(too_much == TW_RESOURCE_EXHAUSTED || too_much == TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "cudaHostAlloc"));
  assert_null(huge);
  assert_int_equal(table.alloc_pinned(table_state, 0, &huge), TW_INVALID_ARGUMENT);

  tw_tensor bad = TW_TENSOR_INIT;
  bad.dtype = TW_FLOAT32;
  bad.name = "broken";
  bad.ndim = -1;
  bad.data = device_buffer;
  bad.device_type = TW_DEVICE_CUDA;
  assert_int_equal(table.count_nonfinite(table_state, 0, &bad, 1, scan_results), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "broken"));

  void *user_data = (void *)1;
  assert_int_equal(tw_cuda_device_create(NULL, &user_data, NULL), TW_INVALID_ARGUMENT);
  tw_device t2;
  assert_int_equal(tw_cuda_device_create(&t2, NULL, NULL), TW_INVALID_ARGUMENT);

  /* The table still works after all of that. */
  TW_OK_OR_FAIL(table.record(table_state, 0, &event));
  TW_OK_OR_FAIL(table.wait(table_state, event));
  table.release(table_state, event);
}

/* Integer and bool views are never read: a pointer that is not device memory gives counts 0, indices -1. */
static void integer_views_are_not_read(void **state) {
  (void)state;
  const int64_t shape[1] = {1 << 20};
  tw_tensor views[2] = {TW_TENSOR_INIT, TW_TENSOR_INIT};
  views[0].dtype = TW_INT32;
  views[1].dtype = TW_BOOL;
  for (int i = 0; i < 2; i++) {
    views[i].data = (void *)(uintptr_t)0x10; /* would fault if read */
    views[i].ndim = 1;
    views[i].shape = shape;
    views[i].device_type = TW_DEVICE_CUDA;
  }
  memset(scan_results, 0xAB, 2 * sizeof(tw_device_scan));
  TW_OK_OR_FAIL(table.count_nonfinite(table_state, 0, views, 2, scan_results));
  wait_for_table();
  for (int i = 0; i < 2; i++) {
    assert_int_equal(scan_results[i].nan_count + scan_results[i].pos_inf_count + scan_results[i].neg_inf_count, 0);
    assert_int_equal(scan_results[i].first_nonfinite_index, -1);
    assert_int_equal(scan_results[i].first_nan_index, -1);
  }
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    fprintf(stderr, "test_cuda_device: no CUDA device (%s); run it on a machine with a GPU\n",
            cudaGetErrorString(cudaGetDeviceCount(&devices)));
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(create_fills_the_table),
      cmocka_unit_test(every_pattern_of_16_and_8_bit_formats),
      cmocka_unit_test(special_values_of_f32_and_f64),
      cmocka_unit_test(offsets_lengths_and_misaligned_starts),
      cmocka_unit_test(bad_elements_on_block_boundaries),
      cmocka_unit_test(zero_size_views_and_scalars),
      cmocka_unit_test(integer_views_are_not_read),
      cmocka_unit_test(many_tensors_in_one_call),
      cmocka_unit_test(a_tensor_past_two_to_the_31_elements),
      cmocka_unit_test(ordered_after_the_program_and_before_its_later_work),
      cmocka_unit_test(copies_are_bit_exact_and_events_complete),
      cmocka_unit_test(errors_are_statuses_with_messages),
  };
  return cmocka_run_group_tests(tests, set_up, tear_down);
}
