#include "checkpoint/snapshot.h"

#include <cstring>

namespace tw {
namespace checkpoint {

void Snapshot::Capture(const std::vector<TensorRef> &variables) {
  tensors_ = variables;
  buffers_.resize(variables.size());
  buffer_sizes_.resize(variables.size(), 0);
  for (size_t i = 0; i < variables.size(); ++i) {
    const size_t size = variables[i].byte_size();
    if (buffer_sizes_[i] != size) {
      buffers_[i].reset(size > 0 ? new uint8_t[size] : nullptr);
      buffer_sizes_[i] = size;
    }
    if (size > 0) std::memcpy(buffers_[i].get(), variables[i].data(), size);
    tensors_[i].set_data(buffers_[i].get());
  }
}

void Snapshot::Borrow(const std::vector<TensorRef> &variables) { tensors_ = variables; }

uint64_t Snapshot::byte_size() const {
  uint64_t total = 0;
  for (const TensorRef &t : tensors_) total += t.byte_size();
  return total;
}

}  // namespace checkpoint
}  // namespace tw
