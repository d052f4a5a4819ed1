// The variables' contents at one instant, ready to be written. Saving is snapshot + write so that an
// asynchronous saver can stall training only for Capture (a memcpy into buffers reused from save to
// save) and run WriteCheckpoint on a background thread.
#ifndef TRAINWATCH_CHECKPOINT_SNAPSHOT_H
#define TRAINWATCH_CHECKPOINT_SNAPSHOT_H

#include <cstdint>
#include <memory>
#include <vector>

#include "base/tensor.h"

namespace tw {
namespace checkpoint {

class Snapshot {
 public:
  // Copies every variable's bytes into buffers this snapshot owns; buffers of the right size from an
  // earlier Capture are reused, so steady-state captures allocate nothing and take no page faults.
  void Capture(const std::vector<TensorRef> &variables);
  // Refers to the variables' own memory instead (a synchronous save): no copy, and the variables must
  // not change until the write has finished.
  void Borrow(const std::vector<TensorRef> &variables);

  const std::vector<TensorRef> &tensors() const { return tensors_; }
  uint64_t byte_size() const;

 private:
  std::vector<TensorRef> tensors_;
  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
  std::vector<size_t> buffer_sizes_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_SNAPSHOT_H
