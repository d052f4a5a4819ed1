#include "known_answers.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference.h"

/* ---------------------------------------------------------------------------------------------- */
/* Checking one view                                                                              */
/* ---------------------------------------------------------------------------------------------- */

static int same_or_both_nan(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* The stats's mean is a double sum of the finite values: allow rounding relative to their magnitude. */
static int mean_close(double got, const ref_stats *want) {
  if (isnan(want->mean)) return isnan(got);
  return fabs(got - want->mean) <= 1e-10 * want->mean_abs;
}

/* Runs scan, has_nonfinite and tensor_stats on `t` and fails the test, naming the context (printf
 * format), the field and both results, unless everything matches `want`. */
static void expect_view(const numerics_api *api, const tw_tensor *t, const ref_stats *want, const char *context, ...) {
  tw_scan_result scan = TW_SCAN_RESULT_INIT;
  tw_numerics_stats stats = TW_NUMERICS_STATS_INIT;
  int has = -1;
  const char *problem = NULL;
  if (api->scan(&scan, t) != TW_OK)
    problem = "scan failed";
  else if (scan.nan_count != want->nan_count)
    problem = "scan nan_count";
  else if (scan.pos_inf_count != want->pos_inf_count)
    problem = "scan pos_inf_count";
  else if (scan.neg_inf_count != want->neg_inf_count)
    problem = "scan neg_inf_count";
  else if (scan.first_nonfinite_index != want->first_nonfinite_index)
    problem = "scan first_nonfinite_index";
  else if (api->has_nonfinite(&has, t) != TW_OK)
    problem = "has_nonfinite failed";
  else if (has != (want->first_nonfinite_index >= 0))
    problem = "has_nonfinite";
  else if (api->stats(&stats, t) != TW_OK)
    problem = "tensor_stats failed";
  else if (stats.element_count != want->element_count)
    problem = "stats element_count";
  else if (stats.finite_count != want->finite_count)
    problem = "stats finite_count";
  else if (stats.nan_count != want->nan_count || stats.pos_inf_count != want->pos_inf_count ||
           stats.neg_inf_count != want->neg_inf_count)
    problem = "stats counts";
  else if (stats.first_nonfinite_index != want->first_nonfinite_index)
    problem = "stats first_nonfinite_index";
  else if (!same_or_both_nan(stats.min, want->min))
    problem = "stats min";
  else if (!same_or_both_nan(stats.max, want->max))
    problem = "stats max";
  else if (!mean_close(stats.mean, want))
    problem = "stats mean";
  if (problem == NULL) return;

  char where[256];
  va_list args;
  va_start(args, context);
  vsnprintf(where, sizeof where, context, args);
  va_end(args);
  print_error(
      "%s (%s, %lld elements): %s differs\n"
      "  got:  nan %lld +inf %lld -inf %lld first %lld | has %d | finite %lld min %.17g max %.17g mean %.17g\n"
      "  want: nan %lld +inf %lld -inf %lld first %lld | finite %lld min %.17g max %.17g mean %.17g\n",
      where, ref_name((tw_dtype)t->dtype), (long long)want->element_count, problem, (long long)scan.nan_count,
      (long long)scan.pos_inf_count, (long long)scan.neg_inf_count, (long long)scan.first_nonfinite_index, has,
      (long long)stats.finite_count, stats.min, stats.max, stats.mean, (long long)want->nan_count,
      (long long)want->pos_inf_count, (long long)want->neg_inf_count, (long long)want->first_nonfinite_index,
      (long long)want->finite_count, want->min, want->max, want->mean);
  fail();
}

/* What a view of n elements should give when all are 1.0 but element `pos` holds `bits` (pos < 0: none). */
static ref_stats ones_with(tw_dtype dtype, int64_t n, int64_t pos, uint64_t bits) {
  ref_stats s = {n, n, 0, 0, 0, -1, 1.0, 1.0, 1.0, 1.0};
  if (n == 0) {
    s.min = s.max = s.mean = s.mean_abs = NAN;
    return s;
  }
  if (pos < 0) return s;
  const ref_class c = ref_classify(dtype, bits);
  if (c == REF_FINITE) {
    const double v = ref_value(dtype, bits);
    s.min = v < 1.0 ? v : 1.0;
    s.max = v > 1.0 ? v : 1.0;
    s.mean = ((double)(n - 1) + v) / (double)n;
    s.mean_abs = ((double)(n - 1) + fabs(v)) / (double)n;
    return s;
  }
  s.first_nonfinite_index = pos;
  s.finite_count = n - 1;
  s.nan_count = c == REF_NAN;
  s.pos_inf_count = c == REF_POS_INF;
  s.neg_inf_count = c == REF_NEG_INF;
  if (n == 1) s.min = s.max = s.mean = s.mean_abs = NAN;
  return s;
}

/* A buffer aligned to 64 bytes, so that element offsets from it give every alignment relative to vectors. */
typedef struct buffer {
  void *allocation;
  unsigned char *data;
} buffer;

static buffer buffer_new(size_t bytes) {
  buffer b;
  b.allocation = malloc(bytes + 64);
  assert_non_null(b.allocation);
  b.data = (unsigned char *)(((uintptr_t)b.allocation + 63) & ~(uintptr_t)63);
  return b;
}

static void buffer_free(buffer *b) { free(b->allocation); }

static unsigned char *element(tw_dtype dtype, unsigned char *base, int64_t i) {
  return base + i * (int64_t)ref_size(dtype);
}

/* Checks a 1-D view of n elements at `data` (all 1.0) with `bits` at pos, then restores the 1.0. */
static void expect_one_pattern(const numerics_api *api, tw_dtype dtype, unsigned char *data, int64_t n, int64_t pos,
                               uint64_t bits, const char *what) {
  const int64_t shape[1] = {n};
  const tw_tensor t = ref_view(dtype, data, 1, shape, NULL);
  if (pos >= 0) ref_put(dtype, data, pos, bits);
  const ref_stats want = ones_with(dtype, n, pos, bits);
  expect_view(api, &t, &want, "%s: pattern 0x%llx at %lld", what, (unsigned long long)bits, (long long)pos);
  if (pos >= 0) ref_put(dtype, data, pos, ref_one(dtype));
}

/* The bad pattern number k: NaN, +Inf, -Inf in turn (the last two are NaNs for float8_e4m3fn). */
static uint64_t bad_pattern(tw_dtype dtype, int64_t k) {
  switch (k % 3) {
    case 0: return ref_nan(dtype);
    case 1: return ref_pos_inf(dtype);
    default: return ref_neg_inf(dtype);
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Suites                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

void ka_exhaustive_narrow_formats(const numerics_api *api) {
  static const tw_dtype narrow[] = {TW_FLOAT16, TW_BFLOAT16, TW_FLOAT8_E4M3FN, TW_FLOAT8_E5M2};
  enum { kLength = 67 }; /* odd, longer than one vector of 16-bit lanes at 512 bits */
  for (size_t d = 0; d < sizeof narrow / sizeof narrow[0]; ++d) {
    const tw_dtype dtype = narrow[d];
    const int64_t patterns = (int64_t)1 << (8 * ref_size(dtype));
    buffer ones = buffer_new(kLength * 2);
    ref_fill(dtype, ones.data, kLength, ref_one(dtype));
    for (int64_t p = 0; p < patterns; ++p) {
      expect_one_pattern(api, dtype, ones.data, kLength, p % kLength, (uint64_t)p, "exhaustive");
    }
    buffer_free(&ones);

    /* All patterns in one tensor, forwards and backwards (stride -1). */
    buffer all = buffer_new((size_t)patterns * 2);
    for (int64_t p = 0; p < patterns; ++p) ref_put(dtype, all.data, p, (uint64_t)p);
    const int64_t shape[1] = {patterns};
    const int64_t backwards[1] = {-1};
    const tw_tensor forward = ref_view(dtype, all.data, 1, shape, NULL);
    const ref_stats want_forward = ref_stats_of(&forward);
    assert_true(want_forward.nan_count > 0 && want_forward.finite_count > 0);
    expect_view(api, &forward, &want_forward, "every pattern");
    const tw_tensor reverse = ref_view(dtype, element(dtype, all.data, patterns - 1), 1, shape, backwards);
    const ref_stats want_reverse = ref_stats_of(&reverse);
    expect_view(api, &reverse, &want_reverse, "every pattern, reversed");
    buffer_free(&all);
  }
}

void ka_special_values_wide_formats(const numerics_api *api) {
  static const uint64_t f32[] = {
      0x00000000, 0x80000000,                         /* ±0 */
      0x00000001, 0x007FFFFF, 0x80000001, 0x807FFFFF, /* subnormals */
      0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, /* min normal, ±max, 1 */
      0x7F800000, 0xFF800000,                         /* ±Inf */
      0x7FC00000, 0x7FFFFFFF, 0x7FC00001,             /* quiet NaNs */
      0x7F800001, 0x7FBFFFFF, 0x7FA00000,             /* signalling NaNs */
      0xFFC00000, 0xFFFFFFFF, 0xFF800001, 0xFFBFFFFF, /* negative NaNs */
  };
  static const uint64_t f64[] = {
      0x0000000000000000ull, 0x8000000000000000ull, 0x0000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x8000000000000001ull,
      0x800FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, 0x3FF0000000000000ull,
      0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x7FF8000000000000ull, 0x7FFFFFFFFFFFFFFFull, 0x7FF8000000000001ull,
      0x7FF0000000000001ull, 0x7FF7FFFFFFFFFFFFull, 0x7FF4000000000000ull, 0xFFF8000000000000ull, 0xFFFFFFFFFFFFFFFFull,
      0xFFF0000000000001ull, 0xFFF7FFFFFFFFFFFFull,
  };
  static const struct {
    tw_dtype dtype;
    const uint64_t *patterns;
    size_t count;
  } sets[] = {{TW_FLOAT32, f32, sizeof f32 / sizeof f32[0]}, {TW_FLOAT64, f64, sizeof f64 / sizeof f64[0]}};
  enum { kLength = 37 };
  for (size_t s = 0; s < 2; ++s) {
    const tw_dtype dtype = sets[s].dtype;
    buffer ones = buffer_new(kLength * 8);
    ref_fill(dtype, ones.data, kLength, ref_one(dtype));
    for (size_t i = 0; i < sets[s].count; ++i) {
      static const int64_t positions[] = {0, 1, 7, 8, 15, 16, 17, 31, 36};
      for (size_t p = 0; p < sizeof positions / sizeof positions[0]; ++p) {
        expect_one_pattern(api, dtype, ones.data, kLength, positions[p], sets[s].patterns[i], "special value");
      }
    }
    buffer_free(&ones);

    /* Random bit patterns in bulk: every class mixed within vectors. Finite ones are kept below 2 in
     * magnitude so that no double sum overflows (an overflowing sum is documented to give ±Inf). */
    enum { kRandom = 100003 };
    buffer random = buffer_new(kRandom * 8);
    const uint64_t sign = dtype == TW_FLOAT32 ? 1ull << 31 : 1ull << 63;
    const uint64_t exponent = dtype == TW_FLOAT32 ? 0x7F800000ull : 0x7FF0000000000000ull;
    const uint64_t exponent_top = dtype == TW_FLOAT32 ? 1ull << 30 : 1ull << 62;
    uint64_t state = 0x9E3779B97F4A7C15ull + s;
    for (int64_t i = 0; i < kRandom; ++i) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      uint64_t bits = dtype == TW_FLOAT32 ? (state >> 32) : state;
      switch (state & 0xFF) {
        case 0:
        case 1:
        case 2: bits |= exponent; break; /* NaN with a random payload */
        case 3:
        case 4: bits = (bits & sign) | exponent; break; /* ±Inf */
        default:
          if (ref_classify(dtype, bits) == REF_FINITE) bits &= ~exponent_top;
      }
      ref_put(dtype, random.data, i, bits);
    }
    const int64_t shape[1] = {kRandom};
    const tw_tensor t = ref_view(dtype, random.data, 1, shape, NULL);
    const ref_stats want = ref_stats_of(&t);
    assert_true(want.nan_count > 0 && want.pos_inf_count > 0 && want.neg_inf_count > 0);
    expect_view(api, &t, &want, "random bit patterns");
    buffer_free(&random);
  }
}

void ka_offsets_and_lengths(const numerics_api *api, int max_offset, int max_length) {
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    const tw_dtype dtype = ref_float_dtypes[d];
    const int64_t capacity = max_offset + max_length + 16;
    buffer b = buffer_new((size_t)capacity * 8 + 8);
    ref_fill(dtype, b.data, capacity, ref_one(dtype));
    for (int offset = 0; offset < max_offset; ++offset) {
      unsigned char *start = element(dtype, b.data, offset);
      for (int64_t n = 0; n <= max_length; ++n) {
        expect_one_pattern(api, dtype, start, n, -1, 0, "all finite");
        if (n == 0) continue;
        const int64_t k = offset + n;
        expect_one_pattern(api, dtype, start, n, (offset * 131 + n * 7) % n, bad_pattern(dtype, k), "middle");
        expect_one_pattern(api, dtype, start, n, n - 1, bad_pattern(dtype, k + 1), "last");
      }
    }
    /* Every position of short tensors, at an aligned and an unaligned start. */
    for (int offset = 0; offset < 4; offset += 3) {
      for (int64_t n = 1; n <= 160; ++n) {
        for (int64_t pos = 0; pos < n; ++pos) {
          expect_one_pattern(api, dtype, element(dtype, b.data, offset), n, pos, bad_pattern(dtype, pos),
                             "every position");
        }
      }
    }
    /* Starts that are not a multiple of the element size. */
    if (ref_size(dtype) > 1) {
      for (int misalign = 1; misalign < (int)ref_size(dtype); ++misalign) {
        unsigned char *start = b.data + misalign;
        ref_fill(dtype, start, capacity - 1, ref_one(dtype));
        for (int64_t n = 0; n <= 300; ++n) {
          expect_one_pattern(api, dtype, start, n, n ? (n * 5) % n : -1, bad_pattern(dtype, n), "misaligned");
        }
      }
    }
    buffer_free(&b);
  }
}

void ka_block_boundaries(const numerics_api *api) {
  enum { kLength = 3 * 8192 + 17 };
  /* Blocks are 64 vectors: 64 elements on the scalar target up to 4096 bytes with AVX-512. */
  static const int64_t spans[] = {16, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    const tw_dtype dtype = ref_float_dtypes[d];
    buffer b = buffer_new((size_t)kLength * 8);
    ref_fill(dtype, b.data, kLength, ref_one(dtype));
    expect_one_pattern(api, dtype, b.data, kLength, -1, 0, "long, all finite");
    for (size_t s = 0; s < sizeof spans / sizeof spans[0]; ++s) {
      const int64_t multiples[4] = {1, 2, 3, kLength / spans[s]}; /* the first boundaries and the last */
      for (int m = 0; m < 4; ++m) {
        for (int64_t delta = -1; delta <= 1; ++delta) {
          const int64_t pos = multiples[m] * spans[s] + delta;
          if (pos < kLength) expect_one_pattern(api, dtype, b.data, kLength, pos, bad_pattern(dtype, pos), "boundary");
        }
      }
    }
    expect_one_pattern(api, dtype, b.data, kLength, kLength - 1, ref_nan(dtype), "long, last");

    /* Several bad elements in different blocks: every one is counted, the first is reported. */
    static const int64_t several[] = {9000, 4095, 20000, 4096, kLength - 1};
    for (size_t i = 0; i < sizeof several / sizeof several[0]; ++i) {
      ref_put(dtype, b.data, several[i], bad_pattern(dtype, (int64_t)i));
    }
    const int64_t shape[1] = {kLength};
    const tw_tensor t = ref_view(dtype, b.data, 1, shape, NULL);
    const ref_stats want_several = ref_stats_of(&t);
    assert_int_equal(want_several.first_nonfinite_index, 4095);
    expect_view(api, &t, &want_several, "several bad");

    /* Nothing finite at all. */
    ref_fill(dtype, b.data, kLength, ref_nan(dtype));
    const ref_stats want_all = ref_stats_of(&t);
    assert_int_equal(want_all.finite_count, 0);
    expect_view(api, &t, &want_all, "all NaN");
    buffer_free(&b);
  }
}

/* A strided view over a buffer of 1.0s in which every element is first poisoned with NaN; the view's
 * own elements are then set to 1.0 and a few of them to bad patterns. */
typedef struct strided_case {
  const char *name;
  int32_t ndim;
  int64_t shape[4];
  int64_t strides[4];
  int64_t origin; /* element offset of the view's first element in the buffer */
  int64_t bad[3]; /* row-major indices within the view that get bad patterns; -1 = unused */
} strided_case;

static int64_t physical_offset(const strided_case *c, int64_t index) {
  int64_t offset = c->origin;
  for (int32_t d = c->ndim - 1; d >= 0; --d) {
    offset += (index % c->shape[d]) * c->strides[d];
    index /= c->shape[d];
  }
  return offset;
}

void ka_strided_views(const numerics_api *api) {
  static const strided_case cases[] = {
      {"step 2", 1, {500}, {2}, 0, {123, 499, -1}},
      {"step -1", 1, {700}, {-1}, 699, {5, 600, -1}},
      {"step -3", 1, {300}, {-3}, 897, {0, 299, -1}},
      {"step 0 (broadcast)", 1, {100}, {0}, 40, {-1, -1, -1}},
      {"padded pitch, long rows", 2, {37, 300}, {320, 1}, 0, {20 * 300 + 150, 36 * 300 + 299, -1}},
      {"padded pitch, short rows", 2, {200, 5}, {8, 1}, 0, {150 * 5 + 4, 3, -1}},
      {"transposed", 2, {300, 37}, {1, 320}, 0, {77 * 37 + 5, -1, -1}},
      {"3-D, negative stride, unit dim", 4, {2, 1, 3, 50}, {400, 999, -60, 1}, 120, {2 * 50 + 3, 150 + 49, -1}},
      {"merged dims with pitch", 3, {6, 4, 50}, {400, 50, 1}, 0, {5 * 200 + 3 * 50 + 7, -1, -1}},
      {"longer than the gather buffer", 1, {20000}, {2}, 1, {16383, 16384, 19999}},
      {"row-major strides given", 2, {30, 40}, {40, 1}, 0, {1000, -1, -1}},
  };
  enum { kCapacity = 40064 };
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    const tw_dtype dtype = ref_float_dtypes[d];
    buffer b = buffer_new((size_t)kCapacity * 8);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
      const strided_case *c = &cases[i];
      ref_fill(dtype, b.data, kCapacity, ref_nan(dtype)); /* outside the view: must never be seen */
      int64_t count = 1;
      for (int32_t k = 0; k < c->ndim; ++k) count *= c->shape[k];
      for (int64_t k = 0; k < count; ++k) ref_put(dtype, b.data, physical_offset(c, k), ref_one(dtype));
      for (int j = 0; j < 3; ++j) {
        if (c->bad[j] >= 0) ref_put(dtype, b.data, physical_offset(c, c->bad[j]), bad_pattern(dtype, j + 1));
      }
      const tw_tensor t = ref_view(dtype, element(dtype, b.data, c->origin), c->ndim, c->shape, c->strides);
      const ref_stats want = ref_stats_of(&t);
      assert_int_equal(want.element_count, count);
      expect_view(api, &t, &want, "strided view '%s'", c->name);
    }
    /* Broadcast of a single NaN: every logical element is bad. */
    const strided_case *broadcast = &cases[3];
    ref_put(dtype, b.data, broadcast->origin, ref_nan(dtype));
    const tw_tensor t =
        ref_view(dtype, element(dtype, b.data, broadcast->origin), 1, broadcast->shape, broadcast->strides);
    const ref_stats want = ref_stats_of(&t);
    assert_int_equal(want.nan_count, 100);
    expect_view(api, &t, &want, "broadcast NaN");
    buffer_free(&b);
  }
}

void ka_zero_size_and_scalars(const numerics_api *api) {
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; ++d) {
    const tw_dtype dtype = ref_float_dtypes[d];
    static const int64_t empty_1d[1] = {0};
    static const int64_t empty_3d[3] = {3, 0, 5};
    static const int64_t odd_strides[3] = {-7, 0, 3};
    const ref_stats none = ones_with(dtype, 0, -1, 0);
    tw_tensor t = ref_view(dtype, NULL, 1, empty_1d, NULL);
    expect_view(api, &t, &none, "shape [0], data NULL");
    t = ref_view(dtype, NULL, 3, empty_3d, odd_strides);
    expect_view(api, &t, &none, "shape [3, 0, 5], strided, data NULL");

    unsigned char scalar[8];
    ref_put(dtype, scalar, 0, ref_nan(dtype));
    t = ref_view(dtype, scalar, 0, NULL, NULL);
    const ref_stats want_nan = ones_with(dtype, 1, 0, ref_nan(dtype));
    expect_view(api, &t, &want_nan, "0-d NaN");
    ref_put(dtype, scalar, 0, ref_one(dtype));
    const ref_stats want_one = ones_with(dtype, 1, -1, 0);
    expect_view(api, &t, &want_one, "0-d 1.0");
  }
}
