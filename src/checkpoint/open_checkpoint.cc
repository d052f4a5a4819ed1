#include "checkpoint/open_checkpoint.h"

#include "checkpoint/device_variables.h"

namespace tw {
namespace checkpoint {

Status OpenCheckpoint(const std::string &path, OpenedCheckpoint *out) {
  out->file.reset();
  TW_RETURN_IF_ERROR(ShardedReader::Open(path, &out->sharded));
  if (out->sharded != nullptr) return Status();
  return CheckpointReader::Open(path, &out->file);
}

Status ListVariables(const std::string &path, std::vector<TensorEntry> *tensors) {
  OpenedCheckpoint opened;
  TW_RETURN_IF_ERROR(OpenCheckpoint(path, &opened));
  if (opened.sharded != nullptr) {  // whole tensors, as the job declared them; no chunks of their own
    tensors->clear();
    for (const ShardedTensor &tensor : opened.sharded->index().tensors) {
      TensorEntry entry;
      entry.name = tensor.name;
      entry.dtype = tensor.dtype;
      entry.shape = tensor.shape;
      tensors->push_back(std::move(entry));
    }
    return Status();
  }
  *tensors = opened.file->tensors();
  return Status();
}

Status LoadVariable(const std::string &path, const TensorRef &destination) {
  if (destination.on_device()) {
    // Decoded on the host into pinned memory (proven first, as for a host destination), then copied to
    // the device and waited for: the device view is written only once the bytes are proven.
    const std::vector<TensorRef> one = {destination};
    DeviceVariables staging(one);
    TW_RETURN_IF_ERROR(staging.Reserve());
    TW_RETURN_IF_ERROR(LoadVariable(path, staging.Staged(0)));
    return staging.Unstage({0});
  }
  OpenedCheckpoint opened;
  TW_RETURN_IF_ERROR(OpenCheckpoint(path, &opened));
  if (opened.sharded != nullptr) {  // the whole tensor, assembled from the parts holding its boxes
    const ShardedTensor *tensor = opened.sharded->Find(destination.name());
    if (tensor == nullptr) {
      return Status(TW_NOT_FOUND, "Key " + destination.name() + " not found in checkpoint " + path);
    }
    TensorEntry whole;
    whole.dtype = tensor->dtype;
    whole.shape = tensor->shape;
    TW_RETURN_IF_ERROR(CheckRestorable(whole, destination, path));
    // Straight into the destination: every part is proven before any byte is written (RangeReads), and
    // the write cannot fail after that, so no copy of the tensor aside.
    return opened.sharded->ReadBox(*tensor, std::vector<int64_t>(tensor->shape.size(), 0), tensor->shape,
                                   destination.data());
  }
  const TensorEntry *tensor = opened.file->Find(destination.name());
  if (tensor == nullptr) {
    return Status(TW_NOT_FOUND, "Key " + destination.name() + " not found in checkpoint " + path);
  }
  TW_RETURN_IF_ERROR(CheckRestorable(*tensor, destination, path));
  return opened.file->ReadInto({{tensor, destination.data()}});
}

Status VerifyCheckpoint(const std::string &path) {
  OpenedCheckpoint opened;
  TW_RETURN_IF_ERROR(OpenCheckpoint(path, &opened));
  return opened.sharded != nullptr ? opened.sharded->Verify() : opened.file->Verify();
}

}  // namespace checkpoint
}  // namespace tw
