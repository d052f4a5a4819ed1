#include "checkpoint/checksum.h"

namespace tw {
namespace checkpoint {

uint64_t ChunkChecksum(ChunkHash hash, const void *data, size_t size) {
  return hash == ChunkHash::kXxh3 ? Xxh3(data, size) : Xxh64(data, size);
}

}  // namespace checkpoint
}  // namespace tw
