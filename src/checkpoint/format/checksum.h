// The chunk checksums of a checkpoint file under either hash its format versions use (format.h):
// one call for bytes in one piece, a stream for bytes that come in tiles.
#ifndef TRAINWATCH_CHECKPOINT_CHECKSUM_H
#define TRAINWATCH_CHECKPOINT_CHECKSUM_H

#include <cstddef>
#include <cstdint>

#include "checkpoint/format/format.h"
#include "checkpoint/format/xxh3.h"
#include "checkpoint/format/xxhash64.h"

namespace tw {
namespace checkpoint {

uint64_t ChunkChecksum(ChunkHash hash, const void *data, size_t size);

// The raw checksum of a byte-plane chunk under kXxh3Planes (version 5): XXH3-64 of its planes'
// XXH3-64 digests, 8 bytes each, little-endian, in plane order.
uint64_t PlaneDigestsChecksum(const uint64_t *digests, int plane_count);

// A chunk's stored checksum over its stored bytes `stored` (chunk.stored_size() of them). Version 1
// (XXH64) hashes all of them; from version 2 (XXH3) only its coded planes (zstd frames, Huffman- and
// tiered-coded planes), back to back: the raw planes are the raw bytes themselves, which the raw
// checksum covers byte for byte, so hashing them twice bought nothing (docs/checkpoint-format.md).
uint64_t StoredChecksum(ChunkHash hash, const uint8_t *stored, const Chunk &chunk);

// Update(a), Update(b) then Digest() equals ChunkChecksum(hash, a + b).
class ChunkChecksumStream {
 public:
  explicit ChunkChecksumStream(ChunkHash hash) : hash_(hash) {}
  void Update(const void *data, size_t size) {
    if (hash_ != ChunkHash::kXxh64) {
      xxh3_.Update(data, size);
    } else {
      xxh64_.Update(data, size);
    }
  }
  uint64_t Digest() const { return hash_ != ChunkHash::kXxh64 ? xxh3_.Digest() : xxh64_.Digest(); }

 private:
  ChunkHash hash_;
  Xxh3Stream xxh3_;
  Xxh64Stream xxh64_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_CHECKSUM_H
