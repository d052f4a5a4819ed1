#include "checkpoint/restore_plan.h"

#include <algorithm>

#include "checkpoint/open_checkpoint.h"

namespace tw {
namespace checkpoint {
// A shard must match the stored tensor's dtype and global shape.
Status RestorePlan::PlanShard(const TensorRef &variable, const ShardSpec &shard, int32_t dtype,
                              const std::vector<int64_t> &global_shape) {
  if (dtype != variable.dtype() || global_shape != shard.global_shape) {
    return Status(TW_INVALID_ARGUMENT, "variable '" + variable.name() + "' is a shard of " +
                                           Describe(variable.dtype(), shard.global_shape) + " but checkpoint " + path_ +
                                           " holds " + Describe(dtype, global_shape));
  }
  return Status();
}

Status RestorePlan::Open(const std::string &path, const std::vector<RestoreTarget> &targets,
                         const std::vector<std::string> &optional, std::vector<std::string> *missing, bool *misfit,
                         std::unique_ptr<RestorePlan> *out) {
  *misfit = false;
  std::unique_ptr<RestorePlan> plan(new RestorePlan());
  plan->path_ = path;
  plan->progress_.reset(new Progress(TW_PROGRESS_RESTORE, path));
  OpenedCheckpoint opened;
  TW_RETURN_IF_ERROR(OpenCheckpoint(path, &opened));
  plan->sharded_ = std::move(opened.sharded);
  plan->file_ = std::move(opened.file);
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
      *misfit = true;  // a readable checkpoint without this variable: the caller's to fix, as TF's
      return Status(TW_NOT_FOUND, "Key " + variable.name() + " not found in checkpoint " + path);
    }
    const int32_t dtype = sharded ? sharded->dtype : entry->dtype;
    const std::vector<int64_t> &shape = sharded ? sharded->shape : entry->shape;
    // A readable checkpoint holding this variable: a mismatch is the caller's to fix.
    *misfit = true;
    std::vector<int64_t> offset(shape.size(), 0);  // of the variable's box in the stored tensor
    if (target.shard != nullptr) {
      TW_RETURN_IF_ERROR(plan->PlanShard(variable, *target.shard, dtype, shape));
      offset = target.shard->offset;
    } else {
      TensorEntry stored;
      stored.dtype = dtype;
      stored.shape = shape;
      TW_RETURN_IF_ERROR(CheckRestorable(stored, variable, path));
    }
    *misfit = false;  // from here on: a part missing or damaged
    if (sharded != nullptr) {
      TW_RETURN_IF_ERROR(plan->sharded_->PlanBox(*sharded, offset, variable.shape(), variable.data(), &plan->reads_));
    } else {
      plan->reads_.AddBox(plan->file_.get(), entry, std::vector<int64_t>(shape.size(), 0), offset, variable.shape(),
                          variable.data());
    }
  }
  *out = std::move(plan);
  return Status();
}

Status RestorePlan::Prove(int threads) const { return reads_.Prove(threads, progress_.get()); }

Status RestorePlan::Fill() const {
  TW_RETURN_IF_ERROR(reads_.Fill());
  progress_->Finish();
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
