/* Known-answer suites for NaN/Inf scanning and statistics, run against any implementation of the three
 * entry points: the public C API (test_scan.c) and the internal kernels on each SIMD target in turn
 * (test_dispatch_targets.cc). Every check compares with the independent model in reference.h and
 * fails the current cmocka test with the dtype and position on a mismatch. */
#ifndef TRAINWATCH_TESTS_NUMERICS_KNOWN_ANSWERS_H
#define TRAINWATCH_TESTS_NUMERICS_KNOWN_ANSWERS_H

#include <trainwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct numerics_api {
  tw_status (*scan)(tw_scan_result *out, const tw_tensor *tensor);
  tw_status (*has_nonfinite)(int *out, const tw_tensor *tensor);
  tw_status (*stats)(tw_numerics_stats *out, const tw_tensor *tensor);
} numerics_api;

/* Every bit pattern of float16, bfloat16, float8_e4m3fn and float8_e5m2: each alone among 1.0s (counts,
 * first index, and the stats, which checks the decoded value exactly), then all of them in one tensor
 * forwards and backwards. */
void ka_exhaustive_narrow_formats(const numerics_api *api);

/* float32 / float64: ±0, subnormals, extremes, ±Inf, quiet / signalling / negative NaNs with smallest and
 * largest payloads, each alone at several positions; then random bit patterns in bulk. */
void ka_special_values_wide_formats(const numerics_api *api);

/* Every float dtype: views starting at element offsets 0..max_offset-1 of an aligned buffer, lengths
 * 0..max_length, with no bad element, one in the middle and one last; every position for short
 * lengths; byte-misaligned starts. */
void ka_offsets_and_lengths(const numerics_api *api, int max_offset, int max_length);

/* Long tensors with bad elements on and around every block and vector boundary, several at once, and all. */
void ka_block_boundaries(const numerics_api *api);

/* Strided views: steps 2, -1, -3 and 0, padded row pitch (long and short rows), transposed, 3-D with a
 * negative stride and unit dimensions, strided runs longer than the gather buffer; bad elements outside
 * the view must not count. */
void ka_strided_views(const numerics_api *api);

/* Zero-size views (data NULL allowed) and 0-d scalars. */
void ka_zero_size_and_scalars(const numerics_api *api);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_TESTS_NUMERICS_KNOWN_ANSWERS_H */
