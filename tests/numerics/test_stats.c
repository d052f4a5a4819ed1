/* tw_tensor_stats: finite min / max / mean against the reference model, precision of the mean, integer and
 * bool dtypes, tensors without finite elements. (Counts and first index are covered for every case of
 * test_scan.c too: its checks compare all the statistics.) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "reference.h"

static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13, *state ^= *state >> 7, *state ^= *state << 17;
  return *state;
}

static tw_numerics_stats stats_of(const tw_tensor *t) {
  tw_numerics_stats s = TW_NUMERICS_STATS_INIT;
  assert_int_equal(tw_tensor_stats(&s, t), TW_OK);
  return s;
}

static void expect_matches_reference(const tw_tensor *t) {
  const ref_stats want = ref_stats_of(t);
  const tw_numerics_stats got = stats_of(t);
  assert_int_equal(got.element_count, want.element_count);
  assert_int_equal(got.finite_count, want.finite_count);
  assert_int_equal(got.nan_count, want.nan_count);
  assert_int_equal(got.pos_inf_count, want.pos_inf_count);
  assert_int_equal(got.neg_inf_count, want.neg_inf_count);
  assert_int_equal(got.first_nonfinite_index, want.first_nonfinite_index);
  assert_true(got.min == want.min);
  assert_true(got.max == want.max);
  assert_true(fabs(got.mean - want.mean) <= 1e-12 * want.mean_abs);
}

static void random_values_of_every_float_dtype(void **state) {
  (void)state;
  enum { kCount = 50021 };
  unsigned char *data = malloc(kCount * 8);
  assert_non_null(data);
  uint64_t seed = 12345;
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    const tw_dtype dtype = ref_float_dtypes[d];
    const size_t bits = 8 * ref_size(dtype);
    for (int64_t i = 0; i < kCount; ++i) {
      /* Random finite patterns with a moderate exponent, a NaN or Inf now and then. */
      uint64_t pattern = next_random(&seed) >> (64 - bits);
      if (ref_classify(dtype, pattern) != REF_FINITE || fabs(ref_value(dtype, pattern)) > 1e6) {
        pattern = i % 97 == 0 ? ref_nan(dtype) : i % 89 == 0 ? ref_neg_inf(dtype) : ref_one(dtype);
      }
      ref_put(dtype, data, i, pattern);
    }
    const int64_t shape[1] = {kCount};
    const tw_tensor t = ref_view(dtype, data, 1, shape, NULL);
    expect_matches_reference(&t);
    const int64_t shape_2d[2] = {101, 301};
    const int64_t strides_2d[2] = {-401, 1}; /* rows walked backwards */
    const tw_tensor rows = ref_view(dtype, data + 40100 * ref_size(dtype), 2, shape_2d, strides_2d);
    expect_matches_reference(&rows);
  }
  free(data);
}

static void mean_is_accurate_over_millions_of_elements(void **state) {
  (void)state;
  /* 0.1f summed four million times: a float accumulator would be off in the 3rd digit. */
  enum { kCount = 4 << 20 };
  float *data = malloc(kCount * sizeof(float));
  assert_non_null(data);
  for (int i = 0; i < kCount; ++i) data[i] = 0.1f;
  const int64_t shape[1] = {kCount};
  const tw_tensor t = ref_view(TW_FLOAT32, data, 1, shape, NULL);
  tw_numerics_stats s = stats_of(&t);
  assert_true(fabs(s.mean - (double)0.1f) <= 1e-15);
  assert_true(s.min == (double)0.1f && s.max == (double)0.1f);

  /* Large values that cancel, with a small signal: 1e7 ± and 1.0s. */
  for (int i = 0; i < kCount; ++i) data[i] = i % 4 == 0 ? 1e7f : i % 4 == 1 ? -1e7f : 1.0f;
  s = stats_of(&t);
  assert_true(fabs(s.mean - 0.5) <= 1e-12);
  free(data);
}

