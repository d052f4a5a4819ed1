// extern "C" shims for trainwatch/numerics.h.
#include "base/tensor.h"
#include "base/versioned.h"
#include "capi/guard.h"
#include "device/transfer.h"
#include "numerics/check_numerics.h"
#include "numerics/scan.h"
#include "numerics/stats.h"
#include "numerics/targets.h"

using tw::capi::Guard;

extern "C" {

tw_status tw_scan(tw_scan_result *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckOutVersioned(out, "out"));
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(tensor, "tensor", &view, tw::Place::kHostOrDevice));
    tw::numerics::ScanResult scan;
    TW_RETURN_IF_ERROR(tw::numerics::ScanAny(view, &scan));
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
    TW_RETURN_IF_ERROR(tw::ReadTensor(tensor, "tensor", &view, tw::Place::kHostOrDevice));
    if (tw::IsOnDevice(view)) {  // V2: counted on the device, all at once
      tw::numerics::ScanResult scan;
      TW_RETURN_IF_ERROR(tw::numerics::ScanAny(view, &scan));
      *out = scan.all_finite() ? 0 : 1;
      return tw::Status();
    }
    *out = tw::numerics::HasNonFinite(view) ? 1 : 0;
    return tw::Status();
  });
}

tw_status tw_tensor_stats(tw_numerics_stats *out, const tw_tensor *tensor) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckOutVersioned(out, "out"));
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(tensor, "tensor", &view, tw::Place::kHostOrDevice));
    tw::device::HostCopy copy;  // V4: statistics of a device view are computed on a host copy
    if (tw::IsOnDevice(view)) {
      TW_RETURN_IF_ERROR(tw::device::HostCopy::Make(view, &copy));
      view = copy.view();
    }
    const tw::numerics::TensorStats stats = tw::numerics::ComputeStats(view);
    tw_numerics_stats result = TW_NUMERICS_STATS_INIT;
    result.element_count = stats.element_count;
    result.finite_count = stats.finite_count;
    result.nan_count = stats.nonfinite.nan_count;
    result.pos_inf_count = stats.nonfinite.pos_inf_count;
    result.neg_inf_count = stats.nonfinite.neg_inf_count;
    result.first_nonfinite_index = stats.nonfinite.first_nonfinite_index;
    result.min = stats.min;
    result.max = stats.max;
    result.mean = stats.mean;
    tw::WriteVersioned(result, out);
    return tw::Status();
  });
}

tw_status tw_check_numerics(const tw_tensor *tensor, const char *message) {
  return Guard([&] {
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(tensor, "tensor", &view, tw::Place::kHostOrDevice));
    TW_CHECK_ARG(message, "message");
    return tw::numerics::CheckNumerics(view, message);
  });
}

const char *tw_numerics_target(void) { return tw::numerics::ActiveTargetName(); }

}  // extern "C"
