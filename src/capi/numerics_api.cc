// extern "C" shims for trainwatch/numerics.h.
#include "base/tensor.h"
#include "capi/guard.h"
#include "numerics/check_numerics.h"
#include "numerics/scan.h"
#include "numerics/stats.h"
#include "numerics/targets.h"

using tw::capi::Guard;

namespace {

// A caller-owned result struct: non-NULL, and its struct_size covers the first version of the struct.
template <typename Struct>
tw::Status CheckOutStruct(const Struct *out, const char *init_macro) {
  TW_CHECK_ARG(out, "out");
  if (out->struct_size < sizeof(Struct)) {
    return tw::Errorf(TW_INVALID_ARGUMENT, "out has struct_size %u, expected at least %zu (use %s)",
                      out->struct_size, sizeof(Struct), init_macro);
  }
  return tw::Status();
}

}  // namespace

extern "C" {

void tw_scan_result_init(tw_scan_result *result) {
  if (result == nullptr) return;
  const tw_scan_result init = TW_SCAN_RESULT_INIT;
  *result = init;
}

tw_status tw_scan(tw_scan_result *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(CheckOutStruct(out, "TW_SCAN_RESULT_INIT"));
    TW_RETURN_IF_ERROR(tw::CheckTensor(tensor, "tensor"));
    const tw::numerics::ScanResult scan = tw::numerics::Scan(*tensor);
    out->nan_count = scan.nan_count;
    out->pos_inf_count = scan.pos_inf_count;
    out->neg_inf_count = scan.neg_inf_count;
    out->first_nonfinite_index = scan.first_nonfinite_index;
    return tw::Status();
  });
}

tw_status tw_has_nonfinite(int *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    TW_RETURN_IF_ERROR(tw::CheckTensor(tensor, "tensor"));
    *out = tw::numerics::HasNonFinite(*tensor) ? 1 : 0;
    return tw::Status();
  });
}

void tw_numerics_stats_init(tw_numerics_stats *stats) {
  if (stats == nullptr) return;
  const tw_numerics_stats init = TW_NUMERICS_STATS_INIT;
  *stats = init;
}

tw_status tw_tensor_stats(tw_numerics_stats *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(CheckOutStruct(out, "TW_NUMERICS_STATS_INIT"));
    TW_RETURN_IF_ERROR(tw::CheckTensor(tensor, "tensor"));
    const tw::numerics::TensorStats stats = tw::numerics::ComputeStats(*tensor);
    out->element_count = stats.element_count;
    out->finite_count = stats.finite_count;
    out->nan_count = stats.nonfinite.nan_count;
    out->pos_inf_count = stats.nonfinite.pos_inf_count;
    out->neg_inf_count = stats.nonfinite.neg_inf_count;
    out->first_nonfinite_index = stats.nonfinite.first_nonfinite_index;
    out->min = stats.min;
    out->max = stats.max;
    out->mean = stats.mean;
    return tw::Status();
  });
}

tw_status tw_check_numerics(const tw_tensor *tensor, const char *message) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckTensor(tensor, "tensor"));
    TW_CHECK_ARG(message, "message");
    return tw::numerics::CheckNumerics(*tensor, message);
  });
}

const char *tw_numerics_target(void) { return tw::numerics::ActiveTargetName(); }

}  // extern "C"
