// RunStats: finite min / max / sum and the non-finite counts in one pass, per dtype and target.
//
// Elements are widened to f32 lanes (f64 for float64) as they are loaded: bf16 is the top half of an
// f32, the other narrow formats are rebuilt from their fields, exactly. Like the scan, the common case
// (a block of finite values) runs without masks: min, max and a double-precision sum in registers, plus
// the largest magnitude seen. A block that turns out to hold a NaN or Inf is discarded and redone
// with per-lane masks, which also count the bad elements.

#include "numerics/hwy_targets.h"  // first: fixes HWY_TARGETS for this file

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "numerics/stats_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "hwy/highway.h"
#include "numerics/classify-inl.h"
#include "numerics/float_format.h"
#include "numerics/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tw {
namespace numerics {
namespace HWY_NAMESPACE {

template <class Format>
class StatsKernel {
  using Bits = typename Format::Bits;
  using Float = std::conditional_t<sizeof(Bits) == 8, double, float>;
  using DF = hn::ScalableTag<Float>;
  using DU = hn::RebindToUnsigned<DF>;  // the element's bits, zero-extended to the float's width
  using DB = hn::Rebind<Bits, DF>;      // the element's bits as stored: as many lanes as DF
#if HWY_TARGET == HWY_SCALAR            // one lane: nothing to halve
  using DD = hn::Rebind<double, DF>;
#else
  using DD = std::conditional_t<sizeof(Float) == 8, DF, hn::Rebind<double, hn::Half<DF>>>;
#endif
  using VF = hn::Vec<DF>;
  using VU = hn::Vec<DU>;
  using VD = hn::Vec<DD>;
  using Wide = hn::TFromD<DU>;

 public:
  void Run(const Bits *HWY_RESTRICT p, size_t count, int64_t index, StatsAccumulator *acc) const {
    const size_t block = kBlockVectors * hn::Lanes(df_);
    size_t i = 0;
    for (; i + block <= count; i += block) {
      if (HWY_UNLIKELY(!TryFiniteBlock(p + i, acc))) AccumulateExactly(p, i, i + block, index, acc);
    }
    AccumulateExactly(p, i, count, index, acc);
  }

 private:
  HWY_INLINE VU LoadBits(const Bits *HWY_RESTRICT p) const {
    if constexpr (sizeof(Bits) == sizeof(Wide)) {
      return hn::LoadU(du_, p);
    } else {
      return hn::PromoteTo(du_, hn::LoadU(db_, p));
    }
  }

  HWY_INLINE LastVector<DU> LoadLastBits(const Bits *HWY_RESTRICT p, size_t end) const {
    if constexpr (sizeof(Bits) == sizeof(Wide)) {
      return LoadLastVector(du_, p, end);
    } else {
      const LastVector<DB> last = LoadLastVector(db_, p, end);
      return LastVector<DU>{hn::PromoteTo(du_, last.bits), last.start};
    }
  }

  HWY_INLINE VU Magnitude(VU bits) const { return hn::And(bits, hn::Set(du_, static_cast<Wide>(Format::kAbsMask))); }

  // The value of finite elements (other lanes are garbage and must be masked by the caller).
  HWY_INLINE VF ToFloat(VU bits) const {
    if constexpr (sizeof(Bits) == sizeof(Float)) {
      return hn::BitCast(df_, bits);
    } else if constexpr (Format::kExponentBits == 8) {
      return hn::BitCast(df_, hn::ShiftLeft<16>(bits));  // bfloat16 is the top half of an f32
    } else {
      // float16 and fp8: normal numbers get the exponent re-biased and the mantissa moved up; subnormals
      // are mantissa * 2^(1 - bias - mantissa bits), which i32 -> f32 conversion computes exactly.
      constexpr int kValueBits = Format::kExponentBits + Format::kMantissaBits;
      constexpr Float kSubnormalUnit = 1.0f / static_cast<Float>(1u << (Format::kBias + Format::kMantissaBits - 1));
      const hn::RebindToSigned<DF> di;
      const VU magnitude = Magnitude(bits);
      const VU sign = hn::ShiftLeft<31 - kValueBits>(hn::Xor(bits, magnitude));
      const VU normal = hn::Add(hn::ShiftLeft<23 - Format::kMantissaBits>(magnitude),
                                hn::Set(du_, static_cast<Wide>(127 - Format::kBias) << 23));
      const VU subnormal =
          hn::BitCast(du_, hn::Mul(hn::ConvertTo(df_, hn::BitCast(di, magnitude)), hn::Set(df_, kSubnormalUnit)));
      const auto is_subnormal = hn::Gt(hn::Set(du_, Wide{1} << Format::kMantissaBits), magnitude);
      return hn::BitCast(df_, hn::Or(hn::IfThenElse(is_subnormal, subnormal, normal), sign));
    }
  }

  // The sum of v's lanes as double lanes: f32 halves are widened separately.
  HWY_INLINE VD Widen(VF v) const {
    if constexpr (sizeof(Float) == 8) {
      return v;
    } else {
#if HWY_TARGET == HWY_SCALAR
      return hn::PromoteTo(dd_, v);
#else
      const hn::Half<DF> dh;
      return hn::Add(hn::PromoteTo(dd_, hn::LowerHalf(dh, v)), hn::PromoteTo(dd_, hn::UpperHalf(dh, v)));
#endif
    }
  }

  HWY_INLINE void Commit(VF min, VF max, double sum, int64_t finite, StatsAccumulator *acc) const {
    if (finite == 0) return;
    acc->finite_count += finite;
    acc->min = std::min(acc->min, static_cast<double>(hn::GetLane(hn::MinOfLanes(df_, min))));
    acc->max = std::max(acc->max, static_cast<double>(hn::GetLane(hn::MaxOfLanes(df_, max))));
    acc->AddSum(sum);
  }

