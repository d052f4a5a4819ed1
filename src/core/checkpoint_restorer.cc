#include "core/checkpoint_restorer.h"

#include "checkpoint/saver.h"
#include "core/log.h"
#include "core/session.h"

namespace tw {
namespace {

class CheckpointRestorer final : public Restorer {
 public:
  explicit CheckpointRestorer(std::string dir) : dir_(std::move(dir)) {}

  Status Restore(Session &session, bool *restored) override {
    checkpoint::Saver &saver = session.IdleSaver();
    checkpoint::CheckpointState state;
    bool found = false;
    TW_RETURN_IF_ERROR(checkpoint::ReadCheckpointState(dir_, saver.options().latest_filename, &state, &found));
    if (!found || state.model_checkpoint_path.empty()) {
      *restored = false;
      return saver.RecoverLastCheckpoints(dir_);  // still clears temporary files a crash left behind
    }
    std::string path;
    TW_RETURN_IF_ERROR(saver.RestoreNewestGood(dir_, &path));
    Log(TW_LOG_INFO, "Restored parameters from %s (global step %lld)", path.c_str(),
        static_cast<long long>(session.global_step()));
    TW_RETURN_IF_ERROR(saver.RecoverLastCheckpoints(dir_));
    *restored = true;
    return Status();
  }

 private:
  std::string dir_;
};

}  // namespace

std::unique_ptr<Restorer> NewCheckpointRestorer(std::string checkpoint_dir) {
  return std::make_unique<CheckpointRestorer>(std::move(checkpoint_dir));
}

}  // namespace tw
