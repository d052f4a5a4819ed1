// The index of a sharded checkpoint (docs/checkpoint-format.md, "Sharded checkpoints"): which part file
// holds which box of which global tensor. A sharded checkpoint of step N is its part files
// "<name>.part-<i>-of-<n>", each an ordinary checkpoint file holding the boxes one rank wrote, and the
// index at "<name>" itself, written last: the checkpoint exists once its index does.
//
// The index file is framed as a checkpoint file (same header magic, same footer) with header flag 1,
// so a reader that predates sharding refuses it ("unknown header flags 1") instead of misreading it.
#ifndef TRAINWATCH_CHECKPOINT_SHARD_INDEX_H
#define TRAINWATCH_CHECKPOINT_SHARD_INDEX_H

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "checkpoint/format/format.h"

namespace tw {
namespace checkpoint {

constexpr uint32_t kMaxParts = 1u << 16;
// General N-d boxes are checked pairwise for overlap; slices along the first dimension (every other
// extent whole) are checked by sorting and may be as many as the parts.
constexpr uint32_t kMaxNdBoxes = 1024;

// What a rank declares for a variable that holds one box of a global tensor: the whole tensor's
// shape and where the box starts (its extent is the variable's shape).
struct ShardSpec {
  std::vector<int64_t> global_shape;
  std::vector<int64_t> offset;
};

// Checks `spec` against the box's extent: same rank (at least 1), offsets >= 0, the box inside the
// global tensor. TW_INVALID_ARGUMENT names `variable` and the dimension otherwise.
Status CheckShardSpec(const ShardSpec &spec, const std::vector<int64_t> &extent, const std::string &variable);

// One part file, pinned by its size and its own index checksum (which covers every chunk checksum of
// the part, so the part's whole content is pinned transitively).
struct ShardPart {
  std::string file;  // a bare file name in the index's directory: PartFileName(index name, i, n)
  uint64_t file_size = 0;
  uint64_t index_xxh64 = 0;
};

// A box of a global tensor, stored in part `part` under the tensor's name with shape `extent`.
struct ShardBox {
  uint32_t part = 0;
  std::vector<int64_t> offset;
  std::vector<int64_t> extent;
};

struct ShardedTensor {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> shape;   // global
  std::vector<ShardBox> boxes;  // tile the global tensor exactly
};

struct ShardIndex {
  Origin origin;  // from version 6: the index's own origin (format.h); its parts have none of their own
  std::vector<ShardPart> parts;
  std::vector<ShardedTensor> tensors;
};

// "<checkpoint_name>.part-00001-of-00004" for part 1 of 4 (zero-padded to 5 digits).
std::string PartFileName(const std::string &checkpoint_name, uint32_t part, uint32_t part_count);

// Parses a part file's name: *checkpoint_name receives "<name>" of "<name>.part-<i>-of-<n>" and *part
// receives i (either may be NULL). False for any other name.
bool ParsePartFileName(const std::string &name, std::string *checkpoint_name, uint32_t *part = nullptr);

// Whether `bytes` (a whole file) starts like a sharded index; says nothing about its validity.
bool LooksLikeShardIndex(const uint8_t *bytes, uint64_t size);

// The whole index file: header (flags 1), index body, footer.
void EncodeShardIndex(const ShardIndex &index, std::string *file_bytes);

// Parses and checks a whole index file: framing and checksum; part names are exactly
// PartFileName(<basename of file>, i, n); tensor names unique, dtypes valid, boxes inside their tensor
// and tiling it with no gap or overlap, each naming an existing part. TW_DATA_LOSS names the file (and
// the tensor) otherwise.
Status ParseShardIndex(const uint8_t *bytes, uint64_t size, const std::string &file, ShardIndex *index);

// The boxes of `tensor` that intersect [offset, offset + extent), in index order.
std::vector<const ShardBox *> BoxesIntersecting(const ShardedTensor &tensor, const std::vector<int64_t> &offset,
                                                const std::vector<int64_t> &extent);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_SHARD_INDEX_H
