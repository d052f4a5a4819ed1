// Reads checkpoint files (format.h): the index on open, then any subset of tensors, every byte
// checked against its checksum before it reaches the caller. Every byte is read into the reader's
// private memory (private_file.h) before it is proven, and written to the caller from there: what is
// proven is what is written, whatever another program does to the file meanwhile (C21). A reader is
// used by one thread at a time (its proving passes load the file's bytes into its buffer).
#ifndef TRAINWATCH_CHECKPOINT_READER_H
#define TRAINWATCH_CHECKPOINT_READER_H

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/progress.h"
#include "base/status.h"
#include "base/tensor.h"
#include "checkpoint/codec/kept_planes.h"
#include "checkpoint/file/fill_resources.h"
#include "checkpoint/format/format.h"
#include "checkpoint/io/private_file.h"

namespace tw {
namespace checkpoint {

class CheckpointReader {
 public:
  // Opens `path` and reads and parses its header, footer and index; no chunk is read yet.
  // Errors: TW_NOT_FOUND, TW_IO, TW_DATA_LOSS (not a checkpoint, truncated, corrupt index),
  // TW_RESOURCE_EXHAUSTED (no memory to read it into).
  static Status Open(const std::string &path, std::unique_ptr<CheckpointReader> *out);
  // The same over a file already open (a part of a sharded checkpoint, checked against its index first).
  static Status OpenFile(std::unique_ptr<PrivateFile> file, const std::string &path,
                         std::unique_ptr<CheckpointReader> *out);
  // The same over bytes in memory, borrowed for the reader's life; `name` stands for the file in
  // messages (tests, fuzzing).
  static Status OpenMemory(const uint8_t *data, size_t size, const std::string &name,
                           std::unique_ptr<CheckpointReader> *out);

  const std::string &path() const { return path_; }
  const std::vector<TensorEntry> &tensors() const { return tensors_; }
  const TensorEntry *Find(const std::string &name) const;  // NULL when absent
  const Origin &origin() const { return origin_; }         // none (all zero) before version 6
  // The footer's index checksum, of the index this reader parsed (a sharded checkpoint's index pins it).
  uint64_t index_checksum() const { return index_checksum_; }

  struct Target {
    const TensorEntry *tensor;  // from tensors()
    void *data;                 // tensor->byte_size() bytes
  };
  // Reads each target's tensor into its buffer, all or nothing: every chunk of every target is read
  // into private memory and proven there (stored checksum, zstd frames and their sizes, raw checksum
  // after decoding, as Verify), and only then written, in parallel, into the buffers, from the same
  // bytes; everything the writing pass needs is allocated before it starts (FillResources). The
  // decoded zstd planes of the proof are kept for the writing pass up to KeptPlanes::kDefaultBudget
  // bytes (a quarter of a float32 model's bytes, half of a bfloat16 one's); chunks beyond it are
  // decoded again. Never a second copy of the tensors. TW_DATA_LOSS names the file, tensor and chunk
  // (a file truncated while being read included), TW_RESOURCE_EXHAUSTED a failed allocation; the
  // buffers are then untouched.
  Status ReadInto(const std::vector<Target> &targets, int threads = 0,
                  size_t keep_budget = KeptPlanes::kDefaultBudget) const;

  // Decodes every chunk and checks both checksums, keeping nothing (what `trainwatch-ckpt verify` does):
  // each chunk's bytes are given back once proven.
  Status Verify(int threads = 0) const;

  // Part of a tensor: raw bytes [begin, end) of `tensor` (from tensors()) go to `data` (end - begin
  // bytes). Only the chunks overlapping the range are read (reader_ranges.cc): a rank restoring its
  // rows of a shard decodes no more than the chunks holding them.
  struct Range {
    const TensorEntry *tensor;
    uint64_t begin;
    uint64_t end;
    void *data;
  };
  // ReadInto's two passes for ranges, apart, so that many files can be proven before any is written
  // (an all-or-nothing restore from a sharded checkpoint, restore_plan.h): ProveRanges reads and checks
  // every chunk the ranges overlap as ReadInto's first pass does and writes nothing; FillRanges then
  // decodes them into the ranges' buffers from the bytes ProveRanges read, trusting that proof.
  // TW_DATA_LOSS as ReadInto; TW_INVALID_ARGUMENT for a range outside its tensor; TW_RESOURCE_EXHAUSTED
  // before any byte is written.
  // With `keep`, ProveRanges leaves the zstd planes it decoded there, and FillRanges given them as
  // `kept` does not decode them again (ReadInto does this within one call).
  // `progress` (may be NULL) counts each chunk's raw bytes once proven; ProvenBytes is what it will count.
  Status ProveRanges(const std::vector<Range> &ranges, int threads = 0, KeptPlanes *keep = nullptr,
                     Progress *progress = nullptr) const;
  uint64_t ProvenBytes(const std::vector<Range> &ranges) const;
  Status FillRanges(const std::vector<Range> &ranges, int threads = 0, const KeptPlanes *kept = nullptr) const;

  // FillRanges in steps, for a plan over many files that must fill all of them or none (RangeReads):
  // PlanFill lists the chunks of `ranges` (after their ProveRanges), ReserveFill allocates what filling
  // any listed chunk needs, and FillJobs then decodes them all, allocating nothing: after a successful
  // ReserveFill it cannot fail (the bytes were proven and are private).
  struct FillJob {
    const CheckpointReader *reader;
    const Range *range;
    size_t chunk;
    uint64_t start;  // of the chunk in its tensor's raw bytes
  };
  Status PlanFill(const std::vector<Range> &ranges, std::vector<FillJob> *jobs) const;
  static Status ReserveFill(const std::vector<FillJob> &jobs, int threads, const KeptPlanes *kept,
                            FillResources *resources);
  static Status FillJobs(const std::vector<FillJob> &jobs, FillResources *resources, const KeptPlanes *kept);

 private:
  CheckpointReader() = default;
  Status Parse();
  struct ChunkJob {
    const TensorEntry *tensor;
    size_t chunk;
  };
  // Reads each job's chunk into private memory (once, however many jobs name it), checks its stored
  // checksum, then that it decodes to its raw checksum; with `keep`, leaves the decoded zstd planes
  // there (as its budget allows) for the writing pass. `release`: give each chunk's bytes back once
  // proven (nothing will be written from them).
  Status CheckChunks(const std::vector<ChunkJob> &jobs, int threads, KeptPlanes *keep, bool release = false,
                     Progress *progress = nullptr) const;
  Status ChunkError(const TensorEntry &tensor, size_t chunk, const Status &cause) const;
  bool StoredChecksumMatches(const Chunk &chunk) const;
  Status FillChunk(const FillJob &job, ChunkCodec *codec, uint8_t *cut_scratch, const KeptPlanes *kept) const;

  std::string path_;
  std::unique_ptr<PrivateFile> file_;  // NULL for OpenMemory
  const uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t index_checksum_ = 0;
  ChunkHash hash_ = ChunkHash::kXxh3;  // of the chunk checksums, by the file's format version
  std::vector<TensorEntry> tensors_;
  Origin origin_;
  std::unordered_map<std::string, size_t> by_name_;
};

// OK when `destination` (a variable) has the dtype and shape of `tensor`; else TW_INVALID_ARGUMENT naming
// the variable, both types and the file.
Status CheckRestorable(const TensorEntry &tensor, const TensorRef &destination, const std::string &file);
// "float32[2,3]": a stored tensor's dtype and shape as messages name them.
std::string Describe(int32_t dtype, const std::vector<int64_t> &shape);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_READER_H
