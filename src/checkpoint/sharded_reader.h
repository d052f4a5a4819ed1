// Reading a sharded checkpoint (docs/checkpoint-format.md, "Sharded checkpoints") through its index:
// only the part files holding the wanted rows are opened, each pinned by the size and footer checksum
// the index recorded, so a part replaced, truncated or from another save is refused.
#ifndef TRAINWATCH_CHECKPOINT_SHARDED_READER_H
#define TRAINWATCH_CHECKPOINT_SHARDED_READER_H

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "checkpoint/mapped_file.h"
#include "checkpoint/reader.h"
#include "checkpoint/shard_index.h"

namespace tw {
namespace checkpoint {

// Byte ranges of tensors in one or more checkpoint files (the parts of a sharded checkpoint, or a
// single file), read all or nothing: every chunk of every file is proven before any byte is written.
class RangeReads {
 public:
  void Add(const CheckpointReader *reader, const CheckpointReader::Range &range);
  Status Prove(int threads = 0) const;  // CheckpointReader::ProveRanges of every file
  Status Fill(int threads = 0) const;   // then FillRanges

 private:
  std::vector<std::pair<const CheckpointReader *, std::vector<CheckpointReader::Range>>> files_;  // in first use order
  mutable KeptPlanes kept_;  // the zstd planes Prove decoded, for Fill (one budget for every file)
};

class ShardedReader {
 public:
  // Opens the file at `path`; *out stays NULL (OK) when it is not an index (a single-file checkpoint).
  // Errors: those of MappedFile::Open, TW_DATA_LOSS (an index that does not parse).
  static Status Open(const std::string &path, std::unique_ptr<ShardedReader> *out);

  const ShardIndex &index() const { return index_; }
  const ShardedTensor *Find(const std::string &name) const;  // NULL when absent

  // Copies rows [row_begin, row_begin + rows) of `tensor` (along its first dimension; a scalar is one
  // row) into `data`, in C order, from the parts that hold them, all or nothing, decoding only the
  // chunks that hold those rows. Boxes other than whole first-dimension slices: TW_UNIMPLEMENTED. A
  // part missing or not the one the index pinned: TW_DATA_LOSS naming it.
  Status ReadRows(const ShardedTensor &tensor, int64_t row_begin, int64_t rows, void *data);
  // ReadRows without reading: opens (and pins) the parts holding those rows and adds their byte ranges
  // to `reads`, which must not outlive this reader.
  Status PlanRows(const ShardedTensor &tensor, int64_t row_begin, int64_t rows, void *data, RangeReads *reads);

  // Every part pinned and every chunk of it checked (CheckpointReader::Verify).
  Status Verify();

 private:
  ShardedReader() = default;
  struct OpenPart {
    std::unique_ptr<MappedFile> file;
    std::unique_ptr<CheckpointReader> reader;  // over file's bytes
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
