#include "session/checkpoint_restorer.h"

#include <algorithm>

#include "base/log.h"
#include "checkpoint/io/path.h"
#include "checkpoint/own_checkpoints.h"
#include "checkpoint/saver.h"
#include "session/session.h"

namespace tw {
namespace {

class CheckpointRestorer final : public Restorer {
 public:
  explicit CheckpointRestorer(std::string dir) : dir_(std::move(dir)) {}

  Status Restore(Session &session, std::string *restored) override {
    checkpoint::Saver &saver = session.IdleSaver();
    // A chief that writes this directory (retention, the state file) keeps every other writer out from
    // here on (dir_lock.h); one that only restores takes no lock and writes nothing (C24).
    const bool writes = session.writes_checkpoints();
    if (writes) TW_RETURN_IF_ERROR(saver.LockDirectory(dir_));
    std::string path;
    std::vector<std::string> missing;
    const Status status = saver.RestoreNewestGood(dir_, &path, {"global_step"}, &missing);
    if (status.code() == TW_NOT_FOUND && path.empty()) {  // no checkpoint, rather than one that lacks a variable
      restored->clear();
      // Still clears temporary files a crash left behind.
      return writes ? saver.RecoverLastCheckpoints(dir_) : Status();
    }
    TW_RETURN_IF_ERROR(status);
    TakeStepFromName(session, path, missing);
    Log(TW_LOG_INFO, "Restored parameters from %s (global step %lld)", path.c_str(),
        static_cast<long long>(session.global_step()));
    if (writes) TW_RETURN_IF_ERROR(saver.RecoverLastCheckpoints(dir_));
    *restored = path;
    return Status();
  }

 private:
  std::string dir_;
};

}  // namespace

void TakeStepFromName(Session &session, const std::string &path, const std::vector<std::string> &missing) {
  if (std::find(missing.begin(), missing.end(), "global_step") == missing.end()) return;
  // A standalone Saver's checkpoint: its name carries the step ("<prefix>-<step>").
  int64_t step = 0;
  if (checkpoint::ParseCheckpointName(checkpoint::Basename(path), &step)) {
    session.set_global_step(step);
    Log(TW_LOG_INFO, "Checkpoint %s holds no global_step: global step %lld taken from its name", path.c_str(),
        static_cast<long long>(step));
  } else {
    Log(TW_LOG_WARNING, "Checkpoint %s holds no global_step and its name carries none: global step stays %lld",
        path.c_str(), static_cast<long long>(session.global_step()));
  }
}

std::unique_ptr<Restorer> NewCheckpointRestorer(std::string checkpoint_dir) {
  return std::make_unique<CheckpointRestorer>(std::move(checkpoint_dir));
}

}  // namespace tw
