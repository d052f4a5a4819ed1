/* tw_check_numerics: TF's CheckNumerics texts and status, for every float dtype. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "reference.h"

enum { kCount = 300 };

/* Runs check_numerics on a 1-D tensor of 1.0s with the given bad patterns at the given positions. */
static tw_status check(tw_dtype dtype, const uint64_t *bad, const int64_t *positions, int n_bad, const char *message) {
  static unsigned char data[kCount * 8];
  ref_fill(dtype, data, kCount, ref_one(dtype));
  for (int i = 0; i < n_bad; ++i) ref_put(dtype, data, positions[i], bad[i]);
  const int64_t shape[1] = {kCount};
  const tw_tensor t = ref_view(dtype, data, 1, shape, NULL);
  return tw_check_numerics(&t, message);
}

static void finite_tensors_pass(void **state) {
  (void)state;
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    assert_int_equal(check(ref_float_dtypes[d], NULL, NULL, 0, "all good"), TW_OK);
  }
  int32_t integers[3] = {-1, -1, -1};
  const int64_t shape[1] = {3};
  const tw_tensor t = ref_view(TW_INT32, integers, 1, shape, NULL);
  assert_int_equal(tw_check_numerics(&t, "ints"), TW_OK);
}

/* TF: "<message> : Tensor had NaN values", InvalidArgumentError. */
static void nan_text_matches_tensorflow(void **state) {
  (void)state;
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    const tw_dtype dtype = ref_float_dtypes[d];
    const uint64_t bad[1] = {ref_nan(dtype)};
    const int64_t at[1] = {123};
    assert_int_equal(check(dtype, bad, at, 1, "gradient of dense/kernel"), TW_INVALID_ARGUMENT);
    assert_string_equal(tw_last_error_message(), "gradient of dense/kernel : Tensor had NaN values");
  }
}

static void inf_text_matches_tensorflow(void **state) {
  (void)state;
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    const tw_dtype dtype = ref_float_dtypes[d];
    if (dtype == TW_FLOAT8_E4M3FN) continue; /* no infinities */
    const uint64_t bad[2] = {ref_neg_inf(dtype), ref_pos_inf(dtype)};
    const int64_t at[2] = {0, 299};
    assert_int_equal(check(dtype, bad, at, 2, "loss"), TW_INVALID_ARGUMENT);
    assert_string_equal(tw_last_error_message(), "loss : Tensor had Inf values");
  }
}

static void inf_and_nan_text_matches_tensorflow(void **state) {
  (void)state;
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    const tw_dtype dtype = ref_float_dtypes[d];
    if (dtype == TW_FLOAT8_E4M3FN) continue;
    const uint64_t bad[2] = {ref_pos_inf(dtype), ref_nan(dtype)};
    const int64_t at[2] = {17, 250};
    assert_int_equal(check(dtype, bad, at, 2, "LossTensor is inf or nan"), TW_INVALID_ARGUMENT);
    assert_string_equal(tw_last_error_message(), "LossTensor is inf or nan : Tensor had Inf and NaN values");
  }
}

static void e4m3fn_all_ones_patterns_are_nan(void **state) {
  (void)state;
  const uint64_t bad[2] = {0x7F, 0xFF};
  const int64_t at[2] = {3, 4};
  assert_int_equal(check(TW_FLOAT8_E4M3FN, bad, at, 2, "fp8"), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "fp8 : Tensor had NaN values");
}

static void empty_message_and_strided_views(void **state) {
  (void)state;
  float data[8] = {1, NAN, 2, 3, 4, 5, 6, 7};
  const int64_t shape[1] = {4};
  const int64_t every_other[1] = {2};
  tw_tensor t = ref_view(TW_FLOAT32, data, 1, shape, every_other); /* 1, 2, 4, 6: the NaN is skipped */
  assert_int_equal(tw_check_numerics(&t, ""), TW_OK);
  t.data = &data[1]; /* NaN, 3, 5, 7 */
  assert_int_equal(tw_check_numerics(&t, ""), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), " : Tensor had NaN values");
}

static void long_messages_are_kept_whole(void **state) {
  (void)state;
  char message[2000];
  memset(message, 'm', sizeof message - 1);
  message[sizeof message - 1] = '\0';
  const uint64_t bad[1] = {ref_nan(TW_FLOAT32)};
  const int64_t at[1] = {0};
  assert_int_equal(check(TW_FLOAT32, bad, at, 1, message), TW_INVALID_ARGUMENT);
  assert_int_equal(strlen(tw_last_error_message()), strlen(message) + strlen(" : Tensor had NaN values"));
  assert_memory_equal(tw_last_error_message(), message, strlen(message));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(finite_tensors_pass),
      cmocka_unit_test(nan_text_matches_tensorflow),
      cmocka_unit_test(inf_text_matches_tensorflow),
      cmocka_unit_test(inf_and_nan_text_matches_tensorflow),
      cmocka_unit_test(e4m3fn_all_ones_patterns_are_nan),
      cmocka_unit_test(empty_message_and_strided_views),
      cmocka_unit_test(long_messages_are_kept_whole),
  };
  return cmocka_run_group_tests_name("numerics check_numerics", tests, NULL, NULL);
}
