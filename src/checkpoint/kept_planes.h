// The zstd planes a restore's checking pass decodes, kept for its writing pass so that they are not
// decoded twice (reader.h: ReadInto proves every chunk before it writes any). Bounded by a byte budget:
// a chunk whose planes do not fit is decoded again in the writing pass, as without this store.
#ifndef TRAINWATCH_CHECKPOINT_KEPT_PLANES_H
#define TRAINWATCH_CHECKPOINT_KEPT_PLANES_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tw {
namespace checkpoint {

class KeptPlanes {
 public:
  // Restoring 256 MiB of float32 keeps 64 MiB (its exponent planes), of bfloat16 128 MiB of bf16 64 MiB.
  static constexpr size_t kDefaultBudget = 256u << 20;

  // For the chunks 0 … count-1 of one read.
  KeptPlanes(size_t count, size_t budget) : kept_(count), left_(budget) {}

  // Memory for chunk `index`'s decoded zstd planes (`size` bytes), or NULL when the budget is spent.
  // Thread-safe for distinct indices.
  uint8_t *Reserve(size_t index, size_t size) {
    size_t left = left_.load(std::memory_order_relaxed);
    do {
      if (size > left) return nullptr;
    } while (!left_.compare_exchange_weak(left, left - size, std::memory_order_relaxed));
    kept_[index].reset(new uint8_t[size]);
    return kept_[index].get();
  }
  // What Reserve gave chunk `index` (filled by then), or NULL.
  const uint8_t *Find(size_t index) const { return kept_[index].get(); }

 private:
  std::vector<std::unique_ptr<uint8_t[]>> kept_;
  std::atomic<size_t> left_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_KEPT_PLANES_H
