// The zstd planes a restore's proving pass decodes, kept for its writing pass so that they are not
// decoded twice (reader.h: a restore proves every chunk before it writes any). Bounded by a byte
// budget: a chunk whose planes do not fit is decoded again in the writing pass, as without this store.
// Keyed by the chunk's index entry, so one store serves the reads of several files.
#ifndef TRAINWATCH_CHECKPOINT_KEPT_PLANES_H
#define TRAINWATCH_CHECKPOINT_KEPT_PLANES_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "checkpoint/format.h"

namespace tw {
namespace checkpoint {

class KeptPlanes {
 public:
  // A quarter of a float32 model's bytes, half of a bfloat16 one's: ~1 GiB of float32 is covered.
  static constexpr size_t kDefaultBudget = 256u << 20;

  explicit KeptPlanes(size_t budget = kDefaultBudget) : left_(budget) {}

  // Memory for `chunk`'s decoded zstd planes (`size` bytes), or NULL when the budget is spent or the
  // chunk already has some (a tensor read twice: the first read keeps its planes). Thread-safe.
  uint8_t *Reserve(const Chunk *chunk, size_t size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (size > left_ || !kept_.emplace(chunk, nullptr).second) return nullptr;
      left_ -= size;
    }
    std::unique_ptr<uint8_t[]> planes(new uint8_t[size]);  // on bad_alloc the chunk stays without
    uint8_t *at = planes.get();
    std::lock_guard<std::mutex> lock(mutex_);
    kept_[chunk] = std::move(planes);
    return at;
  }
  // What Reserve gave `chunk` (filled by then), or NULL. Not concurrently with Reserve.
  const uint8_t *Find(const Chunk *chunk) const {
    const auto it = kept_.find(chunk);
    return it == kept_.end() ? nullptr : it->second.get();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const Chunk *, std::unique_ptr<uint8_t[]>> kept_;
  size_t left_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_KEPT_PLANES_H
