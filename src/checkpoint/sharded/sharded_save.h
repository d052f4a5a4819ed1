// Saving one checkpoint from many ranks (docs/checkpoint-format.md, "Sharded checkpoints"): every rank
// writes its part file at the same time, one vote over the job's collective says whether every part is
// durable, and only then does the chief write the index — the checkpoint exists once the index does.
// Any rank's failure means nobody commits: the previous checkpoint stays the newest.
#ifndef TRAINWATCH_CHECKPOINT_SHARDED_SAVE_H
#define TRAINWATCH_CHECKPOINT_SHARDED_SAVE_H

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "checkpoint/file/writer.h"
#include "checkpoint/sharded/shard_index.h"
#include "distributed/collective.h"

namespace tw {
namespace checkpoint {

// Which tensor of the job lives where: agreed by every rank once (two small allreduces), then reused by
// every save. Replicated variables are one whole box in part 0 (the chief's).
struct ShardLayout {
  std::vector<ShardedTensor> tensors;  // sorted by name
  uint32_t part_count = 0;
  int local_ranks = 0;  // ranks of the job on this rank's machine (MachineId), this one included
};

// `variables` as the saver holds them; `shards` says which are boxes of a global tensor. Every rank
// must declare the same names, dtypes and global shapes, exactly one rank is `chief` (its part holds
// the replicated variables), and the boxes must tile every global tensor: TW_INVALID_ARGUMENT naming
// the difference otherwise (on every rank alike). The gathering also counts the ranks sharing this
// rank's machine, for the threads each may use. Collective failures as Collective's.
// `*prepared` is this rank's failure slot (distributed/shared_failure.h) of preparing the save (the
// chief's preparation of the directory, any rank's check of its path; 0 when it went well), MAX-reduced
// in the first round — a saver's first save needs no round of its own for it — and set to the job's;
// when it is not 0 the agreement ends there on every rank (TW_OK returned, `layout` untouched) and the
// caller shares the failing rank's message (ShareFailure) and reports it.
Status AgreeShardLayout(const std::vector<TensorRef> &variables, const std::map<std::string, ShardSpec> &shards,
                        const Collective &collective, double timeout_secs, bool chief, int64_t *prepared,
                        ShardLayout *layout);

// Writes this rank's part of the checkpoint at `checkpoint` (its boxes; the chief also the replicated
// variables; fsynced, but its directory not) and votes. On a unanimous vote the chief fsyncs the
// directory once (every part's name durable), writes the index durably and then runs `record`
// (the state file); its outcome is then told to every rank, so every rank returns the same code. What
// the outcome does not depend on (deleting evicted checkpoints) the caller does after this returns:
// the other ranks are released first, and so are the parts of an earlier save of the same name with
// another number of parts (the chief's, with RemoveReplacedParts: retention sits above this layer).
// `prepare` (the chief's; may be empty) runs on the chief before it writes its part, while the other
// ranks write theirs: its failure is the chief's vote, and the chief then checks that every voted part
// is still in place before it commits (its preparation must not have removed one).
// `tensors` are the snapshot's (names as the variables'). On failure no index is written, this rank's
// part is removed (unless `checkpoint`'s index existed before: a failed re-save of a committed step
// leaves that checkpoint whole), and the message names the rank(s) that failed and quotes the first
// one's own error.
struct ShardedSave {
  const ShardLayout *layout;
  const Collective *collective;
  double timeout_secs;
  bool chief;
  std::function<Status()> prepare;
  Status refused;  // this rank cannot save there (its directory is missing): its vote, no part written
};
Status WriteShardedCheckpoint(const ShardedSave &save, const std::string &checkpoint,
                              const std::vector<TensorRef> &tensors, const WriteOptions &options, WriteBuffers *buffers,
                              const std::function<Status()> &record);

// The part files of `checkpoint` for `part_count` parts, in part order.
std::vector<std::string> PartPaths(const std::string &checkpoint, uint32_t part_count);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_SHARDED_SAVE_H
