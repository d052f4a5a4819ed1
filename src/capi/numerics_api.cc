// extern "C" shims for trainwatch/numerics.h.
#include "base/tensor.h"
#include "base/versioned.h"
#include "capi/guard.h"
#include "numerics/check_numerics.h"
#include "numerics/scan.h"
#include "numerics/summary.h"
#include "numerics/targets.h"

using tw::capi::Guard;

extern "C" {

tw_status tw_scan(tw_scan_result *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckOutVersioned(out, "out"));
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(tensor, "tensor", &view));
    const tw::numerics::ScanResult scan = tw::numerics::Scan(view);
    tw_scan_result result = TW_SCAN_RESULT_INIT;
    result.nan_count = scan.nan_count;
    result.pos_inf_count = scan.pos_inf_count;
    result.neg_inf_count = scan.neg_inf_count;
    result.first_nonfinite_index = scan.first_nonfinite_index;
    tw::WriteVersioned(result, out);
    return tw::Status();
  });
}

tw_status tw_has_nonfinite(int *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(tensor, "tensor", &view));
    *out = tw::numerics::HasNonFinite(view) ? 1 : 0;
    return tw::Status();
  });
}

tw_status tw_summarize(tw_numerics_summary *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckOutVersioned(out, "out"));
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(tensor, "tensor", &view));
    const tw::numerics::Summary summary = tw::numerics::Summarize(view);
    tw_numerics_summary result = TW_NUMERICS_SUMMARY_INIT;
    result.element_count = summary.element_count;
    result.finite_count = summary.finite_count;
    result.nan_count = summary.nonfinite.nan_count;
    result.pos_inf_count = summary.nonfinite.pos_inf_count;
    result.neg_inf_count = summary.nonfinite.neg_inf_count;
    result.first_nonfinite_index = summary.nonfinite.first_nonfinite_index;
    result.min = summary.min;
    result.max = summary.max;
    result.mean = summary.mean;
    tw::WriteVersioned(result, out);
    return tw::Status();
  });
}

tw_status tw_check_numerics(const tw_tensor *tensor, const char *message) {
  return Guard([&] {
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(tensor, "tensor", &view));
    TW_CHECK_ARG(message, "message");
    return tw::numerics::CheckNumerics(view, message);
  });
}

const char *tw_numerics_target(void) { return tw::numerics::ActiveTargetName(); }

}  // extern "C"
