// A saver's variables that live on a device (trainwatch/device.h): their host copies in pinned staging
// buffers, reused from save to save and shared by saves and restores, so a saver holds one pinned copy
// of its device state at most. Saves copy the device variables into the buffers and write from there;
// restores decode into the buffers on the host and copy them back to the device. The library never
// touches device memory: every copy goes through the registered table, and is waited for before a
// buffer is read or a variable is said to be restored.
//
// Thread rules: one thread at a time (the saver's); the buffers may be read by an asynchronous write
// between Stage and the next call.
#ifndef TRAINWATCH_CHECKPOINT_DEVICE_VARIABLES_H
#define TRAINWATCH_CHECKPOINT_DEVICE_VARIABLES_H

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "device/transfer.h"

namespace tw {
namespace checkpoint {

class DeviceVariables {
 public:
  // `variables` (borrowed, as the saver's: they must outlive this object); those on a device are tracked.
  explicit DeviceVariables(const std::vector<TensorRef> &variables);

  bool empty() const { return slots_.empty(); }
  bool on_device(size_t variable) const { return slot_of_[variable] >= 0; }

  // copy_to_host of every device variable into its staging buffer, waited for: afterwards Staged(i)
  // holds variable i's bytes. Errors: the device's, naming the operation and the tensor.
  Status Stage();
  // The staging buffers, allocated without copying (a restore decodes into them).
  Status Reserve();
  // Variable i (a device variable) as host memory: its staging buffer under the variable's name, dtype
  // and shape. Valid after Stage or Reserve, until the next call that changes the buffers.
  const TensorRef &Staged(size_t variable) const { return staged_[static_cast<size_t>(slot_of_[variable])]; }
  // copy_to_device of the staged bytes of `variables` (indices, device variables only), waited for.
  Status Unstage(const std::vector<size_t> &variables);
  // The index of the device variable named `name`, or -1 (not one, or on the host).
  long IndexOf(const std::string &name) const;

 private:
  void PointStagedAtBuffers();

  const std::vector<TensorRef> &variables_;
  std::vector<size_t> slots_;      // slot → index of a device variable
  std::vector<long> slot_of_;      // index → slot, -1 for a host variable
  std::vector<tw_tensor> views_;   // slot → the variable's device view (pointing into variables_)
  std::vector<TensorRef> staged_;  // slot → the same tensor over its staging buffer
  device::Staging staging_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_DEVICE_VARIABLES_H
