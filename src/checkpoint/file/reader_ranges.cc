// CheckpointReader's reads of byte ranges (reader.h): only the chunks a range overlaps are read, checked
// and decoded; the writing pass allocates everything it needs before it writes a byte.
#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_set>

#include "checkpoint/codec/codec.h"
#include "checkpoint/file/reader.h"
#include "checkpoint/io/parallel.h"

namespace tw {
namespace checkpoint {

Status CheckpointReader::PlanFill(const std::vector<Range> &ranges, std::vector<FillJob> *jobs) const {
  for (const Range &range : ranges) {
    if (range.begin > range.end || range.end > range.tensor->byte_size()) {
      return Status(TW_INVALID_ARGUMENT, "bytes [" + std::to_string(range.begin) + ", " + std::to_string(range.end) +
                                             ") are outside tensor '" + range.tensor->name + "' of " + path_);
    }
    uint64_t start = 0;
    for (size_t c = 0; c < range.tensor->chunks.size() && start < range.end; ++c) {
      const uint64_t size = range.tensor->chunks[c].raw_size;
      if (start + size > range.begin && range.begin < range.end) jobs->push_back(FillJob{this, &range, c, start});
      start += size;
    }
  }
  return Status();
}

Status CheckpointReader::ProveRanges(const std::vector<Range> &ranges, int threads, KeptPlanes *keep,
                                     Progress *progress) const {
  std::vector<FillJob> chunks;
  TW_RETURN_IF_ERROR(PlanFill(ranges, &chunks));
  std::vector<ChunkJob> jobs;
  jobs.reserve(chunks.size());
  for (const FillJob &c : chunks) jobs.push_back(ChunkJob{c.range->tensor, c.chunk});
  return CheckChunks(jobs, threads, keep, false, progress);
}

uint64_t CheckpointReader::ProvenBytes(const std::vector<Range> &ranges) const {
  std::vector<FillJob> chunks;
  if (!PlanFill(ranges, &chunks).ok()) return 0;  // ProveRanges fails the same way
  std::unordered_set<const Chunk *> seen;         // CheckChunks proves each chunk once
  uint64_t bytes = 0;
  for (const FillJob &c : chunks) {
    const Chunk &chunk = c.range->tensor->chunks[c.chunk];
    if (seen.insert(&chunk).second) bytes += chunk.raw_size;
  }
  return bytes;
}

Status CheckpointReader::FillRanges(const std::vector<Range> &ranges, int threads, const KeptPlanes *kept) const {
  std::vector<FillJob> jobs;
  TW_RETURN_IF_ERROR(PlanFill(ranges, &jobs));
  FillResources resources;
  TW_RETURN_IF_ERROR(ReserveFill(jobs, threads, kept, &resources));
  return FillJobs(jobs, &resources, kept);
}

namespace {

bool CutByRange(const CheckpointReader::FillJob &job, const Chunk &chunk) {
  return job.start < job.range->begin || job.start + chunk.raw_size > job.range->end;
}

}  // namespace

Status CheckpointReader::ReserveFill(const std::vector<FillJob> &jobs, int threads, const KeptPlanes *kept,
                                     FillResources *resources) {
  size_t decode_bytes = 0, cut_bytes = 0;  // the largest chunk each kind of scratch must hold
  for (const FillJob &job : jobs) {
    const Chunk &chunk = job.range->tensor->chunks[job.chunk];
    const size_t raw = static_cast<size_t>(chunk.raw_size);
    if (ChunkCodec::CodedPlaneBytes(chunk) != 0 && (kept == nullptr || kept->Find(&chunk) == nullptr)) {
      decode_bytes = std::max(decode_bytes, raw);
    }
    if (CutByRange(job, chunk)) cut_bytes = std::max(cut_bytes, raw);
  }
  const size_t workers = std::min(static_cast<size_t>(threads > 0 ? threads : DefaultThreadCount()), jobs.size());
  return resources->Reserve(static_cast<int>(workers), decode_bytes, cut_bytes);
}

// A chunk lying wholly inside its range decodes straight into the destination; one cut by the range's
// ends into the worker's cut scratch, of which the overlap is copied.
Status CheckpointReader::FillChunk(const FillJob &job, ChunkCodec *codec, uint8_t *cut_scratch,
                                   const KeptPlanes *kept) const {
  const TensorEntry &tensor = *job.range->tensor;
  const Chunk &chunk = tensor.chunks[job.chunk];
  const uint64_t first = std::max(job.start, job.range->begin);
  const uint64_t last = std::min(job.start + chunk.raw_size, job.range->end);
  uint8_t *destination = static_cast<uint8_t *>(job.range->data) + (first - job.range->begin);
  const bool whole = !CutByRange(job, chunk);
  uint8_t *raw = whole ? destination : cut_scratch;
  // The bytes were proven by ProveRanges and are private: decoding them again gives what it proved.
  const Status decoded = codec->Decode(data_ + chunk.offset, chunk, tensor.dtype, tensor.filter, hash_, raw,
                                       RawCheck::kTrusted, kept != nullptr ? kept->Find(&chunk) : nullptr,
                                       whole ? DestinationStores(chunk.raw_size) : JoinStores::kCached);
  if (!decoded.ok()) return ChunkError(tensor, job.chunk, decoded);
  if (!whole) std::memcpy(destination, raw + (first - job.start), static_cast<size_t>(last - first));
  return Status();
}

Status CheckpointReader::FillJobs(const std::vector<FillJob> &jobs, FillResources *resources, const KeptPlanes *kept) {
  auto fill = [&](size_t j, int worker) {
    return jobs[j].reader->FillChunk(jobs[j], resources->codec(worker), resources->cut_scratch(worker), kept);
  };
  // std::ref: the std::function holds a reference, which it stores without allocating.
  return ParallelFor(jobs.size(), resources->workers(), std::ref(fill));
}

}  // namespace checkpoint
}  // namespace tw
