#include "checkpoint/restore_failure.h"

namespace tw {
namespace checkpoint {

RestoreFailure ClassifyRestoreFailure(const Status &status, bool misfit) {
  if (status.ok()) return RestoreFailure::kNone;
  if (misfit) return RestoreFailure::kMisfit;
  switch (status.code()) {
    case TW_DATA_LOSS: return RestoreFailure::kDamaged;
    // Before the file is read, these two come only from opening the path itself (PrivateFile::Open):
    // a part of a sharded checkpoint that is missing or not a regular file is reported as TW_DATA_LOSS.
    case TW_NOT_FOUND:
    case TW_INVALID_ARGUMENT: return RestoreFailure::kAbsent;
    default: return RestoreFailure::kUnproven;
  }
}

Status UnprovenFailure(const std::string &path, const Status &status) {
  return status.WithPrefix("cannot restore checkpoint " + path +
                           " (not a sign of damage: nothing was skipped, deleted or written): ");
}

}  // namespace checkpoint
}  // namespace tw
