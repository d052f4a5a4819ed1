// Per-target helpers shared by the kernels: tail loads and the exact NaN / ±Inf count of one vector.
// Included once per target by files that re-include themselves through foreach_target.h, hence the
// toggle guard instead of a plain include guard (Highway's idiom for -inl.h headers).
#if defined(TRAINWATCH_NUMERICS_CLASSIFY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TRAINWATCH_NUMERICS_CLASSIFY_INL_H_
#undef TRAINWATCH_NUMERICS_CLASSIFY_INL_H_
#else
#define TRAINWATCH_NUMERICS_CLASSIFY_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "numerics/float_format.h"
#include "numerics/scan.h"

HWY_BEFORE_NAMESPACE();
namespace tw {
namespace numerics {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Vectors per block: the granularity of the early exit and of the exact recount of a block that holds
// a bad element. 64 vectors is 4 KiB with AVX-512, so the per-block checks cost nothing measurable.
constexpr size_t kBlockVectors = 64;

// Loads count < Lanes(d) elements without reading past them; the other lanes are zero.
template <class D>
HWY_INLINE hn::Vec<D> LoadPartial(D d, const hn::TFromD<D> *HWY_RESTRICT p, size_t count) {
#if HWY_TARGET <= HWY_AVX3
  return hn::MaskedLoad(hn::FirstN(d, count), d, p);  // AVX-512 masked loads never touch masked lanes
#else
  // Elsewhere 1.0.3 emulates MaskedLoad of 8/16-bit lanes with a full load, so go through a buffer.
  HWY_ALIGN hn::TFromD<D> buffer[hn::MaxLanes(D())] = {};
  std::memcpy(buffer, p, count * sizeof(hn::TFromD<D>));
  return hn::Load(d, buffer);
#endif
}

// The last vector of elements [done, end) of a run at p, with end - done < Lanes(d). When the run holds
// a full vector, this is the one ending at `end`: it re-reads lanes already handled instead of copying
// the remainder, and FreshLanes() masks them off. Otherwise only the remainder is loaded.
template <class D>
struct LastVector {
  hn::Vec<D> bits;
  size_t start;  // run index of lane 0
};

template <class D>
HWY_INLINE LastVector<D> LoadLastVector(D d, const hn::TFromD<D> *HWY_RESTRICT p, size_t end) {
  const size_t N = hn::Lanes(d);
  if (end >= N) return LastVector<D>{hn::LoadU(d, p + end - N), end - N};
  return LastVector<D>{LoadPartial(d, p, end), 0};
}

// Lanes of a vector loaded at run index `start` that hold elements [done, end).
template <class D>
HWY_INLINE hn::Mask<D> FreshLanes(D d, size_t start, size_t done, size_t end) {
  return hn::And(hn::Not(hn::FirstN(d, done - start)), hn::FirstN(d, end - start));
}

// Adds the NaN / ±Inf counts of one vector of `Format` bits to *result. The lanes may be wider than the
// format (zero-extended); `index` is the tensor index of lane 0.
template <class Format, class DU>
HWY_INLINE void CountVector(DU du, hn::Vec<DU> bits, int64_t index, ScanResult *result) {
  using T = hn::TFromD<DU>;
  const auto magnitude = hn::And(bits, hn::Set(du, static_cast<T>(Format::kAbsMask)));
  const auto nonfinite = hn::Gt(magnitude, hn::Set(du, static_cast<T>(Format::kMaxFinite)));
  if (HWY_LIKELY(hn::AllFalse(du, nonfinite))) return;

  if (result->first_nonfinite_index < 0) {
    result->first_nonfinite_index = index + hn::FindFirstTrue(du, nonfinite);
  }
  const int64_t bad = static_cast<int64_t>(hn::CountTrue(du, nonfinite));
  if constexpr (Format::kHasInf) {
    const auto inf = hn::Eq(magnitude, hn::Set(du, static_cast<T>(Format::kInfBits)));
    const auto negative = hn::Gt(bits, hn::Set(du, static_cast<T>(Format::kAbsMask)));  // sign bit
    const int64_t infs = static_cast<int64_t>(hn::CountTrue(du, inf));
    const int64_t neg_infs = static_cast<int64_t>(hn::CountTrue(du, hn::And(inf, negative)));
    result->nan_count += bad - infs;
    result->pos_inf_count += infs - neg_infs;
    result->neg_inf_count += neg_infs;
  } else {
    result->nan_count += bad;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace numerics
}  // namespace tw
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
