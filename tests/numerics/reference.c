#include "reference.h"

#include <math.h>
#include <string.h>

const tw_dtype ref_float_dtypes[REF_FLOAT_DTYPE_COUNT] = {TW_FLOAT64,  TW_FLOAT32,       TW_FLOAT16,
                                                          TW_BFLOAT16, TW_FLOAT8_E4M3FN, TW_FLOAT8_E5M2};

size_t ref_size(tw_dtype dtype) {
  switch (dtype) {
    case TW_BOOL:
    case TW_INT8:
    case TW_UINT8:
    case TW_FLOAT8_E4M3FN:
    case TW_FLOAT8_E5M2: return 1;
    case TW_INT16:
    case TW_UINT16:
    case TW_FLOAT16:
    case TW_BFLOAT16: return 2;
    case TW_INT32:
    case TW_UINT32:
    case TW_FLOAT32: return 4;
    case TW_INT64:
    case TW_UINT64:
    case TW_FLOAT64: return 8;
    default: return 0;
  }
}

const char *ref_name(tw_dtype dtype) {
  switch (dtype) {
    case TW_FLOAT64: return "float64";
    case TW_FLOAT32: return "float32";
    case TW_FLOAT16: return "float16";
    case TW_BFLOAT16: return "bfloat16";
    case TW_FLOAT8_E4M3FN: return "float8_e4m3fn";
    case TW_FLOAT8_E5M2: return "float8_e5m2";
    default: return "integer or bool";
  }
}

typedef struct layout {
  int exponent_bits, mantissa_bits, has_inf;
} layout;

static layout layout_of(tw_dtype dtype) {
  switch (dtype) {
    case TW_FLOAT64: return (layout){11, 52, 1};
    case TW_FLOAT32: return (layout){8, 23, 1};
    case TW_FLOAT16: return (layout){5, 10, 1};
    case TW_BFLOAT16: return (layout){8, 7, 1};
    case TW_FLOAT8_E5M2: return (layout){5, 2, 1};
    case TW_FLOAT8_E4M3FN: return (layout){4, 3, 0};
    default: return (layout){0, 0, 0};
  }
}

ref_class ref_classify(tw_dtype dtype, uint64_t bits) {
  const layout l = layout_of(dtype);
  if (l.exponent_bits == 0) return REF_FINITE; /* integers, bool */
  const uint64_t exponent = (bits >> l.mantissa_bits) & ((1ull << l.exponent_bits) - 1);
  const uint64_t mantissa = bits & ((1ull << l.mantissa_bits) - 1);
  const int negative = (int)((bits >> (l.exponent_bits + l.mantissa_bits)) & 1);
  const uint64_t top_exponent = (1ull << l.exponent_bits) - 1;
  if (!l.has_inf) { /* OCP e4m3fn: only S.1111.111 is NaN */
    return exponent == top_exponent && mantissa == (1ull << l.mantissa_bits) - 1 ? REF_NAN : REF_FINITE;
  }
  if (exponent != top_exponent) return REF_FINITE;
  if (mantissa != 0) return REF_NAN;
  return negative ? REF_NEG_INF : REF_POS_INF;
}

double ref_value(tw_dtype dtype, uint64_t bits) {
  const layout l = layout_of(dtype);
  const int bias = (1 << (l.exponent_bits - 1)) - 1;
  const int64_t exponent = (int64_t)((bits >> l.mantissa_bits) & ((1ull << l.exponent_bits) - 1));
  const double mantissa = (double)(bits & ((1ull << l.mantissa_bits) - 1));
  const int negative = (int)((bits >> (l.exponent_bits + l.mantissa_bits)) & 1);
  const double magnitude = exponent == 0 ? ldexp(mantissa, 1 - bias - l.mantissa_bits)
                                         : ldexp(1.0 + ldexp(mantissa, -l.mantissa_bits), (int)exponent - bias);
  return negative ? -magnitude : magnitude;
}

static uint64_t pattern(tw_dtype dtype, int exponent_all_ones, uint64_t mantissa, int negative) {
  const layout l = layout_of(dtype);
  const uint64_t exponent =
      exponent_all_ones ? (1ull << l.exponent_bits) - 1 : (uint64_t)((1 << (l.exponent_bits - 1)) - 1);
  return ((uint64_t)negative << (l.exponent_bits + l.mantissa_bits)) | (exponent << l.mantissa_bits) | mantissa;
}

uint64_t ref_one(tw_dtype dtype) { return pattern(dtype, 0, 0, 0); }
uint64_t ref_nan(tw_dtype dtype) {
  const layout l = layout_of(dtype);
  return l.has_inf ? pattern(dtype, 1, 1ull << (l.mantissa_bits - 1), 0)
                   : pattern(dtype, 1, (1ull << l.mantissa_bits) - 1, 0);
}
uint64_t ref_pos_inf(tw_dtype dtype) { return layout_of(dtype).has_inf ? pattern(dtype, 1, 0, 0) : ref_nan(dtype); }
uint64_t ref_neg_inf(tw_dtype dtype) {
  return layout_of(dtype).has_inf ? pattern(dtype, 1, 0, 1) : pattern(dtype, 1, 7, 1);
}

