#include "checkpoint/codec/kept_planes.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace tw {
namespace checkpoint {
namespace {

constexpr size_t kHugePage = 2u << 20;
constexpr size_t kLine = 64;  // each chunk's planes start on a cache line

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Slabs of finished restores, kept for the next restore of the process (kept_planes.h). Its storage is
// static and never destroyed (a restore may end in a static destructor); the slabs themselves are
// unmapped when the library is unloaded or the process exits (ReleaseSpares), and a restore that
// ends later unmaps its own.
struct Spares {
  std::mutex mutex;
  std::vector<KeptPlanes::Slab> slabs;
  size_t bytes = 0;
  bool released = false;  // ReleaseSpares ran: nothing is kept any more
};

Spares &TheSpares() {
  alignas(Spares) static unsigned char storage[sizeof(Spares)];
  static Spares *spares = new (storage) Spares();
  return *spares;
}

// A dlclose that left the slabs mapped would leak up to kSpareBytes per load of the library.
__attribute__((destructor)) void ReleaseSpares() {
  Spares &spares = TheSpares();
  std::vector<KeptPlanes::Slab> slabs;
  {
    std::lock_guard<std::mutex> lock(spares.mutex);
    spares.released = true;
    slabs.swap(spares.slabs);
    spares.bytes = 0;
  }
  for (const KeptPlanes::Slab &slab : slabs) ::munmap(slab.map, slab.size);
}

}  // namespace

KeptPlanes::~KeptPlanes() {
  Spares &spares = TheSpares();
  std::vector<Slab> unmap;
  {
    std::lock_guard<std::mutex> lock(spares.mutex);
    for (const Slab &slab : slabs_) {
      if (spares.released) {
        unmap.push_back(slab);
        continue;
      }
#ifdef MADV_FREE
      // Contents are dead: the kernel may reclaim the pages under memory pressure instead of keeping
      // them; if it does not, the next restore writes them without a fault.
      ::madvise(slab.begin, slab.usable, MADV_FREE);
#endif
      spares.slabs.push_back(slab);
      spares.bytes += slab.size;
    }
    // Over the cap, the smallest go: one restore's slabs are what the next one most likely needs.
    std::sort(spares.slabs.begin(), spares.slabs.end(), [](const Slab &a, const Slab &b) { return a.size > b.size; });
    while (spares.bytes > kSpareBytes) {
      unmap.push_back(spares.slabs.back());
      spares.bytes -= spares.slabs.back().size;
      spares.slabs.pop_back();
    }
  }
  for (const Slab &slab : unmap) ::munmap(slab.map, slab.size);
}

size_t KeptPlanes::SpareBytes() {
  Spares &spares = TheSpares();
  std::lock_guard<std::mutex> lock(spares.mutex);
  return spares.bytes;
}

bool KeptPlanes::NewSlab(size_t bytes) {
  Slab slab{};
  {
    // The smallest spare slab that holds `bytes`.
    Spares &spares = TheSpares();
    std::lock_guard<std::mutex> lock(spares.mutex);
    auto best = spares.slabs.end();
    for (auto it = spares.slabs.begin(); it != spares.slabs.end(); ++it) {
      if (it->usable >= bytes && (best == spares.slabs.end() || it->usable < best->usable)) best = it;
    }
    if (best != spares.slabs.end()) {
      slab = *best;
      spares.bytes -= best->size;
      spares.slabs.erase(best);
    }
  }
  if (slab.map == nullptr) {
    // A slab of a huge page or more is mapped with a huge page of slack, so that its start can be
    // aligned to one (the kernel backs only aligned 2 MiB ranges with huge pages).
    const bool huge = bytes >= kHugePage;
    slab.size = huge ? RoundUp(bytes, kHugePage) + kHugePage : RoundUp(bytes, 4096);
    slab.map = ::mmap(nullptr, slab.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (slab.map == MAP_FAILED) return false;
    slab.begin = static_cast<uint8_t *>(slab.map);
    if (huge) {
      slab.begin += (kHugePage - reinterpret_cast<uintptr_t>(slab.begin) % kHugePage) % kHugePage;
#ifdef MADV_HUGEPAGE
      ::madvise(slab.begin, RoundUp(bytes, kHugePage), MADV_HUGEPAGE);  // a hint: without THP, 4 KiB pages
#endif
    }
    slab.usable = static_cast<size_t>(static_cast<uint8_t *>(slab.map) + slab.size - slab.begin);
  }
  slabs_.push_back(slab);
  free_ = slab.begin;
  free_size_ = slab.usable;
  return true;
}

void KeptPlanes::Expect(size_t bytes, size_t chunks) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes == 0 || left_ == 0) return;             // nothing to keep: no slab
  bytes = std::min(bytes, left_) + chunks * kLine;  // and room to start every chunk on a line
  if (bytes > free_size_) NewSlab(bytes);
}

uint8_t *KeptPlanes::Reserve(const Chunk *chunk, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (size > left_ || kept_.count(chunk) != 0) return nullptr;
  const size_t span = RoundUp(size, kLine);
  if (span > free_size_ && !NewSlab(span)) return nullptr;  // no memory to keep: decoded again
  uint8_t *at = free_;
  free_ += span;
  free_size_ -= span;
  left_ -= size;
  kept_.emplace(chunk, at);
  return at;
}

}  // namespace checkpoint
}  // namespace tw
