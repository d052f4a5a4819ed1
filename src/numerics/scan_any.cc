// Scans of views wherever they live: host views here, device views through src/device.
#include "device/transfer.h"
#include "numerics/scan.h"

namespace tw {
namespace numerics {
namespace {

ScanResult FromDevice(const tw_device_scan &r) {
  ScanResult scan;
  scan.nan_count = r.nan_count;
  scan.pos_inf_count = r.pos_inf_count;
  scan.neg_inf_count = r.neg_inf_count;
  scan.first_nonfinite_index = r.first_nonfinite_index;
  return scan;
}

}  // namespace

Status ScanAny(const tw_tensor &t, ScanResult *out) {
  if (!IsOnDevice(t)) {
    *out = Scan(t);
    return Status();
  }
  std::vector<tw_device_scan> counted;
  TW_RETURN_IF_ERROR(device::CountNonfinite({t}, &counted));
  *out = FromDevice(counted[0]);
  return Status();
}

Status ScanAll(const std::vector<tw_tensor> &views, std::vector<ScanResult> *out) {
  out->assign(views.size(), ScanResult());
  std::vector<tw_tensor> on_device;
  std::vector<size_t> where;
  for (size_t i = 0; i < views.size(); ++i) {
    if (IsOnDevice(views[i])) {
      on_device.push_back(views[i]);
      where.push_back(i);
    } else {
      (*out)[i] = Scan(views[i]);
    }
  }
  if (on_device.empty()) return Status();
  std::vector<tw_device_scan> counted;
  TW_RETURN_IF_ERROR(device::CountNonfinite(on_device, &counted));
  for (size_t k = 0; k < where.size(); ++k) (*out)[where[k]] = FromDevice(counted[k]);
  return Status();
}

}  // namespace numerics
}  // namespace tw
