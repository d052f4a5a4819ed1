// Joins byte planes back into elements (the inverse of the codec's byte-plane split), and splits
// 8-byte elements, with the widest vector instructions the CPU runs. A restore joins every float chunk
// twice (once to prove its raw checksum, once into the variable), and the compiler's own vectorisation
// of the portable loop (SSE2, 16 bytes a step) ran at a third of memory speed; for 8-byte elements it
// ran at a third of memory speed both ways. AVX-512BW (VBMI for 8-byte elements) and AVX2 kernels are
// compiled here with target attributes and the widest one the CPU runs is chosen once, so no special
// compiler flags.
#ifndef TRAINWATCH_CHECKPOINT_PLANE_JOIN_H
#define TRAINWATCH_CHECKPOINT_PLANE_JOIN_H

#include <cstddef>
#include <cstdint>

namespace tw {
namespace checkpoint {

// Which kernel joins. kBest is the widest this CPU runs; kPortable means "no vector kernel here" (the
// caller's portable loop joins). Outside x86-64 every value means kPortable.
enum class JoinLoop { kBest, kPortable, kAvx2, kAvx512 };
bool JoinLoopRuns(JoinLoop loop);         // whether this CPU runs it (for tests of every kernel)
const char *JoinLoopName(JoinLoop loop);  // kBest: the name of the kernel it chose

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
// kernel handles `element_size` on this CPU (2 and 4 bytes; 8 with AVX-512 VBMI); returns false without
// writing otherwise.
// Planes and elements may have any alignment; they must not overlap. `loop` must run on this CPU.
bool JoinPlanesVector(const uint8_t *const *planes, size_t count, size_t element_size, uint8_t *elements,
                      JoinStores stores = JoinStores::kCached, JoinLoop loop = JoinLoop::kBest);

// Writes planes[k][i] = element i's byte k for i < count, as SplitBytePlanes (codec.h), when a vector
// kernel handles `element_size` on this CPU (8 bytes, with AVX-512 VBMI: the compiler's loop is fast
// enough for 2 and 4); returns false without writing otherwise. No alignment needed; no overlap.
bool SplitPlanesVector(const uint8_t *elements, size_t count, size_t element_size, uint8_t *const *planes,
                       JoinLoop loop = JoinLoop::kBest);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_PLANE_JOIN_H
