// XXH64 (Yann Collet's xxHash, 64-bit variant): the checksum of every chunk in a checkpoint file.
// A small independent implementation: libzstd carries one internally but does not export it.
#ifndef TRAINWATCH_CHECKPOINT_XXHASH64_H
#define TRAINWATCH_CHECKPOINT_XXHASH64_H

#include <cstddef>
#include <cstdint>

namespace tw {
namespace checkpoint {

uint64_t Xxh64(const void *data, size_t size, uint64_t seed = 0);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_XXHASH64_H
