// The numerics summary of a tensor (TF debugger's "health pill"): finite min, max and mean together
// with the NaN / ±Inf counts, all in one pass over the data.
#ifndef TRAINWATCH_NUMERICS_SUMMARY_H
#define TRAINWATCH_NUMERICS_SUMMARY_H

#include <cstdint>

#include "numerics/scan.h"
#include "trainwatch/common.h"

namespace tw {
namespace numerics {

struct Summary {
  int64_t element_count = 0;
  int64_t finite_count = 0;
  ScanResult nonfinite;
  // Over the finite elements only; NaN when there are none. The mean is accumulated in double with
  // compensated block sums, so it is exact to a few ulps of double for any float dtype. A sum that
  // overflows double (float64 data near its maximum) makes the mean ±Inf.
  double min = 0;
  double max = 0;
  double mean = 0;
};

// Summarizes a view that tw::ReadTensor accepted; any dtype (integers and bool are all finite; bool
// elements count as 0 or 1), any strides. Reentrant.
Summary Summarize(const tw_tensor &t);

}  // namespace numerics
}  // namespace tw

#endif  // TRAINWATCH_NUMERICS_SUMMARY_H
