#include "numerics/stats.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "base/tensor.h"
#include "numerics/kernels.h"
#include "numerics/tensor_runs.h"

namespace tw {
namespace numerics {
namespace {

// Integer and bool runs: finite by construction, so only min / max / sum. Not a hot path (the health
// pill is about float tensors), hence plain scalar code; blocks keep the double sum compensated.
template <typename T, bool kIsBool = false>
void AccumulateIntegers(const void *data, size_t count, StatsAccumulator *acc) {
  constexpr size_t kBlock = 4096;
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (size_t begin = 0; begin < count; begin += kBlock) {
    const size_t end = std::min(count, begin + kBlock);
    double block_sum = 0;
    for (size_t i = begin; i < end; ++i) {
      T element;
      std::memcpy(&element, bytes + i * sizeof(T), sizeof(T));  // any alignment
      const double value = kIsBool ? (element != 0 ? 1.0 : 0.0) : static_cast<double>(element);
      acc->min = std::min(acc->min, value);
      acc->max = std::max(acc->max, value);
      block_sum += value;
    }
    acc->AddSum(block_sum);
  }
  acc->finite_count += static_cast<int64_t>(count);
}

void AccumulateRunOf(int32_t dtype, const void *data, size_t count, int64_t first_index, StatsAccumulator *acc) {
  switch (dtype) {
    case TW_BOOL: return AccumulateIntegers<uint8_t, true>(data, count, acc);
    case TW_INT8: return AccumulateIntegers<int8_t>(data, count, acc);
    case TW_INT16: return AccumulateIntegers<int16_t>(data, count, acc);
    case TW_INT32: return AccumulateIntegers<int32_t>(data, count, acc);
    case TW_INT64: return AccumulateIntegers<int64_t>(data, count, acc);
    case TW_UINT8: return AccumulateIntegers<uint8_t>(data, count, acc);
    case TW_UINT16: return AccumulateIntegers<uint16_t>(data, count, acc);
    case TW_UINT32: return AccumulateIntegers<uint32_t>(data, count, acc);
    case TW_UINT64: return AccumulateIntegers<uint64_t>(data, count, acc);
    default: return RunStats(dtype, data, count, first_index, acc);
  }
}

}  // namespace

TensorStats ComputeStats(const tw_tensor &t) {
  StatsAccumulator acc;
  ForEachRun(t, [&](const void *data, size_t count, int64_t first_index) {
    AccumulateRunOf(t.dtype, data, count, first_index, &acc);
    return true;
  });

  TensorStats stats;
  stats.element_count = ElementCount(t);
  stats.finite_count = acc.finite_count;
  stats.nonfinite = acc.nonfinite;
  if (acc.finite_count == 0) {
    stats.min = stats.max = stats.mean = std::numeric_limits<double>::quiet_NaN();
  } else {
    stats.min = acc.min;
    stats.max = acc.max;
    stats.mean = acc.sum() / static_cast<double>(acc.finite_count);
  }
  return stats;
}

}  // namespace numerics
}  // namespace tw
