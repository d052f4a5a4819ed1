#include "checkpoint/kept_planes.h"

#include <sys/mman.h>

#include <algorithm>

namespace tw {
namespace checkpoint {
namespace {

constexpr size_t kHugePage = 2u << 20;
constexpr size_t kLine = 64;  // each chunk's planes start on a cache line

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

KeptPlanes::~KeptPlanes() {
  for (const Slab &slab : slabs_) ::munmap(slab.map, slab.size);
}

bool KeptPlanes::NewSlab(size_t bytes) {
  // A slab of a huge page or more is mapped with a huge page of slack, so that its start can be
  // aligned to one (the kernel backs only aligned 2 MiB ranges with huge pages).
  const bool huge = bytes >= kHugePage;
  const size_t size = huge ? RoundUp(bytes, kHugePage) + kHugePage : RoundUp(bytes, 4096);
  void *map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return false;
  slabs_.push_back(Slab{map, size});
  uint8_t *begin = static_cast<uint8_t *>(map);
  if (huge) {
    begin += (kHugePage - reinterpret_cast<uintptr_t>(begin) % kHugePage) % kHugePage;
#ifdef MADV_HUGEPAGE
    ::madvise(begin, RoundUp(bytes, kHugePage), MADV_HUGEPAGE);  // a hint: without THP, 4 KiB pages
#endif
  }
  free_ = begin;
  free_size_ = static_cast<size_t>(static_cast<uint8_t *>(map) + size - begin);
  return true;
}

void KeptPlanes::Expect(size_t bytes, size_t chunks) {
  std::lock_guard<std::mutex> lock(mutex_);
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
