#include "checkpoint/snapshot.h"

#include <algorithm>
#include <cstring>

#include "checkpoint/io/parallel.h"

namespace tw {
namespace checkpoint {

Status Snapshot::Stage(const std::vector<TensorRef> &variables, DeviceVariables *device) {
  tensors_ = variables;
  status_ = device->Stage();
  if (!status_.ok()) {
    tensors_.clear();
    return status_;
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    if (device->on_device(i)) tensors_[i] = device->Staged(i);
  }
  return status_;
}

Status Snapshot::Capture(const std::vector<TensorRef> &variables, DeviceVariables *device) {
  TW_RETURN_IF_ERROR(Stage(variables, device));
  buffers_.resize(variables.size());
  buffer_sizes_.resize(variables.size(), 0);
  for (size_t i = 0; i < variables.size(); ++i) {
    if (device->on_device(i)) continue;  // staged: its buffer is the pinned one
    const size_t size = variables[i].byte_size();
    if (buffer_sizes_[i] != size) {
      buffers_[i].reset(size > 0 ? new uint8_t[size] : nullptr);
      buffer_sizes_[i] = size;
    }
    tensors_[i].set_data(buffers_[i].get());
  }
  // One memcpy stream does not saturate memory bandwidth: copy 16 MiB slices on every core.
  constexpr size_t kSlice = 16 << 20;
  struct Slice {
    const uint8_t *from;
    uint8_t *to;
    size_t size;
  };
  std::vector<Slice> slices;
  for (size_t i = 0; i < variables.size(); ++i) {
    if (device->on_device(i)) continue;
    const uint8_t *from = static_cast<const uint8_t *>(variables[i].data());
    for (size_t at = 0; at < buffer_sizes_[i]; at += kSlice) {
      slices.push_back(Slice{from + at, buffers_[i].get() + at, std::min(kSlice, buffer_sizes_[i] - at)});
    }
  }
  ParallelFor(slices.size(), 0, [&](size_t s, int) {
    std::memcpy(slices[s].to, slices[s].from, slices[s].size);
    return Status();
  });
  return Status();
}

Status Snapshot::Borrow(const std::vector<TensorRef> &variables, DeviceVariables *device) {
  return Stage(variables, device);
}

uint64_t Snapshot::byte_size() const {
  uint64_t total = 0;
  for (const TensorRef &t : tensors_) total += t.byte_size();
  return total;
}

}  // namespace checkpoint
}  // namespace tw
