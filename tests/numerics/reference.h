/* An independent scalar model of the numerics layer for the tests: classifies and decodes every float
 * dtype from its sign / exponent / mantissa fields (never through the library), and walks tensor views
 * index by index. */
#ifndef TRAINWATCH_TESTS_NUMERICS_REFERENCE_H
#define TRAINWATCH_TESTS_NUMERICS_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include <trainwatch.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ref_class { REF_FINITE, REF_NAN, REF_POS_INF, REF_NEG_INF } ref_class;

/* The six float dtypes, in a fixed order for loops. */
#define REF_FLOAT_DTYPE_COUNT 6
extern const tw_dtype ref_float_dtypes[REF_FLOAT_DTYPE_COUNT];

/* Element size and name, so that the model needs nothing from the library but its header's types. */
size_t ref_size(tw_dtype dtype);
const char *ref_name(tw_dtype dtype);

ref_class ref_classify(tw_dtype dtype, uint64_t bits);
double ref_value(tw_dtype dtype, uint64_t bits); /* the value of a finite pattern */

/* Patterns: 1.0, and a quiet NaN, +Inf, -Inf (NaN for float8_e4m3fn, which has no infinities). */
uint64_t ref_one(tw_dtype dtype);
uint64_t ref_nan(tw_dtype dtype);
uint64_t ref_pos_inf(tw_dtype dtype);
uint64_t ref_neg_inf(tw_dtype dtype);

/* Element i of a buffer of `dtype` elements, as raw bits (any alignment). */
uint64_t ref_get(tw_dtype dtype, const void *base, int64_t i);
void ref_put(tw_dtype dtype, void *base, int64_t i, uint64_t bits);
void ref_fill(tw_dtype dtype, void *base, int64_t count, uint64_t bits);

/* What the library should report for a view, computed element by element in row-major order. */
typedef struct ref_stats {
  int64_t element_count, finite_count, nan_count, pos_inf_count, neg_inf_count, first_nonfinite_index;
  double min, max, mean, mean_abs; /* NaN when finite_count is 0; mean_abs scales the mean's tolerance */
} ref_stats;
ref_stats ref_stats_of(const tw_tensor *t);
/* The element offset (through the strides) of row-major index k of a view. */
int64_t ref_offset(const tw_tensor *t, int64_t k);
/* The row-major index of a view's first NaN, -1 if none (integer views: -1). */
int64_t ref_first_nan(const tw_tensor *t);
/* Copies a view's elements in row-major order into dst (contiguous, element_count elements). */
void ref_gather(const tw_tensor *t, void *dst);

/* A view over `data` with the given shape and strides (NULL = row-major); shape/strides must outlive it. */
tw_tensor ref_view(tw_dtype dtype, void *data, int32_t ndim, const int64_t *shape, const int64_t *strides);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_TESTS_NUMERICS_REFERENCE_H */
