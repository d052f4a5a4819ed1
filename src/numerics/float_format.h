// Bit layouts of the floating-point dtypes: which patterns are NaN, ±Inf or finite.
//
// Every kernel classifies elements by their raw bits on unsigned lanes, never through float compares:
// Highway 1.0.3 has IsNaN/IsInf for f32/f64 only, and one integer compare per lane is as cheap as it
// gets. With `magnitude = bits & kAbsMask`:
//   finite  iff magnitude <= kMaxFinite
//   Inf     iff magnitude == kMaxFinite + 1   (formats with infinities; the sign bit says which one)
//   NaN     otherwise
// float8_e4m3fn has no infinities: its one non-finite magnitude, 0x7F, is NaN.
#ifndef TRAINWATCH_NUMERICS_FLOAT_FORMAT_H
#define TRAINWATCH_NUMERICS_FLOAT_FORMAT_H

#include <cstdint>

#include "trainwatch/common.h"

namespace tw {
namespace numerics {

// One binary floating-point format with `ExponentBits` and `MantissaBits` stored in `BitsT`
// (sign bit on top). `kHasInf` is false for formats that spend the top exponent on finite values.
template <typename BitsT, int ExponentBits, int MantissaBits, bool HasInf, BitsT MaxFinite>
struct FloatFormat {
  using Bits = BitsT;
  static constexpr int kExponentBits = ExponentBits;
  static constexpr int kMantissaBits = MantissaBits;
  static constexpr int kBias = (1 << (ExponentBits - 1)) - 1;
  static constexpr bool kHasInf = HasInf;
  static constexpr Bits kSignBit = static_cast<Bits>(Bits{1} << (ExponentBits + MantissaBits));
  static constexpr Bits kAbsMask = static_cast<Bits>(kSignBit - 1);
  static constexpr Bits kMaxFinite = MaxFinite;
  static constexpr Bits kInfBits = static_cast<Bits>(MaxFinite + 1);  // meaningful iff kHasInf
};

// IEEE-like formats: the largest finite magnitude is all exponent bits but the lowest set, all mantissa
// bits set; one more is infinity.
template <typename Bits, int ExponentBits, int MantissaBits>
using IeeeFormat =
    FloatFormat<Bits, ExponentBits, MantissaBits, true,
                static_cast<Bits>(((Bits{1} << (ExponentBits + MantissaBits)) - 1) - (Bits{1} << MantissaBits))>;

using Float64Format = IeeeFormat<uint64_t, 11, 52>;                  // 0x7FEF… ; Inf 0x7FF0…
using Float32Format = IeeeFormat<uint32_t, 8, 23>;                   // 0x7F7FFFFF ; Inf 0x7F800000
using Float16Format = IeeeFormat<uint16_t, 5, 10>;                   // 0x7BFF ; Inf 0x7C00
using BFloat16Format = IeeeFormat<uint16_t, 8, 7>;                   // 0x7F7F ; Inf 0x7F80
using Float8E5M2Format = IeeeFormat<uint8_t, 5, 2>;                  // 0x7B ; Inf 0x7C
using Float8E4M3FNFormat = FloatFormat<uint8_t, 4, 3, false, 0x7E>;  // NaN iff magnitude 0x7F

static_assert(Float64Format::kInfBits == 0x7FF0000000000000ull, "f64 layout");
static_assert(Float32Format::kInfBits == 0x7F800000u, "f32 layout");
static_assert(Float16Format::kInfBits == 0x7C00u && BFloat16Format::kInfBits == 0x7F80u, "16-bit layouts");
static_assert(Float8E5M2Format::kInfBits == 0x7C && Float8E4M3FNFormat::kAbsMask == 0x7F, "fp8 layouts");

// Calls visit(Format{}) for a floating-point dtype and returns true; returns false for any other
// dtype (integers and bool are finite by construction).
template <class Visitor>
bool VisitFloatFormat(int32_t dtype, Visitor &&visit) {
  switch (dtype) {
    case TW_FLOAT64: visit(Float64Format{}); return true;
    case TW_FLOAT32: visit(Float32Format{}); return true;
    case TW_FLOAT16: visit(Float16Format{}); return true;
    case TW_BFLOAT16: visit(BFloat16Format{}); return true;
    case TW_FLOAT8_E5M2: visit(Float8E5M2Format{}); return true;
    case TW_FLOAT8_E4M3FN: visit(Float8E4M3FNFormat{}); return true;
    default: return false;
  }
}

}  // namespace numerics
}  // namespace tw

#endif  // TRAINWATCH_NUMERICS_FLOAT_FORMAT_H