uint64_t ref_get(tw_dtype dtype, const void *base, int64_t i) {
  const size_t size = ref_size(dtype);
  uint64_t bits = 0;
  unsigned char bytes[8];
  memcpy(bytes, (const unsigned char *)base + i * (int64_t)size, size);
  for (size_t b = 0; b < size; ++b) bits |= (uint64_t)bytes[b] << (8 * b); /* little-endian */
  return bits;
}

void ref_put(tw_dtype dtype, void *base, int64_t i, uint64_t bits) {
  const size_t size = ref_size(dtype);
  unsigned char bytes[8];
  for (size_t b = 0; b < size; ++b) bytes[b] = (unsigned char)(bits >> (8 * b));
  memcpy((unsigned char *)base + i * (int64_t)size, bytes, size);
}

void ref_fill(tw_dtype dtype, void *base, int64_t count, uint64_t bits) {
  for (int64_t i = 0; i < count; ++i) ref_put(dtype, base, i, bits);
}

static int is_float(tw_dtype dtype) { return layout_of(dtype).exponent_bits != 0; }

static double integer_value(tw_dtype dtype, uint64_t bits) {
  switch (dtype) {
    case TW_BOOL: return bits != 0 ? 1.0 : 0.0;
    case TW_INT8: return (double)(int8_t)bits;
    case TW_INT16: return (double)(int16_t)bits;
    case TW_INT32: return (double)(int32_t)bits;
    case TW_INT64: return (double)(int64_t)bits;
    default: return (double)bits; /* unsigned */
  }
}

int64_t ref_offset(const tw_tensor *t, int64_t k) {
  int64_t rest = k, offset = 0, step = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    const int64_t stride = t->strides != NULL ? t->strides[d] : step;
    offset += (rest % t->shape[d]) * stride;
    rest /= t->shape[d];
    step *= t->shape[d];
  }
  return offset;
}

static int64_t element_count(const tw_tensor *t) {
  int64_t count = 1;
  for (int32_t d = 0; d < t->ndim; ++d) count *= t->shape[d];
  return count;
}

int64_t ref_first_nan(const tw_tensor *t) {
  const int64_t count = element_count(t);
  if (!is_float((tw_dtype)t->dtype)) return -1;
  for (int64_t k = 0; k < count; ++k)
    if (ref_classify((tw_dtype)t->dtype, ref_get((tw_dtype)t->dtype, t->data, ref_offset(t, k))) == REF_NAN) return k;
  return -1;
}

void ref_gather(const tw_tensor *t, void *dst) {
  const int64_t count = element_count(t);
  for (int64_t k = 0; k < count; ++k)
    ref_put((tw_dtype)t->dtype, dst, k, ref_get((tw_dtype)t->dtype, t->data, ref_offset(t, k)));
}

ref_stats ref_stats_of(const tw_tensor *t) {
  ref_stats s = {0, 0, 0, 0, 0, -1, NAN, NAN, NAN, NAN};
  const int64_t count = element_count(t);
  s.element_count = count;
  long double sum = 0, sum_abs = 0;
  for (int64_t k = 0; k < count; ++k) {
    const uint64_t bits = ref_get((tw_dtype)t->dtype, t->data, ref_offset(t, k));
    const ref_class c = is_float((tw_dtype)t->dtype) ? ref_classify((tw_dtype)t->dtype, bits) : REF_FINITE;
    if (c != REF_FINITE && s.first_nonfinite_index < 0) s.first_nonfinite_index = k;
    if (c == REF_NAN) ++s.nan_count;
    if (c == REF_POS_INF) ++s.pos_inf_count;
    if (c == REF_NEG_INF) ++s.neg_inf_count;
    if (c != REF_FINITE) continue;
    const double v =
        is_float((tw_dtype)t->dtype) ? ref_value((tw_dtype)t->dtype, bits) : integer_value((tw_dtype)t->dtype, bits);
    if (s.finite_count == 0 || v < s.min) s.min = v;
    if (s.finite_count == 0 || v > s.max) s.max = v;
    ++s.finite_count;
    sum += v;
    sum_abs += fabsl((long double)v);
  }
  if (s.finite_count > 0) {
    s.mean = (double)(sum / s.finite_count);
    s.mean_abs = (double)(sum_abs / s.finite_count);
  }
  return s;
}

tw_tensor ref_view(tw_dtype dtype, void *data, int32_t ndim, const int64_t *shape, const int64_t *strides) {
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = dtype;
  t.data = data;
  t.ndim = ndim;
  t.shape = shape;
  t.strides = strides;
  return t;
}
