#include "summary/tensor_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/tensor.h"
#include "numerics/summary.h"
#include "summary/tensor_values.h"

namespace tw {
namespace summary {
namespace {

// What shortest-decimal printing needs to know about a float dtype: its significand width and the
// exponent of its smallest normal number (below it the spacing of values stops shrinking).
struct FloatPrecision {
  int mantissa_bits;
  int min_exponent;
};

bool FloatPrecisionOf(int32_t dtype, FloatPrecision *out) {
  switch (dtype) {
    case TW_FLOAT64: *out = {52, -1022}; return true;
    case TW_FLOAT32: *out = {23, -126}; return true;
    case TW_FLOAT16: *out = {10, -14}; return true;
    case TW_BFLOAT16: *out = {7, -126}; return true;
    case TW_FLOAT8_E5M2: *out = {2, -14}; return true;
    case TW_FLOAT8_E4M3FN: *out = {3, -6}; return true;
    default: return false;
  }
}

// True when `decimal` is nearer to `value` than to any neighbour of it in a format of this precision,
// i.e. it reads back as `value`. Strictly within half a unit in the last place, so a tie never counts.
bool ReadsBackAs(double decimal, double value, FloatPrecision precision) {
  if (precision.mantissa_bits == 52) return decimal == value;
  const int exponent = std::max(std::ilogb(value), precision.min_exponent);
  const double ulp = std::ldexp(1.0, exponent - precision.mantissa_bits);
  return std::fabs(decimal - value) < ulp / 2;
}

// Python's repr of a float of the given precision: the fewest significant digits that read back,
// positional notation for decimal exponents in [-4, 16), scientific otherwise.
void AppendFloat(double value, FloatPrecision precision, bool in_array, std::string *out) {
  if (std::isnan(value)) {
    *out += "nan";
    return;
  }
  if (std::isinf(value)) {
    *out += value < 0 ? "-inf" : "inf";
    return;
  }
  char text[48];
  int digits = 1;
  if (value != 0) {
    for (; digits < 17; ++digits) {
      std::snprintf(text, sizeof(text), "%.*e", digits - 1, value);
      if (ReadsBackAs(std::strtod(text, nullptr), value, precision)) break;
    }
  }
  std::snprintf(text, sizeof(text), "%.*e", digits - 1, value);
  const int exponent = std::atoi(std::strchr(text, 'e') + 1);
  if (exponent < -4 || exponent >= 16) {
    *out += text;
    return;
  }
  std::snprintf(text, sizeof(text), "%.*f", std::max(digits - 1 - exponent, 0), value);
  *out += text;
  if (std::strchr(text, '.') == nullptr) *out += in_array ? "." : ".0";
}

template <typename T>
T Load(const void *p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

void AppendElement(int32_t dtype, const void *p, bool in_array, std::string *out) {
  FloatPrecision precision;
  if (FloatPrecisionOf(dtype, &precision)) {
    AppendFloat(ElementAsDouble(dtype, p), precision, in_array, out);
    return;
  }
  switch (dtype) {
    case TW_BOOL: *out += Load<uint8_t>(p) != 0 ? "True" : "False"; return;
    case TW_INT8: *out += std::to_string(Load<int8_t>(p)); return;
    case TW_INT16: *out += std::to_string(Load<int16_t>(p)); return;
    case TW_INT32: *out += std::to_string(Load<int32_t>(p)); return;
    case TW_INT64: *out += std::to_string(Load<int64_t>(p)); return;
    case TW_UINT8: *out += std::to_string(Load<uint8_t>(p)); return;
    case TW_UINT16: *out += std::to_string(Load<uint16_t>(p)); return;
    case TW_UINT32: *out += std::to_string(Load<uint32_t>(p)); return;
    case TW_UINT64: *out += std::to_string(Load<uint64_t>(p)); return;
    default: *out += "?"; return;
  }
}

// The elements of dimensions [dim, ndim) starting at `offset` (in elements), in nested brackets.
void AppendDimension(const tw_tensor &t, const int64_t *strides, int32_t dim, int64_t offset, std::string *out) {
  const unsigned char *base = static_cast<const unsigned char *>(t.data);
  const int64_t item = static_cast<int64_t>(DtypeSize(t.dtype));
  *out += '[';
  for (int64_t i = 0; i < t.shape[dim]; ++i) {
    if (i > 0) *out += ' ';
    const int64_t at = offset + i * strides[dim];
    if (dim + 1 == t.ndim) {
      AppendElement(t.dtype, base + at * item, true, out);
    } else {
      AppendDimension(t, strides, dim + 1, at, out);
    }
  }
  *out += ']';
}

void AppendShape(const tw_tensor &t, std::string *out) {
  *out += '(';
  for (int32_t d = 0; d < t.ndim; ++d) {
    if (d > 0) *out += ", ";
    *out += std::to_string(t.shape[d]);
  }
  *out += t.ndim == 1 ? ",)" : ")";
}

void AppendSummary(const tw_tensor &t, std::string *out) {
  const numerics::Summary s = numerics::Summarize(t);
  char text[160];
  std::snprintf(text, sizeof(text), " min=%g max=%g mean=%g nan=%lld +inf=%lld -inf=%lld>", s.min, s.max, s.mean,
                static_cast<long long>(s.nonfinite.nan_count), static_cast<long long>(s.nonfinite.pos_inf_count),
                static_cast<long long>(s.nonfinite.neg_inf_count));
  *out += '<';
  *out += DtypeName(t.dtype);
  *out += ' ';
  AppendShape(t, out);
  *out += text;
}

}  // namespace

void AppendTensorText(const tw_tensor &t, int64_t max_elements, std::string *out) {
  if (t.ndim == 0) {
    AppendElement(t.dtype, t.data, false, out);
    return;
  }
  if (ElementCount(t) > max_elements) {
    AppendSummary(t, out);
    return;
  }
  std::vector<int64_t> row_major;
  const int64_t *strides = t.strides;
  if (strides == nullptr) {
    row_major.assign(static_cast<size_t>(t.ndim), 1);
    for (int32_t d = t.ndim - 1; d > 0; --d) row_major[d - 1] = row_major[d] * t.shape[d];
    strides = row_major.data();
  }
  AppendDimension(t, strides, 0, 0, out);
}

}  // namespace summary
}  // namespace tw
