#include "checkpoint/device_variables.h"

namespace tw {
namespace checkpoint {

DeviceVariables::DeviceVariables(const std::vector<TensorRef> &variables)
    : variables_(variables), slot_of_(variables.size(), -1) {
  for (size_t i = 0; i < variables.size(); ++i) {
    if (!variables[i].on_device()) continue;
    slot_of_[i] = static_cast<long>(slots_.size());
    slots_.push_back(i);
    tw_tensor view = TW_TENSOR_INIT;
    variables[i].FillView(&view);
    views_.push_back(view);
  }
}

void DeviceVariables::PointStagedAtBuffers() {
  staged_.resize(slots_.size());
  for (size_t s = 0; s < slots_.size(); ++s) {
    tw_tensor host = views_[s];
    host.data = staging_.buffer(s);
    host.device_type = TW_DEVICE_HOST;
    host.device_id = 0;
    staged_[s].Assign(host, host.name);
  }
}

Status DeviceVariables::Stage() {
  if (empty()) return Status();
  TW_RETURN_IF_ERROR(staging_.Stage(views_));
  PointStagedAtBuffers();
  return Status();
}

Status DeviceVariables::Reserve() {
  if (empty()) return Status();
  TW_RETURN_IF_ERROR(staging_.Reserve(views_));
  PointStagedAtBuffers();
  return Status();
}

Status DeviceVariables::Unstage(const std::vector<size_t> &variables) {
  std::vector<device::Copy> copies;
  copies.reserve(variables.size());
  for (size_t i : variables) {
    const size_t s = static_cast<size_t>(slot_of_[i]);
    const tw_tensor &view = views_[s];
    copies.push_back(device::Copy{view.data, staging_.buffer(s), variables_[i].byte_size(), variables_[i].name(),
                                  view.device_type, view.device_id});
  }
  return copies.empty() ? Status() : device::CopyToDevice(copies);
}

long DeviceVariables::IndexOf(const std::string &name) const {
  for (size_t i : slots_) {
    if (variables_[i].name() == name) return static_cast<long>(i);
  }
  return -1;
}

}  // namespace checkpoint
}  // namespace tw
