#include "checkpoint/sharded/sharded_save.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "checkpoint/format/format.h"
#include "checkpoint/format/xxhash64.h"
#include "checkpoint/io/durable_file.h"
#include "checkpoint/io/parallel.h"
#include "checkpoint/io/path.h"

namespace tw {
namespace checkpoint {
namespace {

// One variable as this rank declares it.
struct Declared {
  const TensorRef *variable;
  const ShardSpec *spec;  // NULL: replicated
};

std::vector<Declared> SortedDeclarations(const std::vector<TensorRef> &variables,
                                         const std::map<std::string, ShardSpec> &shards) {
  std::vector<Declared> declared;
  for (const TensorRef &v : variables) {
    const auto it = shards.find(v.name());
    declared.push_back({&v, it == shards.end() ? nullptr : &it->second});
  }
  std::sort(declared.begin(), declared.end(),
            [](const Declared &a, const Declared &b) { return a.variable->name() < b.variable->name(); });
  return declared;
}

std::vector<int64_t> GlobalShape(const Declared &d) {
  return d.spec != nullptr ? d.spec->global_shape : d.variable->shape();
}

// What every rank must declare alike: names, dtypes, which are sharded, global shapes. 62 bits, so that
// its negation (for a MIN through MAX) cannot overflow.
int64_t Signature(const std::vector<Declared> &declared) {
  std::string bytes;
  for (const Declared &d : declared) {
    bytes += d.variable->name();
    bytes.push_back('\0');
    const int32_t header[2] = {d.variable->dtype(), d.spec != nullptr ? 1 : 0};
    bytes.append(reinterpret_cast<const char *>(header), sizeof header);
    for (int64_t e : GlobalShape(d)) bytes.append(reinterpret_cast<const char *>(&e), sizeof e);
  }
  return static_cast<int64_t>(Xxh64(bytes.data(), bytes.size()) >> 2);
}

std::string RankList(const std::vector<int32_t> &ranks) {
  std::string text;
  for (int32_t r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

// Whether every part the vote described is still in place with its voted size, just before the index
// pins them: the chief's preparation runs while the other ranks write and removes files of the
// directory (the saver's retention), and another process may touch the directory between two rounds.
Status CheckPartsInPlace(const std::vector<std::string> &parts, const std::vector<int64_t> &vote) {
  for (size_t r = 0; r < parts.size(); ++r) {
    struct stat st;
    if (::stat(parts[r].c_str(), &st) != 0 || static_cast<int64_t>(st.st_size) != vote[3 * r + 1]) {
      return Status(TW_ABORTED, "part " + parts[r] + " changed after its rank voted (it is gone or no longer has " +
                                    "the voted size): not committed");
    }
  }
  return Status();
}

}  // namespace

std::vector<std::string> PartPaths(const std::string &checkpoint, uint32_t part_count) {
  std::vector<std::string> paths;
  const std::string dir = Dirname(checkpoint), name = Basename(checkpoint);
  for (uint32_t p = 0; p < part_count; ++p) paths.push_back(JoinPath(dir, PartFileName(name, p, part_count)));
  return paths;
}

Status AgreeShardLayout(const std::vector<TensorRef> &variables, const std::map<std::string, ShardSpec> &shards,
                        const Collective &collective, double timeout_secs, bool chief, int64_t *prepared,
                        ShardLayout *layout) {
  const std::vector<Declared> declared = SortedDeclarations(variables, shards);
  int64_t box_values = 0;  // offsets and extents of this rank's boxes
  for (const Declared &d : declared) {
    if (d.spec != nullptr) box_values += 2 * static_cast<int64_t>(d.spec->offset.size());
  }
  const int64_t signature = Signature(declared);
  const int64_t rank = collective.rank();
  // MAX of x and of -x gives the largest and the smallest: one allreduce checks that all agree.
  std::vector<int64_t> agree = {
      signature, -signature, box_values, -box_values, chief ? rank : -1, chief ? -rank : INT64_MIN + 1, *prepared};
  TW_RETURN_IF_ERROR(collective.Allreduce(&agree, TW_REDUCE_MAX, timeout_secs, "agreeing on the sharded variables"));
  *prepared = agree[6];
  if (*prepared != 0) return Status();
  if (agree[0] != -agree[1] || agree[2] != -agree[3]) {
    return Status(TW_INVALID_ARGUMENT,
                  "the ranks declare different checkpoint variables (names, dtypes, which are sharded, or global "
                  "shapes differ): every rank must register the same variables");
  }
  if (agree[4] < 0 || agree[4] != -agree[5]) {
    return Status(TW_INVALID_ARGUMENT, "a sharded checkpoint needs exactly one chief among the ranks");
  }
  const uint32_t chief_rank = static_cast<uint32_t>(agree[4]);
  const int32_t world = collective.world_size();
  // Rank slots: the rank's machine, then its boxes' offsets and extents.
  const int64_t slot_size = 1 + box_values;
  std::vector<int64_t> boxes(static_cast<size_t>(world) * static_cast<size_t>(slot_size), 0);
  int64_t *mine = boxes.data() + rank * slot_size;
  *mine++ = MachineId();
  for (const Declared &d : declared) {
    if (d.spec == nullptr) continue;
    const std::vector<int64_t> &extent = d.variable->shape();
    for (size_t k = 0; k < extent.size(); ++k) {
      *mine++ = d.spec->offset[k];
      *mine++ = extent[k];
    }
  }
  TW_RETURN_IF_ERROR(collective.Allreduce(&boxes, TW_REDUCE_SUM, timeout_secs, "gathering the shards' boxes"));
  ShardLayout agreed;
  agreed.part_count = static_cast<uint32_t>(world);
  for (int32_t r = 0; r < world; ++r) agreed.local_ranks += boxes[r * slot_size] == boxes[rank * slot_size] ? 1 : 0;
  size_t position = 1;  // of the current variable's values in a rank's slot
  for (const Declared &d : declared) {
    ShardedTensor t;
    t.name = d.variable->name();
    t.dtype = d.variable->dtype();
    t.shape = GlobalShape(d);
    const size_t ndim = t.shape.size();
    if (d.spec == nullptr) {
      uint64_t elements = 1;
      for (int64_t e : t.shape) elements *= static_cast<uint64_t>(e);
      if (elements > 0) t.boxes.push_back({chief_rank, std::vector<int64_t>(ndim, 0), t.shape});
    } else {
      for (int32_t r = 0; r < world; ++r) {
        const int64_t *slot = boxes.data() + r * slot_size + position;
        ShardBox box{static_cast<uint32_t>(r), std::vector<int64_t>(ndim), std::vector<int64_t>(ndim)};
        bool empty = false;
        for (size_t k = 0; k < ndim; ++k) {
          box.offset[k] = slot[2 * k];
          box.extent[k] = slot[2 * k + 1];
          empty = empty || box.extent[k] == 0;
        }
        if (!empty) t.boxes.push_back(std::move(box));
      }
      position += 2 * ndim;
    }
    agreed.tensors.push_back(std::move(t));
  }
  // Every rank checks the same tiling with the reader's own rules, so all reach the same verdict.
  ShardIndex check;
  for (uint32_t p = 0; p < agreed.part_count; ++p)
    check.parts.push_back({PartFileName("layout", p, agreed.part_count), 0, 0});
  check.tensors = agreed.tensors;
  std::string bytes;
  EncodeShardIndex(check, &bytes);
  ShardIndex parsed;
  const Status tiled =
      ParseShardIndex(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "layout", &parsed);
  if (!tiled.ok()) {
    return Status(TW_INVALID_ARGUMENT, "the ranks' shards do not tile their global tensors: " + tiled.message());
  }
  *layout = std::move(agreed);
  return Status();
}

Status WriteShardedCheckpoint(const ShardedSave &save, const std::string &checkpoint,
                              const std::vector<TensorRef> &tensors, const WriteOptions &options, WriteBuffers *buffers,
                              const std::function<Status()> &record) {
  const Collective &collective = *save.collective;
  const int32_t rank = collective.rank(), world = collective.world_size();
  const std::vector<std::string> parts = PartPaths(checkpoint, save.layout->part_count);
  const std::string &part_path = parts[static_cast<size_t>(rank)];
  // A re-save of a checkpoint whose index exists (the save at a session's creation writes the step it
  // just restored) replaces this rank's part by the same bytes: the index still lists it, so a failed
  // re-save leaves the part (the committed checkpoint stays whole) instead of removing it.
  const bool indexed_before = PathExists(checkpoint) && PathExists(part_path);

  // 1. This rank's part: every box it holds (replicated variables are the chief's box).
  std::vector<TensorRef> mine;
  for (const ShardedTensor &t : save.layout->tensors) {
    const bool held = std::any_of(t.boxes.begin(), t.boxes.end(),
                                  [&](const ShardBox &b) { return b.part == static_cast<uint32_t>(rank); });
    if (!held) continue;
    for (const TensorRef &ref : tensors) {
      if (ref.name() == t.name) mine.push_back(ref);
    }
  }
  // The chief's preparation first (it may remove files of the directory, never this save's parts).
  Status written = save.refused;
  if (written.ok() && save.chief && save.prepare) {
    written = save.prepare().WithPrefix("Preparing the checkpoint directory failed: ");
  }
  // Durable data, but not yet a durable name: the chief fsyncs the directory once for every part.
  WriteOptions part_options = options;
  part_options.sync_directory = false;
  part_options.job = JobId{};  // a part is owned through its index, which alone carries the job (format.h)
  WrittenFile described;
  if (written.ok()) {
    written = WriteCheckpoint(part_path, mine, part_options, buffers, &described)
                  .WithPrefix("Saving part " + part_path + " failed: ");
  }

  // 2. One vote: every rank's outcome, and its part's size and checksum for the index (rank slots).
  std::vector<int64_t> vote(3 * static_cast<size_t>(world), 0);
  vote[3 * rank] = written.code();
  vote[3 * rank + 1] = static_cast<int64_t>(described.file_size);
  vote[3 * rank + 2] = static_cast<int64_t>(described.index_xxh64);
  const Status voted =
      collective.Allreduce(&vote, TW_REDUCE_SUM, save.timeout_secs, "voting on the parts of checkpoint " + checkpoint);
  auto discard_part = [&] {
    if (!indexed_before) ::unlink(part_path.c_str());
  };
  if (!voted.ok()) {
    discard_part();
    return voted;
  }
  std::vector<int32_t> failed;
  tw_status first_code = TW_OK;
  for (int32_t r = 0; r < world; ++r) {
    if (vote[3 * r] == TW_OK) continue;
    if (failed.empty()) first_code = static_cast<tw_status>(vote[3 * r]);
    failed.push_back(r);
  }
  if (!failed.empty()) {
    discard_part();
    // Only the failing rank knows why (a full disk, a permission): its message goes to every rank, so
    // that whichever rank's error the job reports carries the cause. One broadcast, on this path only.
    std::string cause = rank == failed[0] ? written.message() : std::string();
    TW_RETURN_IF_ERROR(collective.BroadcastString(
        &cause, failed[0], save.timeout_secs,
        "sharing why rank " + std::to_string(failed[0]) + " could not write its part of checkpoint " + checkpoint));
    return Status(first_code, "checkpoint " + checkpoint + " was not committed: rank(s) " + RankList(failed) +
                                  " failed to write their part (" + tw::StatusName(first_code) + "); rank " +
                                  std::to_string(failed[0]) + ": " + cause);
  }

  // 3. The chief commits: the index, then the state file; every rank learns the outcome.
  Status committed;
  if (save.chief) {
    ShardIndex index;
    index.origin = Origin{options.job, Basename(checkpoint)};
    for (int32_t r = 0; r < world; ++r) {
      index.parts.push_back({Basename(parts[static_cast<size_t>(r)]), static_cast<uint64_t>(vote[3 * r + 1]),
                             static_cast<uint64_t>(vote[3 * r + 2])});
    }
    index.tensors = save.layout->tensors;
    std::string bytes;
    EncodeShardIndex(index, &bytes);
    committed = CheckPartsInPlace(parts, vote);
    if (committed.ok()) {
      committed = SyncDirectoryOf(checkpoint).WithPrefix("Making the parts of " + checkpoint + " durable failed: ");
    }
    if (committed.ok()) {
      committed = WriteFileDurably(checkpoint, bytes).WithPrefix("Writing the index of " + checkpoint + " failed: ");
    }
    if (committed.ok()) committed = record();
  }
  int64_t outcome = committed.code();
  // Only the chief contributes: a MAX is a broadcast from a root the others need not know.
  std::vector<int64_t> told = {save.chief ? outcome : INT64_MIN};
  const Status heard = collective.Allreduce(&told, TW_REDUCE_MAX, save.timeout_secs,
                                            "hearing whether checkpoint " + checkpoint + " was committed");
  if (!heard.ok()) return heard;
  outcome = told[0];
  if (outcome != TW_OK) {
    discard_part();
    if (save.chief) return committed;
    return Status(static_cast<tw_status>(outcome), "checkpoint " + checkpoint +
                                                       " was not committed: the chief could not write its index or "
                                                       "state file (" +
                                                       tw::StatusName(static_cast<tw_status>(outcome)) + ")");
  }
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
