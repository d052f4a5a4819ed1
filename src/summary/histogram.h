// TF's histogram (tensorflow/core/lib/histogram): fixed, exponentially growing bucket edges, so every
// histogram TensorBoard shows has the same buckets whatever produced it.
#ifndef TRAINWATCH_SUMMARY_HISTOGRAM_H
#define TRAINWATCH_SUMMARY_HISTOGRAM_H

#include <string>
#include <vector>

#include "base/status.h"
#include "summary/event.h"
#include "trainwatch/common.h"

namespace tw {
namespace summary {

// TF's default bucket limits: -DBL_MAX, then ±1e-12 · 1.1^k up to 1e20 mirrored around 0, then DBL_MAX
// (1551 edges), computed by the same loop so the doubles are bit-identical to TF's.
const std::vector<double> &DefaultBucketLimits();

class Histogram {
 public:
  Histogram();

  // Counts `value` in the first bucket whose limit exceeds it (TF's upper_bound rule).
  void Add(double value);

  // The HistogramProto TF's summary op writes: min, max, num, sum, sum of squares, and the buckets
  // with each run of empty ones merged into a single bucket ending at the run's last limit.
  HistogramData ToData() const;

 private:
  const std::vector<double> &limits_;
  std::vector<double> counts_;
  double min_;
  double max_;
  double num_ = 0;
  double sum_ = 0;
  double sum_squares_ = 0;
};

// The histogram of every element of a view (any dtype; floats of every width are widened exactly).
// Like TF's HistogramSummary op, a NaN or infinite element is an error:
// TW_INVALID_ARGUMENT "Nan in summary histogram for: <tag>". The view must have passed ReadTensor.
Status HistogramOfTensor(const tw_tensor &t, const std::string &tag, HistogramData *out);

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_HISTOGRAM_H
