// Joins byte planes back into elements (the inverse of the codec's byte-plane split), and splits
// 8-byte elements, with the widest vector instructions the CPU runs. A restore joins every float chunk
// twice (once to prove its raw checksum, once into the variable), and the compiler's own vectorisation
// of the portable loop (SSE2, 16 bytes a step) ran at a third of memory speed; for 8-byte elements it
// ran at a third of memory speed both ways. AVX-512BW (VBMI for 8-byte elements) and AVX2 kernels are
// compiled here with target attributes and chosen by the checkpoint kernels' Isa (cpu_dispatch.h), so
// no special compiler flags.
#ifndef TRAINWATCH_CHECKPOINT_PLANE_JOIN_H
#define TRAINWATCH_CHECKPOINT_PLANE_JOIN_H

#include <cstddef>
#include <cstdint>

#include "checkpoint/format/cpu_dispatch.h"

namespace tw {
namespace checkpoint {

// Where the joined elements go. kStreamed: non-temporal stores, which skip reading the destination's
// lines into the cache before overwriting them (a third of the memory traffic of a join into memory
// that is not in cache); for a destination written once and not read back soon — a restore's
// variables. kCached: ordinary stores, for output read again at once (a tile about to be hashed).
enum class JoinStores { kCached, kStreamed };
// The stores for `bytes` joined into a variable: streamed from 256 KiB (a chunk that size would push
// out much of the L2 cache), cached below, where what the caller reads next may still be in cache.
inline JoinStores DestinationStores(uint64_t bytes) {
  return bytes >= (256u << 10) ? JoinStores::kStreamed : JoinStores::kCached;
}

// Writes element i's byte k = planes[k][i] for i < count, as JoinBytePlanes (codec.h), when a vector
// kernel handles `element_size` at level `isa` (2 and 4 bytes from kAvx2; 8 at kAvx512Vbmi); returns
// false without writing otherwise (always at kPortable: the caller's portable loop joins).
// Planes and elements may have any alignment; they must not overlap. `isa` must run on this CPU.
bool JoinPlanesVector(const uint8_t *const *planes, size_t count, size_t element_size, uint8_t *elements,
                      JoinStores stores = JoinStores::kCached, Isa isa = Isa::kBest);

// Writes planes[k][i] = element i's byte k for i < count, as SplitBytePlanes (codec.h), when a vector
// kernel handles `element_size` at level `isa` (8 bytes, at kAvx512Vbmi: the compiler's loop is fast
// enough for 2 and 4); returns false without writing otherwise. No alignment needed; no overlap.
bool SplitPlanesVector(const uint8_t *elements, size_t count, size_t element_size, uint8_t *const *planes,
                       Isa isa = Isa::kBest);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_PLANE_JOIN_H
