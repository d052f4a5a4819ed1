// trainwatch/numerics.hpp — part of the C++ facade (bindings/cpp/trainwatch.hpp, whose comment gives its
// rules): NaN/Inf scanning, tensor statistics, check_numerics (trainwatch/numerics.h).
#ifndef TRAINWATCH_HPP_NUMERICS_HPP
#define TRAINWATCH_HPP_NUMERICS_HPP

#include "common.hpp"

namespace trainwatch {

// ------------------------------------------------------------------------------------------------
// Numerics
// ------------------------------------------------------------------------------------------------

struct ScanResult {
  int64_t nan_count = 0;
  int64_t pos_inf_count = 0;
  int64_t neg_inf_count = 0;
  int64_t first_nonfinite_index = -1;  // -1 when every element is finite
};

// The statistics of a tensor, read in one pass (tw_tensor_stats).
struct TensorStats : ScanResult {
  int64_t element_count = 0;
  int64_t finite_count = 0;
  double min = 0, max = 0, mean = 0;  // over finite elements; NaN when there is none
};

inline ScanResult scan(const Tensor &tensor) {
  const tw_tensor t = tensor.c_tensor();
  tw_scan_result r;
  tw_scan_result_init(&r);
  detail::call([&] { return tw_scan(&r, &t); });
  return ScanResult{r.nan_count, r.pos_inf_count, r.neg_inf_count, r.first_nonfinite_index};
}

inline TensorStats tensor_stats(const Tensor &tensor) {
  const tw_tensor t = tensor.c_tensor();
  tw_numerics_stats s;
  tw_numerics_stats_init(&s);
  detail::call([&] { return tw_tensor_stats(&s, &t); });
  TensorStats out;
  out.nan_count = s.nan_count;
  out.pos_inf_count = s.pos_inf_count;
  out.neg_inf_count = s.neg_inf_count;
  out.first_nonfinite_index = s.first_nonfinite_index;
  out.element_count = s.element_count;
  out.finite_count = s.finite_count;
  out.min = s.min;
  out.max = s.max;
  out.mean = s.mean;
  return out;
}

inline bool has_nonfinite(const Tensor &tensor) {
  const tw_tensor t = tensor.c_tensor();
  int found = 0;
  detail::call([&] { return tw_has_nonfinite(&found, &t); });
  return found != 0;
}

// Throws Error(TW_INVALID_ARGUMENT, "<message> : Tensor had NaN values") when an element is not finite.
inline void check_numerics(const Tensor &tensor, const std::string &message) {
  const tw_tensor t = tensor.c_tensor();
  detail::call([&] { return tw_check_numerics(&t, message.c_str()); });
}

inline std::string numerics_target() { return tw_numerics_target(); }

}  // namespace trainwatch

#endif  // TRAINWATCH_HPP_NUMERICS_HPP
