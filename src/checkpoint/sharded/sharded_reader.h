// Reading a sharded checkpoint (docs/checkpoint-format.md, "Sharded checkpoints") through its index:
// only the part files holding the wanted rows are opened, each pinned by the size and footer checksum
// the index recorded, so a part replaced, truncated or from another save is refused.
#ifndef TRAINWATCH_CHECKPOINT_SHARDED_READER_H
#define TRAINWATCH_CHECKPOINT_SHARDED_READER_H

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/progress.h"
#include "base/status.h"
#include "checkpoint/file/fill_resources.h"
#include "checkpoint/file/reader.h"
#include "checkpoint/io/private_file.h"
#include "checkpoint/sharded/shard_index.h"

namespace tw {
namespace checkpoint {

// Byte ranges of tensors in one or more checkpoint files (the parts of a sharded checkpoint, or a
// single file), read all or nothing: every chunk of every file is proven before any byte is written.
class RangeReads {
 public:
  void Add(const CheckpointReader *reader, const CheckpointReader::Range &range);
  // The part of `stored` (a box of a global tensor: offset, and its extent entry->shape) that lies in
  // the box `wanted_offset` of extent `wanted_extent`, whose C-order bytes are at `data`. Rows along
  // the first dimension go straight to `data` when both boxes are whole along every other dimension;
  // otherwise the stored rows are read aside and their intersection copied into `data` by Fill.
  void AddBox(const CheckpointReader *reader, const TensorEntry *entry, const std::vector<int64_t> &stored_offset,
              const std::vector<int64_t> &wanted_offset, const std::vector<int64_t> &wanted_extent, void *data);
  // CheckpointReader::ProveRanges of every file, then everything Fill needs allocated (its chunk list,
  // every worker's codec and scratch): TW_DATA_LOSS, TW_RESOURCE_EXHAUSTED.
  // `progress` (may be NULL) expects and counts the raw bytes of every chunk proven.
  Status Prove(int threads = 0, Progress *progress = nullptr) const;
  // After Prove: decodes every file's chunks (CheckpointReader::FillJobs, in one parallel pass), then the
  // copies out of the rows read aside. Allocates nothing, and cannot fail after a successful Prove.
  Status Fill() const;

 private:
  // An N-d block copied from rows read aside into the wanted box (extents and starts in elements).
  struct BoxCopy {
    const uint8_t *from;
    std::vector<int64_t> from_extent, from_begin;
    uint8_t *to;
    std::vector<int64_t> to_extent, to_begin;
    std::vector<int64_t> count;
    size_t element_size;
    mutable std::vector<int64_t> index;  // Fill's position in count, allocated with the copy
  };
  std::vector<std::pair<const CheckpointReader *, std::vector<CheckpointReader::Range>>> files_;  // in first use order
  std::deque<std::vector<uint8_t>> aside_;  // rows of boxes cut along another dimension (stable addresses)
  std::vector<BoxCopy> copies_;
  mutable KeptPlanes kept_;  // the zstd planes Prove decoded, for Fill (one budget for every file)
  mutable std::vector<CheckpointReader::FillJob> fill_;  // what Fill decodes, listed by Prove
  mutable FillResources resources_;                      // and allocated by Prove
};

class ShardedReader {
 public:
  // Opens the file at `path`; *out stays NULL (OK) when it is not an index (a single-file checkpoint).
  // Errors: those of PrivateFile::Open and Load, TW_DATA_LOSS (an index that does not parse).
  static Status Open(const std::string &path, std::unique_ptr<ShardedReader> *out);

  const ShardIndex &index() const { return index_; }
  const ShardedTensor *Find(const std::string &name) const;  // NULL when absent

  // Copies the box [offset, offset + extent) of `tensor` (a scalar: both empty) into `data`, in C order,
  // from the parts that hold it, all or nothing, decoding only the chunks that hold its rows: any box,
  // whatever boxes the checkpoint was written in. A box outside the tensor: TW_INVALID_ARGUMENT. A
  // part missing, not a regular file or not the one the index pinned: TW_DATA_LOSS naming it; a part
  // that cannot be opened or mapped for another reason keeps that status (TW_RESOURCE_EXHAUSTED, TW_IO).
  Status ReadBox(const ShardedTensor &tensor, const std::vector<int64_t> &offset, const std::vector<int64_t> &extent,
                 void *data);
  // ReadBox without reading: opens (and pins) the parts holding that box and adds their reads to
  // `reads`, which must not outlive this reader.
  Status PlanBox(const ShardedTensor &tensor, const std::vector<int64_t> &offset, const std::vector<int64_t> &extent,
                 void *data, RangeReads *reads);

  // Every part pinned and every chunk of it checked (CheckpointReader::Verify).
  Status Verify();

 private:
  ShardedReader() = default;
  struct OpenPart {
    std::unique_ptr<CheckpointReader> reader;
  };
  Status Part(uint32_t part, const CheckpointReader **out);

  std::string path_;
  std::string dir_;  // with its trailing '/', or empty
  ShardIndex index_;
  std::map<uint32_t, OpenPart> parts_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_SHARDED_READER_H
