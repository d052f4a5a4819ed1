// CheckpointReader's reads of byte ranges (reader.h): only the chunks a range overlaps are checked and
// decoded. A chunk lying wholly inside its range decodes straight into the destination; one cut by the
// range's ends decodes into per-thread scratch, of which the overlap is copied.
#include <algorithm>
#include <cstring>

#include "checkpoint/codec.h"
#include "checkpoint/parallel.h"
#include "checkpoint/reader.h"

namespace tw {
namespace checkpoint {
namespace {

// One chunk a range needs: where the chunk starts in its tensor's raw bytes.
struct RangeChunk {
  const CheckpointReader::Range *range;
  size_t chunk;
  uint64_t start;
};

Status ChunksOf(const std::vector<CheckpointReader::Range> &ranges, const std::string &path,
                std::vector<RangeChunk> *out) {
  for (const CheckpointReader::Range &range : ranges) {
    if (range.begin > range.end || range.end > range.tensor->byte_size()) {
      return Status(TW_INVALID_ARGUMENT, "bytes [" + std::to_string(range.begin) + ", " + std::to_string(range.end) +
                                             ") are outside tensor '" + range.tensor->name + "' of " + path);
    }
    uint64_t start = 0;
    for (size_t c = 0; c < range.tensor->chunks.size() && start < range.end; ++c) {
      const uint64_t size = range.tensor->chunks[c].raw_size;
      if (start + size > range.begin && range.begin < range.end) out->push_back(RangeChunk{&range, c, start});
      start += size;
    }
  }
  return Status();
}

}  // namespace

Status CheckpointReader::ProveRanges(const std::vector<Range> &ranges, int threads, KeptPlanes *keep) const {
  std::vector<RangeChunk> chunks;
  TW_RETURN_IF_ERROR(ChunksOf(ranges, path_, &chunks));
  std::vector<ChunkJob> jobs;
  jobs.reserve(chunks.size());
  for (const RangeChunk &c : chunks) jobs.push_back(ChunkJob{c.range->tensor, c.chunk, nullptr});
  return CheckChunks(jobs, threads, keep);
}

Status CheckpointReader::FillRanges(const std::vector<Range> &ranges, int threads, const KeptPlanes *kept) const {
  std::vector<RangeChunk> chunks;
  TW_RETURN_IF_ERROR(ChunksOf(ranges, path_, &chunks));
  const size_t workers = static_cast<size_t>(threads > 0 ? threads : DefaultThreadCount());
  std::vector<std::unique_ptr<ChunkCodec>> codecs(workers);
  std::vector<std::vector<uint8_t>> scratch(workers);
  return ParallelFor(chunks.size(), static_cast<int>(workers), [&](size_t j, int worker) {
    const RangeChunk &job = chunks[j];
    const TensorEntry &tensor = *job.range->tensor;
    const Chunk &chunk = tensor.chunks[job.chunk];
    std::unique_ptr<ChunkCodec> &codec = codecs[static_cast<size_t>(worker)];
    if (!codec) codec.reset(new ChunkCodec());
    const uint64_t first = std::max(job.start, job.range->begin);
    const uint64_t last = std::min(job.start + chunk.raw_size, job.range->end);
    uint8_t *destination = static_cast<uint8_t *>(job.range->data) + (first - job.range->begin);
    const bool whole = first == job.start && last == job.start + chunk.raw_size;
    uint8_t *raw = destination;
    if (!whole) {
      std::vector<uint8_t> &buffer = scratch[static_cast<size_t>(worker)];
      buffer.resize(static_cast<size_t>(chunk.raw_size));
      raw = buffer.data();
    }
    // Only a file changed in place since ProveRanges (never done to a checkpoint) could fail here.
    const Status decoded = codec->Decode(data_ + chunk.offset, chunk, tensor.dtype, tensor.filter, hash_, raw,
                                         RawCheck::kTrusted, kept != nullptr ? kept->Find(&chunk) : nullptr,
                                         whole ? DestinationStores(chunk.raw_size) : JoinStores::kCached);
    if (!decoded.ok()) return ChunkError(tensor, job.chunk, decoded);
    if (!whole) std::memcpy(destination, raw + (first - job.start), static_cast<size_t>(last - first));
    return Status();
  });
}

}  // namespace checkpoint
}  // namespace tw
