#include "summary/tensor_values.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/tensor.h"

namespace tw {
namespace summary {
namespace {

template <typename T>
T Load(const void *p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// A binary floating-point format with `exponent_bits` and `mantissa_bits` stored (sign bit on top)
// and IEEE bias. `ieee_specials`: an all-ones exponent means Inf/NaN (f16, e5m2); e4m3fn instead has
// no infinities and a single NaN mantissa pattern.
double DecodeSmallFloat(uint32_t bits, int exponent_bits, int mantissa_bits, bool ieee_specials) {
  const uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
  const uint32_t exponent = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const bool negative = (bits >> (mantissa_bits + exponent_bits)) & 1u;
  const uint32_t max_exponent = (1u << exponent_bits) - 1;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  double magnitude;
  if (ieee_specials && exponent == max_exponent) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!ieee_specials && exponent == max_exponent && mantissa == (1u << mantissa_bits) - 1) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {  // zero or subnormal
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (1u << mantissa_bits)),
                           static_cast<int>(exponent) - bias - mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace

double ElementAsDouble(int32_t dtype, const void *p) {
  switch (dtype) {
    case TW_BOOL: return Load<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case TW_INT8: return Load<int8_t>(p);
    case TW_INT16: return Load<int16_t>(p);
    case TW_INT32: return Load<int32_t>(p);
    case TW_INT64: return static_cast<double>(Load<int64_t>(p));
    case TW_UINT8: return Load<uint8_t>(p);
    case TW_UINT16: return Load<uint16_t>(p);
    case TW_UINT32: return Load<uint32_t>(p);
    case TW_UINT64: return static_cast<double>(Load<uint64_t>(p));
    case TW_FLOAT16: return DecodeSmallFloat(Load<uint16_t>(p), 5, 10, true);
    case TW_BFLOAT16: {
      const uint32_t bits = static_cast<uint32_t>(Load<uint16_t>(p)) << 16;
      return Load<float>(&bits);
    }
    case TW_FLOAT32: return Load<float>(p);
    case TW_FLOAT64: return Load<double>(p);
    case TW_FLOAT8_E4M3FN: return DecodeSmallFloat(Load<uint8_t>(p), 4, 3, false);
    case TW_FLOAT8_E5M2: return DecodeSmallFloat(Load<uint8_t>(p), 5, 2, true);
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

void VisitAsDoubles(const tw_tensor &t, const std::function<void(const double *, size_t)> &visit) {
  constexpr size_t kChunk = 1024;
  const int64_t count = ElementCount(t);
  if (count == 0) return;
  const size_t element_size = DtypeSize(t.dtype);
  const auto *base = static_cast<const unsigned char *>(t.data);
  double buffer[kChunk];
  size_t filled = 0;
  auto emit = [&](const unsigned char *element) {
    buffer[filled++] = ElementAsDouble(t.dtype, element);
    if (filled == kChunk) {
      visit(buffer, filled);
      filled = 0;
    }
  };

  if (IsContiguous(t)) {
    for (int64_t i = 0; i < count; ++i) emit(base + static_cast<size_t>(i) * element_size);
  } else {
    // Odometer over the multi-index; `offset` is the element offset of the current index.
    std::vector<int64_t> index(static_cast<size_t>(t.ndim), 0);
    int64_t offset = 0;
    for (int64_t i = 0; i < count; ++i) {
      emit(base + offset * static_cast<int64_t>(element_size));
      for (int32_t d = t.ndim - 1; d >= 0; --d) {
        if (++index[d] < t.shape[d]) {
          offset += t.strides[d];
          break;
        }
        offset -= (t.shape[d] - 1) * t.strides[d];
        index[d] = 0;
      }
    }
  }
  if (filled > 0) visit(buffer, filled);
}

}  // namespace summary
}  // namespace tw
