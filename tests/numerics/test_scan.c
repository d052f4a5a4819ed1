/* tw_scan, tw_has_nonfinite and tw_tensor_stats's counts against the independent reference model: every
 * pattern of the 8- and 16-bit formats, f32/f64 special values, offsets and lengths, block boundaries,
 * strided views, zero-size views; integer dtypes; the early exit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "known_answers.h"
#include "reference.h"

static const numerics_api c_api = {tw_scan, tw_has_nonfinite, tw_tensor_stats};

static void every_pattern_of_16_and_8_bit_formats(void **state) {
  (void)state;
  ka_exhaustive_narrow_formats(&c_api);
}

static void special_values_of_f32_and_f64(void **state) {
  (void)state;
  ka_special_values_wide_formats(&c_api);
}

static void every_offset_and_length_around_one_bad_element(void **state) {
  (void)state;
  ka_offsets_and_lengths(&c_api, 128, 1024);
}

static void bad_elements_on_block_boundaries(void **state) {
  (void)state;
  ka_block_boundaries(&c_api);
}

static void strided_views(void **state) {
  (void)state;
  ka_strided_views(&c_api);
}

static void zero_size_views_and_scalars(void **state) {
  (void)state;
  ka_zero_size_and_scalars(&c_api);
}

static void integer_and_bool_views_are_finite(void **state) {
  (void)state;
  static const tw_dtype integers[] = {TW_BOOL,  TW_INT8,   TW_INT16,  TW_INT32, TW_INT64,
                                      TW_UINT8, TW_UINT16, TW_UINT32, TW_UINT64};
  uint64_t data[64];
  memset(data, 0xFF, sizeof data); /* all-ones bits: a NaN pattern in every float format */
  const int64_t shape[1] = {64};
  for (size_t i = 0; i < sizeof integers / sizeof integers[0]; ++i) {
    const tw_tensor t = ref_view(integers[i], data, 1, shape, NULL);
    tw_scan_result r = TW_SCAN_RESULT_INIT;
    assert_int_equal(tw_scan(&r, &t), TW_OK);
    assert_int_equal(r.nan_count + r.pos_inf_count + r.neg_inf_count, 0);
    assert_int_equal(r.first_nonfinite_index, -1);
    int has = -1;
    assert_int_equal(tw_has_nonfinite(&has, &t), TW_OK);
    assert_int_equal(has, 0);
  }
}

static void has_nonfinite_stops_at_the_first_bad_block(void **state) {
  (void)state;
  /* 2^40 elements broadcast from one NaN: the call can only return by stopping at the first block. */
  float nan_value = NAN;
  const int64_t shape[1] = {(int64_t)1 << 40};
  const int64_t strides[1] = {0};
  const tw_tensor t = ref_view(TW_FLOAT32, &nan_value, 1, shape, strides);
  int has = 0;
  assert_int_equal(tw_has_nonfinite(&has, &t), TW_OK);
  assert_int_equal(has, 1);
}

static void struct_init_functions_match_the_macros(void **state) {
  (void)state;
  const tw_scan_result scan_init = TW_SCAN_RESULT_INIT;
  tw_scan_result scan;
  memset(&scan, 0x5A, sizeof scan);
  tw_scan_result_init(&scan);
  assert_int_equal(scan.struct_size, scan_init.struct_size);
  assert_int_equal(scan.struct_size, sizeof(tw_scan_result));
  assert_int_equal(scan.nan_count + scan.pos_inf_count + scan.neg_inf_count, 0);
  assert_int_equal(scan.first_nonfinite_index, -1);
  tw_scan_result_init(NULL); /* no-op */

  const tw_numerics_stats stats_init = TW_NUMERICS_STATS_INIT;
  tw_numerics_stats stats;
  memset(&stats, 0x5A, sizeof stats);
  tw_numerics_stats_init(&stats);
  assert_int_equal(stats.struct_size, stats_init.struct_size);
  assert_int_equal(stats.struct_size, sizeof(tw_numerics_stats));
  assert_int_equal(stats.first_nonfinite_index, -1);
  assert_int_equal(stats.element_count, 0);
  tw_numerics_stats_init(NULL);
}

static void target_name_is_a_known_target(void **state) {
  (void)state;
  static const char *const known[] = {"AVX3_DL", "AVX3", "AVX2", "SSE4", "SSSE3", "EMU128", "SCALAR"};
  const char *target = tw_numerics_target();
  assert_non_null(target);
  int found = 0;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) found |= strcmp(target, known[i]) == 0;
  assert_true(found);
  print_message("# kernels dispatch to %s\n", target);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_pattern_of_16_and_8_bit_formats),
      cmocka_unit_test(special_values_of_f32_and_f64),
      cmocka_unit_test(every_offset_and_length_around_one_bad_element),
      cmocka_unit_test(bad_elements_on_block_boundaries),
      cmocka_unit_test(strided_views),
      cmocka_unit_test(zero_size_views_and_scalars),
      cmocka_unit_test(integer_and_bool_views_are_finite),
      cmocka_unit_test(has_nonfinite_stops_at_the_first_bad_block),
      cmocka_unit_test(struct_init_functions_match_the_macros),
      cmocka_unit_test(target_name_is_a_known_target),
  };
  return cmocka_run_group_tests_name("numerics scan", tests, NULL, NULL);
}
