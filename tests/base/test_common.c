/* Versions, status names, error messages, dtypes and tensor views (trainwatch/common.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

static void runtime_version_matches_header(void **state) {
  (void)state;
  assert_int_equal(tw_version_number(), TW_VERSION_NUMBER);
  assert_string_equal(tw_version_string(), TW_VERSION_STRING);
}

static void status_names_are_stable(void **state) {
  (void)state;
  assert_string_equal(tw_status_name(TW_OK), "TW_OK");
  assert_string_equal(tw_status_name(TW_ABORTED), "TW_ABORTED");
  assert_string_equal(tw_status_name(TW_NAN_LOSS), "TW_NAN_LOSS");
  assert_string_equal(tw_status_name(TW_STOP_ITERATION), "TW_STOP_ITERATION");
  assert_string_equal(tw_status_name(12345), "TW_UNKNOWN_STATUS");
  /* TF's canonical codes keep their numbers so bindings map them one to one. */
  assert_int_equal(TW_ABORTED, 10);
  assert_int_equal(TW_OUT_OF_RANGE, 11);
  assert_int_equal(TW_UNAVAILABLE, 14);
  assert_int_equal(TW_DATA_LOSS, 15);
}

static void set_error_stores_message_and_returns_code(void **state) {
  (void)state;
  assert_int_equal(tw_set_error(TW_NOT_FOUND, "no such thing"), TW_NOT_FOUND);
  assert_string_equal(tw_last_error_message(), "no such thing");
  assert_int_equal(tw_set_error(TW_INTERNAL, NULL), TW_INTERNAL);
  assert_string_equal(tw_last_error_message(), "");
}

static void dtype_sizes_and_names(void **state) {
  (void)state;
  static const struct {
    tw_dtype dtype;
    size_t size;
    const char *name;
  } expected[] = {
      {TW_BOOL, 1, "bool"},
      {TW_INT8, 1, "int8"},
      {TW_INT16, 2, "int16"},
      {TW_INT32, 4, "int32"},
      {TW_INT64, 8, "int64"},
      {TW_UINT8, 1, "uint8"},
      {TW_UINT16, 2, "uint16"},
      {TW_UINT32, 4, "uint32"},
      {TW_UINT64, 8, "uint64"},
      {TW_FLOAT16, 2, "float16"},
      {TW_BFLOAT16, 2, "bfloat16"},
      {TW_FLOAT32, 4, "float32"},
      {TW_FLOAT64, 8, "float64"},
      {TW_FLOAT8_E4M3FN, 1, "float8_e4m3fn"},
      {TW_FLOAT8_E5M2, 1, "float8_e5m2"},
  };
  for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); ++i) {
    assert_int_equal(tw_dtype_size(expected[i].dtype), expected[i].size);
    assert_string_equal(tw_dtype_name(expected[i].dtype), expected[i].name);
  }
  assert_int_equal(tw_dtype_size(TW_DTYPE_INVALID), 0);
  assert_int_equal(tw_dtype_size((tw_dtype)99), 0);
  assert_string_equal(tw_dtype_name((tw_dtype)-1), "invalid");
}

static void tensor_element_count_validates(void **state) {
  (void)state;
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  tw_tensor t;
  tw_tensor_init(&t);
  assert_int_equal(t.struct_size, sizeof(tw_tensor));
  t.dtype = TW_FLOAT32;
  t.data = data;
  assert_int_equal(tw_tensor_element_count(&t), 1); /* a scalar */
  t.ndim = 2;
  t.shape = shape;
  assert_int_equal(tw_tensor_element_count(&t), 6);

  shape[0] = -1;
  assert_int_equal(tw_tensor_element_count(&t), -1);
  assert_non_null(strstr(tw_last_error_message(), "negative extent"));
  shape[0] = 0;
  t.data = NULL; /* an empty tensor needs no data */
  assert_int_equal(tw_tensor_element_count(&t), 0);
  t.shape = NULL;
  assert_int_equal(tw_tensor_element_count(&t), -1);
  t.shape = shape;
  t.dtype = 77;
  assert_int_equal(tw_tensor_element_count(&t), -1);
  assert_non_null(strstr(tw_last_error_message(), "invalid dtype"));
  t.dtype = TW_FLOAT32;
  t.struct_size = 4;
  assert_int_equal(tw_tensor_element_count(&t), -1);
  assert_non_null(strstr(tw_last_error_message(), "struct_size"));
  assert_int_equal(tw_tensor_element_count(NULL), -1);
  {
    int64_t huge[3] = {INT64_MAX / 2, 4, 1};
    tw_tensor h = TW_TENSOR_INIT;
    h.dtype = TW_FLOAT32;
    h.data = data;
    h.ndim = 3;
    h.shape = huge;
    assert_int_equal(tw_tensor_element_count(&h), -1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runtime_version_matches_header),
      cmocka_unit_test(status_names_are_stable),
      cmocka_unit_test(set_error_stores_message_and_returns_code),
      cmocka_unit_test(dtype_sizes_and_names),
      cmocka_unit_test(tensor_element_count_validates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
