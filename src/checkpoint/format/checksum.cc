#include "checkpoint/format/checksum.h"

namespace tw {
namespace checkpoint {

uint64_t ChunkChecksum(ChunkHash hash, const void *data, size_t size) {
  return hash != ChunkHash::kXxh64 ? Xxh3(data, size) : Xxh64(data, size);
}

uint64_t PlaneDigestsChecksum(const uint64_t *digests, int plane_count) {
  uint8_t bytes[8 * kMaxPlanes];
  for (int p = 0; p < plane_count; ++p) {
    for (int b = 0; b < 8; ++b) bytes[8 * p + b] = static_cast<uint8_t>(digests[p] >> (8 * b));
  }
  return Xxh3(bytes, 8 * static_cast<size_t>(plane_count));
}

uint64_t StoredChecksum(ChunkHash hash, const uint8_t *stored, const Chunk &chunk) {
  if (hash == ChunkHash::kXxh64) return Xxh64(stored, static_cast<size_t>(chunk.stored_size()));
  ChunkChecksumStream coded(hash);
  for (int p = 0; p < chunk.plane_count; ++p) {
    const size_t size = static_cast<size_t>(chunk.planes[p].stored_size);
    if (chunk.planes[p].codec != Codec::kRaw) coded.Update(stored, size);
    stored += size;
  }
  return coded.Digest();
}

}  // namespace checkpoint
}  // namespace tw
