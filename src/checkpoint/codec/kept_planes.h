// The zstd planes a restore's proving pass decodes, kept for its writing pass so that they are not
// decoded twice (reader.h: a restore proves every chunk before it writes any). Bounded by a byte
// budget: a chunk whose planes do not fit is decoded again in the writing pass, as without this store.
// Keyed by the chunk's index entry, so one store serves the reads of several files.
//
// The planes live in a few large mappings (slabs) carved up chunk by chunk, with transparent huge
// pages asked for: decoded planes are fresh memory every restore, and faulting it in 4 KiB pages (a
// fault, a zeroed page and a cgroup charge each) cost as much CPU as decoding the planes; in 2 MiB
// pages the faults are 512× fewer. When the store is destroyed its slabs are kept for the process's
// next restore, up to kSpareBytes, and marked MADV_FREE: the kernel may take their pages back under
// memory pressure; if it does not, a repeated restore writes its planes without a single fault. They
// are unmapped when the library is unloaded (or the process exits).
#ifndef TRAINWATCH_CHECKPOINT_KEPT_PLANES_H
#define TRAINWATCH_CHECKPOINT_KEPT_PLANES_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "checkpoint/format/format.h"

namespace tw {
namespace checkpoint {

class KeptPlanes {
 public:
  // A quarter of a float32 model's bytes, half of a bfloat16 one's: ~1 GiB of float32 is covered.
  static constexpr size_t kDefaultBudget = 256u << 20;
  // Slab bytes kept for the next restore after a store is destroyed (the default budget and slack).
  static constexpr size_t kSpareBytes = kDefaultBudget + (4u << 20);

  explicit KeptPlanes(size_t budget = kDefaultBudget) : left_(budget) {}
  ~KeptPlanes();
  KeptPlanes(const KeptPlanes &) = delete;
  KeptPlanes &operator=(const KeptPlanes &) = delete;

  // The planes a proving pass is about to keep: `bytes` (within what is left of the budget) in `chunks`
  // reservations. One slab for all of them, mapped now, instead of one per chunk. A hint; Reserve
  // works without it.
  void Expect(size_t bytes, size_t chunks);
  // Memory for `chunk`'s decoded zstd planes (`size` bytes), or NULL when the budget is spent or the
  // chunk already has some (a tensor read twice: the first read keeps its planes) or no memory can be
  // mapped. Thread-safe.
  uint8_t *Reserve(const Chunk *chunk, size_t size);
  // What Reserve gave `chunk` (filled by then), or NULL. Not concurrently with Reserve.
  const uint8_t *Find(const Chunk *chunk) const {
    const auto it = kept_.find(chunk);
    return it == kept_.end() ? nullptr : it->second;
  }
  // Slab bytes the process keeps for its next restore (tests).
  static size_t SpareBytes();

  struct Slab {
    void *map;  // as mapped: size bytes
    size_t size;
    uint8_t *begin;  // the first huge-page boundary in it: usable bytes from there
    size_t usable;
  };

 private:
  bool NewSlab(size_t bytes);  // with mutex_ held; false when mmap fails

  std::mutex mutex_;
  std::unordered_map<const Chunk *, uint8_t *> kept_;
  std::vector<Slab> slabs_;
  uint8_t *free_ = nullptr;  // the unreserved rest of the newest slab
  size_t free_size_ = 0;
  size_t left_;  // of the budget
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_KEPT_PLANES_H
