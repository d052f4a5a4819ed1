// The variables' contents at one instant, ready to be written. Saving is snapshot + write so that an
// asynchronous saver can stall training only for Capture (a memcpy into buffers reused from save to
// save, and the copies of device variables into their pinned staging buffers) and run WriteCheckpoint
// on a background thread.
#ifndef TRAINWATCH_CHECKPOINT_SNAPSHOT_H
#define TRAINWATCH_CHECKPOINT_SNAPSHOT_H

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "checkpoint/device_variables.h"

namespace tw {
namespace checkpoint {

class Snapshot {
 public:
  // Copies every variable's bytes into buffers this snapshot owns; buffers of the right size from an
  // earlier Capture are reused, so steady-state captures allocate nothing and take no page faults.
  // Device variables are copied to the host into `device`'s staging buffers (waited for), which the
  // snapshot then refers to: they must not be staged again until the write has finished.
  Status Capture(const std::vector<TensorRef> &variables, DeviceVariables *device);
  // Refers to the host variables' own memory instead (a synchronous save): no copy, and the variables
  // must not change until the write has finished. Device variables are staged as Capture does.
  Status Borrow(const std::vector<TensorRef> &variables, DeviceVariables *device);

  // Host memory only: a device variable's entry is its staging buffer.
  const std::vector<TensorRef> &tensors() const { return tensors_; }
  uint64_t byte_size() const;
  // The failure of the last Capture or Borrow (a device copy): such a snapshot is never written.
  const Status &status() const { return status_; }

 private:
  // Stages the device variables first, so that a failing copy leaves nothing half captured.
  Status Stage(const std::vector<TensorRef> &variables, DeviceVariables *device);

  std::vector<TensorRef> tensors_;
  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
  std::vector<size_t> buffer_sizes_;
  Status status_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_SNAPSHOT_H
