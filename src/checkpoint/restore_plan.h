// What one rank reads to restore its variables from one checkpoint — a single file or a sharded
// checkpoint's index and parts (docs/checkpoint-format.md) — planned and proven before any byte is
// written. A variable registered as a shard (ShardSpec: a box of a global tensor) reads only its box,
// from whichever parts hold it, so a checkpoint written by N ranks restores into M ranks sliced
// differently; any other variable reads its whole tensor, assembled from the parts when the checkpoint
// is sharded.
//
// The proof and the write are apart so that the ranks of a job can vote between them
// (session/restore_vote.cc): nobody writes a variable until every rank has proven its reads.
#ifndef TRAINWATCH_CHECKPOINT_RESTORE_PLAN_H
#define TRAINWATCH_CHECKPOINT_RESTORE_PLAN_H

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/progress.h"
#include "base/status.h"
#include "base/tensor.h"
#include "checkpoint/file/reader.h"
#include "checkpoint/sharded/shard_index.h"
#include "checkpoint/sharded/sharded_reader.h"

namespace tw {
namespace checkpoint {

struct RestoreTarget {
  const TensorRef *variable;
  const ShardSpec *shard;  // NULL: the whole tensor
};

class RestorePlan {
 public:
  // Opens the checkpoint at `path` and plans every target's read: name, dtype and (global) shape are
  // checked, and the parts a target needs are opened and pinned. Targets named in `optional` may be
  // absent: they are listed in *missing (when not NULL; else absence is an error). *misfit: true when
  // the checkpoint was read and does not fit — TW_INVALID_ARGUMENT naming the variable (dtype or
  // global shape differs), or TW_NOT_FOUND "Key <name> not found in checkpoint <path>" (a variable it
  // lacks) — false for any other failure: the file or a part missing, not a regular file, corrupt or
  // not the one the index pinned (TW_NOT_FOUND, TW_INVALID_ARGUMENT, TW_DATA_LOSS), or a failure that
  // proves nothing about it (TW_RESOURCE_EXHAUSTED, TW_IO). ClassifyRestoreFailure (restore_failure.h)
  // tells them apart.
  static Status Open(const std::string &path, const std::vector<RestoreTarget> &targets,
                     const std::vector<std::string> &optional, std::vector<std::string> *missing, bool *misfit,
                     std::unique_ptr<RestorePlan> *out);

  // Reads every chunk the plan needs into private memory and checks it there (stored checksum, frames,
  // raw checksum), then allocates everything Fill needs; writes nothing. TW_DATA_LOSS naming the file,
  // tensor and chunk (a file truncated while being read included); TW_RESOURCE_EXHAUSTED when memory
  // runs out.
  Status Prove(int threads = 0) const;
  // After a successful Prove: decodes the proven bytes into the variables. Allocates nothing and reads
  // nothing from the files, so it cannot fail, and whatever happens to the files after Prove is not seen
  // (C21). Prove's progress counts the proven bytes; Fill makes its last report.
  Status Fill() const;

  const std::string &path() const { return path_; }

  // The saver's device variables (indices) whose targets were their staging buffers: what the saver
  // copies to the device once Fill has decoded into those buffers (device_variables.h).
  const std::vector<size_t> &staged() const { return staged_; }
  void set_staged(std::vector<size_t> staged) { staged_ = std::move(staged); }

 private:
  RestorePlan() = default;
  Status PlanShard(const TensorRef &variable, const ShardSpec &shard, int32_t dtype,
                   const std::vector<int64_t> &global_shape);

  std::string path_;
  std::unique_ptr<CheckpointReader> file_;  // a single-file checkpoint
  std::unique_ptr<ShardedReader> sharded_;  // or a sharded one
  RangeReads reads_;
  std::unique_ptr<Progress> progress_;  // of this restore, from its Open
  std::vector<size_t> staged_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_RESTORE_PLAN_H
