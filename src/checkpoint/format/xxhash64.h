// XXH64 (Yann Collet's xxHash, 64-bit variant): the checksum of every chunk in a checkpoint file.
// A small independent implementation: libzstd carries one internally but does not export it.
#ifndef TRAINWATCH_CHECKPOINT_XXHASH64_H
#define TRAINWATCH_CHECKPOINT_XXHASH64_H

#include <cstddef>
#include <cstdint>

namespace tw {
namespace checkpoint {

uint64_t Xxh64(const void *data, size_t size, uint64_t seed = 0);

// The same hash over bytes that arrive in pieces: Update(a), Update(b) then Digest() equals
// Xxh64(a + b). Lets a reader hash data it assembles in small cache-resident tiles.
class Xxh64Stream {
 public:
  explicit Xxh64Stream(uint64_t seed = 0);
  void Update(const void *data, size_t size);
  uint64_t Digest() const;

 private:
  uint64_t seed_;
  uint64_t v_[4];
  uint64_t total_ = 0;
  uint8_t buffer_[32];  // the bytes of an incomplete 32-byte stripe
  size_t buffered_ = 0;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_XXHASH64_H