static void no_finite_elements_gives_nan_statistics(void **state) {
  (void)state;
  double data[5] = {NAN, INFINITY, -INFINITY, NAN, -NAN};
  const int64_t shape[1] = {5};
  const tw_tensor t = ref_view(TW_FLOAT64, data, 1, shape, NULL);
  const tw_numerics_stats s = stats_of(&t);
  assert_int_equal(s.element_count, 5);
  assert_int_equal(s.finite_count, 0);
  assert_int_equal(s.nan_count, 3);
  assert_int_equal(s.pos_inf_count, 1);
  assert_int_equal(s.neg_inf_count, 1);
  assert_int_equal(s.first_nonfinite_index, 0);
  assert_true(isnan(s.min) && isnan(s.max) && isnan(s.mean));

  const int64_t empty[1] = {0};
  const tw_tensor none = ref_view(TW_FLOAT32, NULL, 1, empty, NULL);
  const tw_numerics_stats e = stats_of(&none);
  assert_int_equal(e.element_count, 0);
  assert_int_equal(e.finite_count, 0);
  assert_int_equal(e.first_nonfinite_index, -1);
  assert_true(isnan(e.min) && isnan(e.max) && isnan(e.mean));
}

/* A float64 sum beyond DBL_MAX: the mean is +Inf as documented, the elements still count as finite. */
static void overflowing_float64_sum_gives_infinite_mean(void **state) {
  (void)state;
  enum { kCount = 5000 };
  static double data[kCount];
  for (int i = 0; i < kCount; ++i) data[i] = 1.5e308;
  const int64_t shape[1] = {kCount};
  const tw_tensor t = ref_view(TW_FLOAT64, data, 1, shape, NULL);
  const tw_numerics_stats s = stats_of(&t);
  assert_int_equal(s.finite_count, kCount);
  assert_int_equal(s.nan_count + s.pos_inf_count + s.neg_inf_count, 0);
  assert_int_equal(s.first_nonfinite_index, -1);
  assert_true(s.min == 1.5e308 && s.max == 1.5e308);
  assert_true(isinf(s.mean) && s.mean > 0);
}

static void integer_dtypes(void **state) {
  (void)state;
  int32_t i32[6] = {5, -7, 100, 0, 3, -1};
  const int64_t shape[1] = {6};
  tw_tensor t = ref_view(TW_INT32, i32, 1, shape, NULL);
  tw_numerics_stats s = stats_of(&t);
  assert_int_equal(s.finite_count, 6);
  assert_int_equal(s.first_nonfinite_index, -1);
  assert_true(s.min == -7.0 && s.max == 100.0 && s.mean == 100.0 / 6.0);

  uint64_t u64[3] = {UINT64_MAX, 0, 1};
  const int64_t shape3[1] = {3};
  t = ref_view(TW_UINT64, u64, 1, shape3, NULL);
  s = stats_of(&t);
  assert_true(s.min == 0.0 && s.max == 18446744073709551615.0);

  int8_t i8[4] = {-128, 127, -1, 2};
  const int64_t strides[1] = {-1};
  const int64_t shape4[1] = {4};
  t = ref_view(TW_INT8, &i8[3], 1, shape4, strides);
  s = stats_of(&t);
  assert_true(s.min == -128.0 && s.max == 127.0 && s.mean == 0.0);

  unsigned char flags[4] = {0, 1, 2, 0}; /* any non-zero byte is true */
  t = ref_view(TW_BOOL, flags, 1, shape4, NULL);
  s = stats_of(&t);
  assert_true(s.min == 0.0 && s.max == 1.0 && s.mean == 0.5);

  /* Every integer dtype against the reference, with odd strides. */
  static const tw_dtype integers[] = {TW_INT8,   TW_INT16,  TW_INT32,  TW_INT64, TW_UINT8,
                                      TW_UINT16, TW_UINT32, TW_UINT64, TW_BOOL};
  unsigned char buffer[3000 * 8];
  uint64_t seed = 99;
  for (size_t i = 0; i < sizeof buffer; ++i) buffer[i] = (unsigned char)next_random(&seed);
  for (size_t i = 0; i < sizeof integers / sizeof integers[0]; ++i) {
    const int64_t shape2[2] = {30, 40};
    const int64_t strides2[2] = {97, 2};
    t = ref_view(integers[i], buffer, 2, shape2, strides2);
    s = stats_of(&t);
    const ref_stats want = ref_stats_of(&t);
    assert_true(s.min == want.min && s.max == want.max);
    assert_true(fabs(s.mean - want.mean) <= 1e-12 * want.mean_abs);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_values_of_every_float_dtype),
      cmocka_unit_test(mean_is_accurate_over_millions_of_elements),
      cmocka_unit_test(no_finite_elements_gives_nan_statistics),
      cmocka_unit_test(overflowing_float64_sum_gives_infinite_mean),
      cmocka_unit_test(integer_dtypes),
  };
  return cmocka_run_group_tests_name("numerics stats", tests, NULL, NULL);
}
