#include "checkpoint/upgrade.h"

#include <sys/stat.h>

#include <memory>
#include <new>
#include <vector>

#include "checkpoint/file/writer.h"
#include "checkpoint/open_checkpoint.h"

namespace tw {
namespace checkpoint {
namespace {

// Whether `a` and `b` name one existing file (a hard link or another spelling of the path included).
bool SameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

Status UpgradeCheckpoint(const std::string &from, const std::string &to) {
  // Written over its source, a checkpoint would be replaced before a failure could leave it.
  if (SameFile(from, to)) {
    return Status(TW_INVALID_ARGUMENT,
                  "upgrading checkpoint " + from + ": " + to + " is the same file; write the new one elsewhere");
  }
  OpenedCheckpoint opened;
  TW_RETURN_IF_ERROR(OpenCheckpoint(from, &opened));
  std::vector<TensorEntry> whole;  // a sharded checkpoint's tensors, as the job declared them
  if (opened.sharded != nullptr) {
    for (const ShardedTensor &t : opened.sharded->index().tensors) {
      TensorEntry entry;
      entry.name = t.name;
      entry.dtype = t.dtype;
      entry.shape = t.shape;
      whole.push_back(std::move(entry));
    }
  }
  const std::vector<TensorEntry> &tensors = opened.file != nullptr ? opened.file->tensors() : whole;
  std::vector<std::unique_ptr<uint8_t[]>> buffers;
  std::vector<TensorRef> refs;
  std::vector<CheckpointReader::Target> targets;
  for (const TensorEntry &t : tensors) {
    buffers.emplace_back(new (std::nothrow) uint8_t[t.byte_size() > 0 ? t.byte_size() : 1]);
    if (buffers.back() == nullptr) {
      return Status(TW_RESOURCE_EXHAUSTED, "out of memory reading tensor '" + t.name + "' of checkpoint " + from);
    }
    tw_tensor view = TW_TENSOR_INIT;
    view.dtype = t.dtype;
    view.ndim = static_cast<int32_t>(t.shape.size());
    view.shape = t.shape.empty() ? nullptr : t.shape.data();
    view.data = buffers.back().get();
    refs.emplace_back(view, t.name);
    targets.push_back({&t, buffers.back().get()});
  }
  if (opened.file != nullptr) {
    TW_RETURN_IF_ERROR(opened.file->ReadInto(targets));
  } else {
    for (const CheckpointReader::Target &target : targets) {
      const ShardedTensor *t = opened.sharded->Find(target.tensor->name);
      TW_RETURN_IF_ERROR(opened.sharded->ReadBox(*t, std::vector<int64_t>(t->shape.size(), 0), t->shape, target.data));
    }
  }
  const Status written = WriteCheckpoint(to, refs);
  return written.ok() ? written : written.WithPrefix("upgrading checkpoint " + from + ": ");
}

}  // namespace checkpoint
}  // namespace tw
