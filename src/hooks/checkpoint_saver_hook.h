// CheckpointSaverHook and CheckpointSaverListener (TF's B17–B24), saving through the session's saver,
// asynchronously by default.
#ifndef TRAINWATCH_HOOKS_CHECKPOINT_SAVER_HOOK_H
#define TRAINWATCH_HOOKS_CHECKPOINT_SAVER_HOOK_H

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "base/timer.h"
#include "session/hook.h"
#include "session/options.h"
#include "trainwatch/hooks.h"

// A listener from a C callback table, reference counted like hooks.
struct tw_checkpoint_listener {
  tw_checkpoint_listener(std::string name, const tw_checkpoint_listener_callbacks &table, void *user_data)
      : name_(std::move(name)), table_(table), user_data_(user_data) {}

  tw::Status Begin();
  tw::Status BeforeSave(tw::Session &session, int64_t step);
  tw::Status AfterSave(tw::Session &session, int64_t step, bool *request_stop);
  tw::Status End(tw::Session &session, int64_t step);
  const std::string &name() const { return name_; }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  ~tw_checkpoint_listener() {
    if (table_.destroy != nullptr) table_.destroy(user_data_);
  }
  std::string Where(const char *what) const;

  std::string name_;
  tw_checkpoint_listener_callbacks table_;
  void *user_data_;
  std::atomic<int> refs_{1};
};

namespace tw {

using CheckpointListener = ::tw_checkpoint_listener;

Status NewCheckpointListener(const char *name, const tw_checkpoint_listener_callbacks *callbacks, void *user_data,
                             CheckpointListener **out);

struct CheckpointSaverConfig {
  std::string checkpoint_dir;
  std::string basename = "model.ckpt";
  std::unique_ptr<SecondOrStepTimer> timer;
  // false on a sharded job's non-chief rank (it writes its part of each checkpoint): no event file of
  // its own in checkpoint_dir, which is the chief's.
  bool chief = true;
  // TW_OPT_ASYNC_CHECKPOINT; ignored in a sharded job (the session's, D17), whose saves are synchronous:
  // the commit's vote calls the collective, which only the session's thread may do
  // (trainwatch/distributed.h). Such a job's checkpoint needs every rank's part: the hook then runs on
  // every rank, not on the chief alone (D14's rule for replicated jobs).
  bool async = true;
  bool deferred_listeners = false;              // TW_OPT_DEFERRED_CHECKPOINT_LISTENERS
  std::vector<CheckpointListener *> listeners;  // one reference each, owned by the config
};

// Reads the hook's settings from `options` (TW_OPT_EVERY_N_SECS/_STEPS, TW_OPT_CHECKPOINT_BASENAME,
// TW_OPT_ASYNC_CHECKPOINT, TW_OPT_DEFERRED_CHECKPOINT_LISTENERS); the timer errors are TF's B1 texts.
Status MakeCheckpointSaverConfig(const std::string &checkpoint_dir, const Options &options,
                                 CheckpointSaverConfig *config);

Status NewCheckpointSaverHook(CheckpointSaverConfig config, Hook **out);

// TF's _save as an extension point (tw_checkpoint_saver_hook_set_save_fn / _save).
Status SetCheckpointSaveFn(Hook *hook, tw_checkpoint_save_fn fn, void *user_data, void (*destroy)(void *));
Status CheckpointSaveDefault(Hook *hook, Session &session, int64_t step, bool *stop);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_CHECKPOINT_SAVER_HOOK_H