  // Whether ToFloat turns NaN / Inf patterns into NaN / Inf. Then the block's double sum tells whether
  // it held one (a NaN or Inf anywhere makes the sum non-finite, and finite narrow values cannot
  // overflow a double sum), and the fast path needs no classification at all. float64 sums can
  // overflow: such a block merely takes the exact path, which gives the same result.
  static constexpr bool kValuesCarryNonFinite = sizeof(Bits) == sizeof(Float) || Format::kExponentBits == 8;

  // A full block without masks; returns false, having added nothing, if it holds a NaN or Inf.
  HWY_INLINE bool TryFiniteBlock(const Bits *HWY_RESTRICT p, StatsAccumulator *acc) const {
    const size_t N = hn::Lanes(df_);
    const VF inf = hn::Set(df_, std::numeric_limits<Float>::infinity());
    VU largest0 = hn::Zero(du_), largest1 = hn::Zero(du_);
    VF min0 = inf, min1 = inf, max0 = hn::Neg(inf), max1 = hn::Neg(inf);
    VD sum0 = hn::Zero(dd_), sum1 = hn::Zero(dd_);
    for (size_t i = 0; i < kBlockVectors * N; i += 2 * N) {
      const VU bits0 = LoadBits(p + i), bits1 = LoadBits(p + i + N);
      if constexpr (!kValuesCarryNonFinite) {
        largest0 = hn::Max(largest0, Magnitude(bits0));
        largest1 = hn::Max(largest1, Magnitude(bits1));
      }
      const VF v0 = ToFloat(bits0), v1 = ToFloat(bits1);
      min0 = hn::Min(min0, v0);
      min1 = hn::Min(min1, v1);
      max0 = hn::Max(max0, v0);
      max1 = hn::Max(max1, v1);
      sum0 = hn::Add(sum0, Widen(v0));
      sum1 = hn::Add(sum1, Widen(v1));
    }
    const double sum = hn::GetLane(hn::SumOfLanes(dd_, hn::Add(sum0, sum1)));
    if constexpr (kValuesCarryNonFinite) {
      if (!std::isfinite(sum)) return false;
    } else {
      const VU largest = hn::Max(largest0, largest1);
      if (!hn::AllFalse(du_, hn::Gt(largest, hn::Set(du_, static_cast<Wide>(Format::kMaxFinite))))) {
        return false;
      }
    }
    Commit(hn::Min(min0, min1), hn::Max(max0, max1), sum, static_cast<int64_t>(kBlockVectors * N), acc);
    return true;
  }

  // Elements [begin, end) of the run at p, lane by lane under masks: finite values feed min/max/sum,
  // the others the counts. `index` is p[0]'s index.
  HWY_INLINE void AccumulateExactly(const Bits *HWY_RESTRICT p, size_t begin, size_t end, int64_t index,
                                    StatsAccumulator *acc) const {
    const size_t N = hn::Lanes(df_);
    const VF inf = hn::Set(df_, std::numeric_limits<Float>::infinity());
    const VU max_finite = hn::Set(du_, static_cast<Wide>(Format::kMaxFinite));
    VF min = inf, max = hn::Neg(inf);
    VD sum = hn::Zero(dd_);
    int64_t finite_count = 0;
    const auto add = [&](VU bits, hn::Mask<DU> finite) {
      const VF v = ToFloat(bits);
      const auto keep = hn::RebindMask(df_, finite);
      min = hn::Min(min, hn::IfThenElse(keep, v, inf));
      max = hn::Max(max, hn::IfThenElse(keep, v, hn::Neg(inf)));
      sum = hn::Add(sum, Widen(hn::IfThenElseZero(keep, v)));
      finite_count += static_cast<int64_t>(hn::CountTrue(du_, finite));
    };
    size_t i = begin;
    for (; i + N <= end; i += N) {
      const VU bits = LoadBits(p + i);
      CountVector<Format>(du_, bits, index + static_cast<int64_t>(i), &acc->nonfinite);
      add(bits, hn::Not(hn::Gt(Magnitude(bits), max_finite)));
    }
    if (i < end) {
      const LastVector<DU> last = LoadLastBits(p, end);
      const auto fresh = FreshLanes(du_, last.start, i, end);
      const VU bits = hn::IfThenElseZero(fresh, last.bits);  // 0 is finite: not counted
      CountVector<Format>(du_, bits, index + static_cast<int64_t>(last.start), &acc->nonfinite);
      add(bits, hn::And(hn::Not(hn::Gt(Magnitude(bits), max_finite)), fresh));
    }
    Commit(min, max, hn::GetLane(hn::SumOfLanes(dd_, sum)), finite_count, acc);
  }

  DF df_;
  DU du_;
  DB db_;
  DD dd_;
};

void StatsRun(int32_t dtype, const void *data, size_t count, int64_t index, StatsAccumulator *acc) {
  VisitFloatFormat(dtype, [&](auto format) {
    using Format = decltype(format);
    StatsKernel<Format>().Run(static_cast<const typename Format::Bits *>(data), count, index, acc);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace numerics
}  // namespace tw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tw {
namespace numerics {

HWY_EXPORT(StatsRun);

void RunStats(int32_t dtype, const void *data, size_t count, int64_t first_index, StatsAccumulator *acc) {
  HWY_DYNAMIC_DISPATCH(StatsRun)(dtype, data, count, first_index, acc);
}

}  // namespace numerics
}  // namespace tw
#endif  // HWY_ONCE
