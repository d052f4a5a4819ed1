#include "summary/histogram.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "numerics/tensor_values.h"

namespace tw {
namespace summary {

const std::vector<double> &DefaultBucketLimits() {
  static const std::vector<double> limits = [] {
    std::vector<double> positive;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);  // 10% growth, as TF
    positive.push_back(DBL_MAX);
    std::vector<double> all;
    all.reserve(2 * positive.size() + 1);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    return all;
  }();
  return limits;
}

Histogram::Histogram()
    : limits_(DefaultBucketLimits()), counts_(limits_.size(), 0.0), min_(limits_.back()), max_(-DBL_MAX) {}

void Histogram::Add(double value) {
  size_t b = static_cast<size_t>(std::upper_bound(limits_.begin(), limits_.end(), value) - limits_.begin());
  // Only DBL_MAX itself is not below the last limit; TF would index past its buckets there.
  if (b == counts_.size()) --b;
  counts_[b] += 1.0;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  num_ += 1.0;
  sum_ += value;
  sum_squares_ += value * value;
}

HistogramData Histogram::ToData() const {
  HistogramData data;
  data.min = min_;
  data.max = max_;
  data.num = num_;
  data.sum = sum_;
  data.sum_squares = sum_squares_;
  for (size_t i = 0; i < counts_.size();) {
    double limit = limits_[i];
    double count = counts_[i];
    ++i;
    if (count <= 0.0) {  // extend the empty bucket over the whole run of empty ones
      while (i < counts_.size() && counts_[i] <= 0.0) limit = limits_[i++];
    }
    data.bucket_limit.push_back(limit);
    data.bucket.push_back(count);
  }
  return data;
}

Status HistogramOfTensor(const tw_tensor &t, const std::string &tag, HistogramData *out) {
  Histogram histogram;
  bool all_finite = true;
  numerics::VisitAsDoubles(t, [&](const double *values, size_t n) {
    for (size_t i = 0; i < n && all_finite; ++i) {
      if (!std::isfinite(values[i])) {
        all_finite = false;
      } else {
        histogram.Add(values[i]);
      }
    }
  });
  if (!all_finite) return Status(TW_INVALID_ARGUMENT, "Nan in summary histogram for: " + tag);
  *out = histogram.ToData();
  return Status();
}

}  // namespace summary
}  // namespace tw
