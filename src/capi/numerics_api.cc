// extern "C" shims for trainwatch/numerics.h.
#include "base/tensor.h"
#include "capi/guard.h"
#include "numerics/check_numerics.h"
#include "numerics/scan.h"
#include "numerics/summary.h"
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

void tw_numerics_summary_init(tw_numerics_summary *summary) {
  if (summary == nullptr) return;
  const tw_numerics_summary init = TW_NUMERICS_SUMMARY_INIT;
  *summary = init;
}

tw_status tw_summarize(tw_numerics_summary *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(CheckOutStruct(out, "TW_NUMERICS_SUMMARY_INIT"));
    TW_RETURN_IF_ERROR(tw::CheckTensor(tensor, "tensor"));
    const tw::numerics::Summary summary = tw::numerics::Summarize(*tensor);
    out->element_count = summary.element_count;
    out->finite_count = summary.finite_count;
    out->nan_count = summary.nonfinite.nan_count;
    out->pos_inf_count = summary.nonfinite.pos_inf_count;
    out->neg_inf_count = summary.nonfinite.neg_inf_count;
    out->first_nonfinite_index = summary.nonfinite.first_nonfinite_index;
    out->min = summary.min;
    out->max = summary.max;
    out->mean = summary.mean;
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
