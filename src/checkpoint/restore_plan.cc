#include "checkpoint/restore_plan.h"

#include <algorithm>

namespace tw {
namespace checkpoint {
namespace {

std::string Describe(int32_t dtype, const std::vector<int64_t> &shape) {
  std::string text = std::string(DtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

uint64_t RowBytes(int32_t dtype, const std::vector<int64_t> &shape) {
  uint64_t bytes = DtypeSize(dtype);
  for (size_t d = 1; d < shape.size(); ++d) bytes *= static_cast<uint64_t>(shape[d]);
  return bytes;
}

}  // namespace

// A shard must match the stored tensor's dtype and global shape, and be whole along every dimension but
// the first (a slice of rows: one byte range of the tensor). *row_begin receives its first row.
Status RestorePlan::PlanShard(const TensorRef &variable, const ShardSpec &shard, int32_t dtype,
                              const std::vector<int64_t> &global_shape, uint64_t *row_begin) {
  if (dtype != variable.dtype() || global_shape != shard.global_shape) {
    return Status(TW_INVALID_ARGUMENT, "variable '" + variable.name() + "' is a shard of " +
                                           Describe(variable.dtype(), shard.global_shape) + " but checkpoint " + path_ +
                                           " holds " + Describe(dtype, global_shape));
  }
  for (size_t d = 1; d < global_shape.size(); ++d) {
    if (shard.offset[d] != 0 || variable.shape()[d] != global_shape[d]) {
      return Status(TW_UNIMPLEMENTED, "variable '" + variable.name() +
                                          "' is a shard split along a dimension other than the first; only "
                                          "first-dimension slices can be restored");
    }
  }
  *row_begin = static_cast<uint64_t>(shard.offset[0]);
  return Status();
}

Status RestorePlan::Open(const std::string &path, const std::vector<RestoreTarget> &targets,
                         const std::vector<std::string> &optional, std::vector<std::string> *missing, bool *intact,
                         std::unique_ptr<RestorePlan> *out) {
  *intact = false;
  std::unique_ptr<RestorePlan> plan(new RestorePlan());
  plan->path_ = path;
  TW_RETURN_IF_ERROR(ShardedReader::Open(path, &plan->sharded_));
  if (plan->sharded_ == nullptr) TW_RETURN_IF_ERROR(CheckpointReader::Open(path, &plan->file_));
  if (missing != nullptr) missing->clear();
  for (const RestoreTarget &target : targets) {
    const TensorRef &variable = *target.variable;
    const ShardedTensor *sharded = plan->sharded_ ? plan->sharded_->Find(variable.name()) : nullptr;
    const TensorEntry *entry = plan->file_ ? plan->file_->Find(variable.name()) : nullptr;
    if (sharded == nullptr && entry == nullptr) {
      if (missing != nullptr && std::find(optional.begin(), optional.end(), variable.name()) != optional.end()) {
        missing->push_back(variable.name());
        continue;
      }
      return Status(TW_NOT_FOUND, "Key " + variable.name() + " not found in checkpoint " + path);
    }
    const int32_t dtype = sharded ? sharded->dtype : entry->dtype;
    const std::vector<int64_t> &shape = sharded ? sharded->shape : entry->shape;
    // A readable checkpoint holding this variable: a mismatch is the caller's to fix.
    *intact = true;
    uint64_t row_begin = 0;
    if (target.shard != nullptr) {
      TW_RETURN_IF_ERROR(plan->PlanShard(variable, *target.shard, dtype, shape, &row_begin));
    } else {
      TensorEntry stored;
      stored.dtype = dtype;
      stored.shape = shape;
      TW_RETURN_IF_ERROR(CheckRestorable(stored, variable, path));
    }
    const uint64_t rows = variable.shape().empty() ? 1 : static_cast<uint64_t>(variable.shape()[0]);
    if (sharded != nullptr) {
      const Status planned = plan->sharded_->PlanRows(*sharded, static_cast<int64_t>(row_begin),
                                                      static_cast<int64_t>(rows), variable.data(), &plan->reads_);
      *intact = planned.code() == TW_UNIMPLEMENTED;  // split along another dimension: not a damage
      TW_RETURN_IF_ERROR(planned);
    } else {
      const uint64_t row_bytes = RowBytes(dtype, shape);
      plan->reads_.Add(plan->file_.get(), CheckpointReader::Range{entry, row_begin * row_bytes,
                                                                  (row_begin + rows) * row_bytes, variable.data()});
    }
    *intact = false;
  }
  *out = std::move(plan);
  return Status();
}

Status RestorePlan::Prove(int threads) const { return reads_.Prove(threads); }

Status RestorePlan::Fill(int threads) const { return reads_.Fill(threads); }

}  // namespace checkpoint
}  // namespace tw
