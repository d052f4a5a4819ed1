// Kernels over one contiguous run of elements, dynamically dispatched to the best SIMD target.
//
// `data` holds `count` elements of a floating-point `dtype` at any alignment; `first_index` is the
// row-major index of data[0] within the whole tensor, so that runs of a strided view report the
// tensor's own indices. Results accumulate into the caller's struct across runs. Non-float dtypes are
// ignored (they cannot hold NaN or Inf). Reentrant.
#ifndef TRAINWATCH_NUMERICS_KERNELS_H
#define TRAINWATCH_NUMERICS_KERNELS_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "numerics/scan.h"

namespace tw {
namespace numerics {

// What the statistics accumulate over the runs of a tensor.
struct StatsAccumulator {
  ScanResult nonfinite;
  int64_t finite_count = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  // Adds the sum of one block of finite values. Neumaier's compensation keeps the total exact to a few
  // ulps however many blocks there are; within a block the kernels sum in double across many lanes.
  void AddSum(double block_sum) {
    const double total = sum_ + block_sum;
    if (std::isfinite(total)) {  // once the sum overflows, the compensation would only turn it into NaN
      compensation_ +=
          std::fabs(sum_) >= std::fabs(block_sum) ? (sum_ - total) + block_sum : (block_sum - total) + sum_;
    }
    sum_ = total;
  }
  // Once the running sum has overflowed it is the answer: the compensation may then hold Inf - Inf
  // (some compilers evaluate it speculatively), which must not turn +Inf into NaN.
  double sum() const { return std::isfinite(sum_) ? sum_ + compensation_ : sum_; }

 private:
  double sum_ = 0;
  double compensation_ = 0;
};

// True if the run holds a NaN or ±Inf. Checks blocks of a few KiB and stops at the first bad one.
bool RunHasNonFinite(int32_t dtype, const void *data, size_t count);

// Adds the run's NaN / +Inf / -Inf counts to *result and sets its first index if still unset.
void RunCountNonFinite(int32_t dtype, const void *data, size_t count, int64_t first_index, ScanResult *result);

// Adds the run's finite min / max / sum / count and its non-finite counts to *acc.
void RunStats(int32_t dtype, const void *data, size_t count, int64_t first_index, StatsAccumulator *acc);

}  // namespace numerics
}  // namespace tw

#endif  // TRAINWATCH_NUMERICS_KERNELS_H
