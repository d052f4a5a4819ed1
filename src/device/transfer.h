// Everything the library does with device memory, through the registered tables (device/registry.h):
// the one place that calls a table's slots. Each failure is a Status whose message names the
// operation, the device and the tensors: "device cuda:0, copy_to_host of 'dense/kernel': <what the
// table said>".
//
// The rule of trainwatch/device.h is kept here: host memory a device writes (pinned buffers) is read
// only after an event recorded after the work has completed, and every function that enqueued work
// waits for it before it returns, also when it fails (so no buffer is freed under a pending copy).
// All functions are called on the thread of the library call they serve.
#ifndef TRAINWATCH_DEVICE_TRANSFER_H
#define TRAINWATCH_DEVICE_TRANSFER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "device/registry.h"

namespace tw {
namespace device {

// Pinned host memory from one table's alloc_pinned, freed by its free_pinned. Movable, not copyable.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { Free(); }
  PinnedBuffer(PinnedBuffer &&other) noexcept { *this = std::move(other); }
  PinnedBuffer &operator=(PinnedBuffer &&other) noexcept;
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;

  // size > 0. `name` (the tensor it is for) goes into a failure's message.
  static Status Allocate(std::shared_ptr<const Table> table, size_t size, PinnedBuffer *out,
                         std::string_view name = {});
  void *data() const { return data_; }
  size_t size() const { return size_; }
  const Table *table() const { return table_.get(); }
  // Leaks the memory: for a buffer the device may still write (CopyToHost's *unfinished).
  void Abandon();

 private:
  void Free();
  std::shared_ptr<const Table> table_;
  void *data_ = nullptr;
  size_t size_ = 0;
};

// One copy between a device view's memory and pinned host memory of the same table.
struct Copy {
  void *dst;
  const void *src;
  size_t size;
  std::string_view name;  // the tensor, for messages
  int32_t type;           // the device side's tw_device_type and device_id
  int32_t id;
};

// Enqueues every copy (one table call per (type, id) group), records one event per group, waits for
// all of them. Copies of 0 bytes are skipped; a list without copies calls nothing. *unfinished (when
// given) is set when a copy was enqueued but its event could not be recorded: nothing can tell when it
// completes, so the caller must never free or reuse the host buffers of `copies` (PinnedBuffer::Abandon).
Status CopyToHost(const std::vector<Copy> &copies, bool *unfinished = nullptr);
Status CopyToDevice(const std::vector<Copy> &copies, bool *unfinished = nullptr);

// Counts the non-finite elements of device views (contiguous, as ReadTensor guarantees) with one
// count_nonfinite call per (type, id) group, results into *out in the order of `views`: 40 bytes per
// tensor cross to the host, into a pinned scratch buffer of the table reused from call to call. A
// result the table could not have produced (negative counts, an index out of range) is TW_INTERNAL,
// never "all finite".
Status CountNonfinite(const std::vector<tw_tensor> &views, std::vector<tw_device_scan> *out);

// A host copy of one device view, for the readers of values (logging, summaries, final ops,
// tw_step_context_publish_copy, tw_tensor_stats): view() is a host tw_tensor (contiguous, device_type
// 0) with the device view's name, dtype and shape, whose data is pinned memory owned by this object.
class HostCopy {
 public:
  HostCopy();
  ~HostCopy();
  HostCopy(HostCopy &&) noexcept;
  HostCopy &operator=(HostCopy &&) noexcept;

  static Status Make(const tw_tensor &device_view, HostCopy *out);
  const tw_tensor &view() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Pinned staging buffers for many device views, kept from call to call while each view keeps its
// byte size and table: what a checkpoint save stages device variables through, one per session or
// saver ("one pinned copy of the state at most"). Views that are host memory get no buffer
// (buffer(i) is NULL) and are skipped by Stage and Unstage.
class Staging {
 public:
  // Allocates (or keeps) one buffer per device view.
  Status Reserve(const std::vector<tw_tensor> &views);
  // Reserve, then copy every device view into its buffer and wait.
  Status Stage(const std::vector<tw_tensor> &views);
  // Copies buffer(i) into views[i].data for every device view and waits; callers fill the buffers
  // first (a restore decodes into them). Reserve must have run for the same views.
  Status Unstage(const std::vector<tw_tensor> &views);
  void *buffer(size_t i) const { return i < buffers_.size() ? buffers_[i].data() : nullptr; }
  size_t size() const { return buffers_.size(); }
  void Clear() { buffers_.clear(); }

 private:
  void AbandonAll();
  std::vector<PinnedBuffer> buffers_;
};

}  // namespace device
}  // namespace tw

#endif  // TRAINWATCH_DEVICE_TRANSFER_H
