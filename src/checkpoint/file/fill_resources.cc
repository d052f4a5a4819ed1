#include "checkpoint/file/fill_resources.h"

#include <new>

namespace tw {
namespace checkpoint {

Status FillResources::Reserve(int workers, size_t decode_bytes, size_t cut_bytes) {
  try {
    const size_t count = static_cast<size_t>(workers > 0 ? workers : 1);
    codecs_.reserve(count);
    cut_.reserve(count);
    while (codecs_.size() < count) {
      codecs_.emplace_back(new ChunkCodec());
      codecs_.back()->ReserveDecode(decode_bytes);
      cut_.emplace_back(cut_bytes > 0 ? new uint8_t[cut_bytes] : nullptr);
    }
  } catch (const std::bad_alloc &) {
    return Status(TW_RESOURCE_EXHAUSTED, "out of memory for the decoding buffers of a checkpoint read");
  }
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
