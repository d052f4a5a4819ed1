// RunHasNonFinite and RunCountNonFinite: the scan kernels, one instantiation per dtype and target.
//
// The design point is an all-finite tensor in DRAM, so every byte is read and the loop must keep up
// with memory: per vector one load, one AND (drop the sign) and one unsigned MAX into one of four
// independent accumulators. Once per block the largest magnitude is compared with the format's largest
// finite one. Only a block that fails is counted exactly, vector by vector.

#include "numerics/hwy_targets.h"  // first: fixes HWY_TARGETS for this file

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "numerics/nonfinite_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "numerics/classify-inl.h"
#include "numerics/float_format.h"
#include "numerics/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tw {
namespace numerics {
namespace HWY_NAMESPACE {

// True if none of the kBlockVectors full vectors at p is NaN or Inf.
template <class Format, class D>
HWY_INLINE bool BlockIsFinite(D d, const hn::TFromD<D> *HWY_RESTRICT p) {
  static_assert(kBlockVectors % 4 == 0, "the loop is unrolled by four");
  const size_t N = hn::Lanes(d);
  const auto abs_mask = hn::Set(d, Format::kAbsMask);
  auto largest0 = hn::Zero(d), largest1 = hn::Zero(d), largest2 = hn::Zero(d), largest3 = hn::Zero(d);
  for (size_t i = 0; i < kBlockVectors * N; i += 4 * N) {
    largest0 = hn::Max(largest0, hn::And(hn::LoadU(d, p + i), abs_mask));
    largest1 = hn::Max(largest1, hn::And(hn::LoadU(d, p + i + N), abs_mask));
    largest2 = hn::Max(largest2, hn::And(hn::LoadU(d, p + i + 2 * N), abs_mask));
    largest3 = hn::Max(largest3, hn::And(hn::LoadU(d, p + i + 3 * N), abs_mask));
  }
  const auto largest = hn::Max(hn::Max(largest0, largest1), hn::Max(largest2, largest3));
  return hn::AllFalse(d, hn::Gt(largest, hn::Set(d, Format::kMaxFinite)));
}

// Exact counts of elements [begin, end) of the run at p, vector by vector; `index` is p[0]'s index.
// The last partial vector re-reads lanes before `begin` where the run has them, and masks them off.
template <class Format, class D>
HWY_INLINE void CountExactly(D d, const hn::TFromD<D> *HWY_RESTRICT p, size_t begin, size_t end, int64_t index,
                             ScanResult *result) {
  const size_t N = hn::Lanes(d);
  size_t i = begin;
  for (; i + N <= end; i += N) {
    CountVector<Format>(d, hn::LoadU(d, p + i), index + static_cast<int64_t>(i), result);
  }
  if (i < end) {
    const LastVector<D> last = LoadLastVector(d, p, end);
    const auto fresh = hn::IfThenElseZero(FreshLanes(d, last.start, i, end), last.bits);  // 0 is finite
    CountVector<Format>(d, fresh, index + static_cast<int64_t>(last.start), result);
  }
}

template <class Format>
bool HasNonFiniteIn(const void *data, size_t count) {
  const hn::ScalableTag<typename Format::Bits> d;
  const auto *p = static_cast<const typename Format::Bits *>(data);
  const size_t block = kBlockVectors * hn::Lanes(d);
  size_t i = 0;
  for (; i + block <= count; i += block) {
    if (!BlockIsFinite<Format>(d, p + i)) return true;
  }
  ScanResult rest;  // less than a block: the exact path costs nothing extra here
  CountExactly<Format>(d, p, i, count, 0, &rest);
  return !rest.all_finite();
}

template <class Format>
void CountNonFiniteIn(const void *data, size_t count, int64_t index, ScanResult *result) {
  const hn::ScalableTag<typename Format::Bits> d;
  const auto *p = static_cast<const typename Format::Bits *>(data);
  const size_t block = kBlockVectors * hn::Lanes(d);
  size_t i = 0;
  for (; i + block <= count; i += block) {
    if (HWY_UNLIKELY(!BlockIsFinite<Format>(d, p + i))) {
      CountExactly<Format>(d, p, i, i + block, index, result);
    }
  }
  CountExactly<Format>(d, p, i, count, index, result);
}

// The entry points HWY_EXPORT tables need: plain functions, the dtype chosen at run time.
bool HasNonFiniteRun(int32_t dtype, const void *data, size_t count) {
  bool found = false;
  VisitFloatFormat(dtype, [&](auto format) { found = HasNonFiniteIn<decltype(format)>(data, count); });
  return found;
}

void CountNonFiniteRun(int32_t dtype, const void *data, size_t count, int64_t index, ScanResult *result) {
  VisitFloatFormat(dtype, [&](auto format) { CountNonFiniteIn<decltype(format)>(data, count, index, result); });
}

}  // namespace HWY_NAMESPACE
}  // namespace numerics
}  // namespace tw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tw {
namespace numerics {

HWY_EXPORT(HasNonFiniteRun);
HWY_EXPORT(CountNonFiniteRun);

bool RunHasNonFinite(int32_t dtype, const void *data, size_t count) {
  return HWY_DYNAMIC_DISPATCH(HasNonFiniteRun)(dtype, data, count);
}

void RunCountNonFinite(int32_t dtype, const void *data, size_t count, int64_t first_index, ScanResult *result) {
  HWY_DYNAMIC_DISPATCH(CountNonFiniteRun)(dtype, data, count, first_index, result);
}

}  // namespace numerics
}  // namespace tw
#endif  // HWY_ONCE
