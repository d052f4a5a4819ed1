// Everything the writing pass of an all-or-nothing read needs (reader.h, FillRanges), allocated before
// it writes a byte: per worker a codec whose zstd context and plane scratch are ready for the largest
// chunk it may decode, and scratch for a chunk cut by a range's end. The writing pass then allocates
// nothing, so a failed allocation is TW_RESOURCE_EXHAUSTED with every variable untouched, never a
// restore stopped half-way (C21).
#ifndef TRAINWATCH_CHECKPOINT_FILL_RESOURCES_H
#define TRAINWATCH_CHECKPOINT_FILL_RESOURCES_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "checkpoint/codec/codec.h"

namespace tw {
namespace checkpoint {

class FillResources {
 public:
  FillResources() = default;
  FillResources(const FillResources &) = delete;
  FillResources &operator=(const FillResources &) = delete;

  // Makes `workers` workers ready: codecs able to decode coded planes of chunks of up to `decode_bytes`
  // raw bytes into their scratch, and `cut_bytes` of scratch each for chunks cut by a range. Called once.
  // TW_RESOURCE_EXHAUSTED when an allocation fails.
  Status Reserve(int workers, size_t decode_bytes, size_t cut_bytes);

  int workers() const { return static_cast<int>(codecs_.size()); }
  ChunkCodec *codec(int worker) const { return codecs_[static_cast<size_t>(worker)].get(); }
  uint8_t *cut_scratch(int worker) const { return cut_[static_cast<size_t>(worker)].get(); }

 private:
  std::vector<std::unique_ptr<ChunkCodec>> codecs_;
  std::vector<std::unique_ptr<uint8_t[]>> cut_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_FILL_RESOURCES_H
