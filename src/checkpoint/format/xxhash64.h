// XXH64 (xxHash's 64-bit variant): the checksum of the index in every format version and of every
// chunk in version 1. libxxhash's code, compiled in xxh3.cc with the rest of xxHash.
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
  alignas(8) unsigned char state_[88];  // an XXH64_state_t (checked in xxh3.cc), kept opaque here
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_XXHASH64_H
