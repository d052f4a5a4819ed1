/* Bad arguments to every numerics entry point: TW_INVALID_ARGUMENT, a message naming the argument, the
 * out-parameter untouched, no crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

static float data[4] = {1, 2, 3, 4};
static const int64_t shape[1] = {4};

static tw_tensor good_tensor(void) {
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.data = data;
  t.ndim = 1;
  t.shape = shape;
  return t;
}

/* Calls every entry point on `t` and expects each to fail naming `needle`, leaving outputs untouched. */
static void expect_rejected(const tw_tensor *t, const char *needle) {
  tw_scan_result scan = TW_SCAN_RESULT_INIT;
  scan.nan_count = 77;
  assert_int_equal(tw_scan(&scan, t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), needle));
  assert_int_equal(scan.nan_count, 77);

  int has = 77;
  assert_int_equal(tw_has_nonfinite(&has, t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), needle));
  assert_int_equal(has, 77);

  tw_numerics_stats stats = TW_NUMERICS_STATS_INIT;
  stats.element_count = 77;
  assert_int_equal(tw_tensor_stats(&stats, t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), needle));
  assert_int_equal(stats.element_count, 77);

  assert_int_equal(tw_check_numerics(t, "msg"), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), needle));
}

static void null_tensor(void **state) {
  (void)state;
  expect_rejected(NULL, "tensor is NULL");
}

static void tensor_struct_size_too_small(void **state) {
  (void)state;
  tw_tensor t = good_tensor();
  t.struct_size = 4;
  expect_rejected(&t, "tensor has struct_size 4");
  t.struct_size = 0;
  expect_rejected(&t, "tensor has struct_size 0");
}

static void invalid_dtypes(void **state) {
  (void)state;
  tw_tensor t = good_tensor();
  t.dtype = TW_DTYPE_INVALID;
  expect_rejected(&t, "tensor has invalid dtype 0");
  t.dtype = 99;
  expect_rejected(&t, "tensor has invalid dtype 99");
  t.dtype = -5;
  expect_rejected(&t, "tensor has invalid dtype -5");
}

static void malformed_shapes(void **state) {
  (void)state;
  tw_tensor t = good_tensor();
  t.ndim = -1;
  expect_rejected(&t, "tensor has negative ndim");
  t = good_tensor();
  t.shape = NULL;
  expect_rejected(&t, "tensor has ndim 1 but shape is NULL");
  const int64_t negative[2] = {3, -2};
  t = good_tensor();
  t.ndim = 2;
  t.shape = negative;
  expect_rejected(&t, "tensor has negative extent");
  const int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 2};
  t.ndim = 3;
  t.shape = huge;
  expect_rejected(&t, "tensor has more elements than fit in int64");
}

static void null_data_with_elements(void **state) {
  (void)state;
  tw_tensor t = good_tensor();
  t.data = NULL;
  expect_rejected(&t, "tensor has 4 elements but data is NULL");
}

static void null_and_undersized_outputs(void **state) {
  (void)state;
  const tw_tensor t = good_tensor();
  assert_int_equal(tw_scan(NULL, &t), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "out is NULL");
  assert_int_equal(tw_has_nonfinite(NULL, &t), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "out is NULL");
  assert_int_equal(tw_tensor_stats(NULL, &t), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "out is NULL");

  tw_scan_result scan = TW_SCAN_RESULT_INIT;
  scan.struct_size = 8;
  assert_int_equal(tw_scan(&scan, &t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "out has struct_size 8"));
  assert_non_null(strstr(tw_last_error_message(), "TW_SCAN_RESULT_INIT"));
  assert_int_equal(scan.first_nonfinite_index, -1);

  tw_numerics_stats stats = TW_NUMERICS_STATS_INIT;
  stats.struct_size = 0;
  assert_int_equal(tw_tensor_stats(&stats, &t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "out has struct_size 0"));
  assert_non_null(strstr(tw_last_error_message(), "TW_NUMERICS_STATS_INIT"));

  /* A caller compiled against a later, larger struct is served. */
  struct {
    tw_scan_result v1;
    int64_t later_field;
  } bigger;
  memset(&bigger, 0, sizeof bigger);
  bigger.v1.struct_size = (uint32_t)sizeof bigger;
  bigger.later_field = 5;
  assert_int_equal(tw_scan(&bigger.v1, &t), TW_OK);
  assert_int_equal(bigger.v1.first_nonfinite_index, -1);
  assert_int_equal(bigger.later_field, 5);
}

static void null_message(void **state) {
  (void)state;
  const tw_tensor t = good_tensor();
  assert_int_equal(tw_check_numerics(&t, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "message is NULL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(null_tensor),
      cmocka_unit_test(tensor_struct_size_too_small),
      cmocka_unit_test(invalid_dtypes),
      cmocka_unit_test(malformed_shapes),
      cmocka_unit_test(null_data_with_elements),
      cmocka_unit_test(null_and_undersized_outputs),
      cmocka_unit_test(null_message),
  };
  return cmocka_run_group_tests_name("numerics arguments", tests, NULL, NULL);
}
