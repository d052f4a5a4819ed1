#include "hooks/checkpoint_saver_hook.h"

#include <cstring>
#include <memory>

#include "base/log.h"
#include "base/saturating.h"
#include "base/versioned.h"
#include "checkpoint/async_saver.h"
#include "checkpoint/saver.h"
#include "device/transfer.h"
#include "hooks/every_n.h"
#include "hooks/extension_point.h"
#include "numerics/scan.h"
#include "session/session.h"
#include "summary/writer_cache.h"

// ---- tw_checkpoint_listener --------------------------------------------------------------------------

std::string tw_checkpoint_listener::Where(const char *what) const {
  return "checkpoint listener '" + name_ + "' " + what + ": ";
}

tw::Status tw_checkpoint_listener::Begin() {
  if (table_.begin == nullptr) return tw::Status();
  return tw::CallUserCallback(Where("begin"), [&] { return table_.begin(user_data_); });
}

tw::Status tw_checkpoint_listener::BeforeSave(tw::Session &session, int64_t step) {
  if (table_.before_save == nullptr) return tw::Status();
  return tw::CallUserCallback(Where("before_save"), [&] { return table_.before_save(user_data_, &session, step); });
}

tw::Status tw_checkpoint_listener::AfterSave(tw::Session &session, int64_t step, bool *request_stop) {
  if (table_.after_save == nullptr) return tw::Status();
  int stop = 0;
  TW_RETURN_IF_ERROR(
      tw::CallUserCallback(Where("after_save"), [&] { return table_.after_save(user_data_, &session, step, &stop); }));
  *request_stop = stop != 0;
  return tw::Status();
}

tw::Status tw_checkpoint_listener::End(tw::Session &session, int64_t step) {
  if (table_.end == nullptr) return tw::Status();
  return tw::CallUserCallback(Where("end"), [&] { return table_.end(user_data_, &session, step); });
}

namespace tw {

Status NewCheckpointListener(const char *name, const tw_checkpoint_listener_callbacks *callbacks, void *user_data,
                             CheckpointListener **out) {
  if (name == nullptr || name[0] == '\0') return Status(TW_INVALID_ARGUMENT, "listener name is NULL or empty");
  tw_checkpoint_listener_callbacks table = TW_CHECKPOINT_LISTENER_CALLBACKS_INIT;
  TW_RETURN_IF_ERROR(ReadVersioned(callbacks, "callbacks", &table));
  *out = new CheckpointListener(name, table, user_data);
  return Status();
}

// ---- CheckpointSaverHook -------------------------------------------------------------------------------

namespace {

class CheckpointSaverHook final : public Hook {
 public:
  bool chief_only_in_a_job() const override { return true; }                                    // D14
  bool writes_a_part_in_a_sharded_job() const override { return true; }                         // D17
  const char *checkpoint_writer() const override { return "a CheckpointSaverHook"; }            // C24
  const std::string *checkpoint_directory() const override { return &config_.checkpoint_dir; }  // C27
  explicit CheckpointSaverHook(CheckpointSaverConfig config)
      : Hook("CheckpointSaverHook"),
        config_(std::move(config)),
        prefix_(config_.checkpoint_dir + "/" + config_.basename) {
    Log(TW_LOG_INFO, "Create CheckpointSaverHook.");
  }

  ~CheckpointSaverHook() override {
    for (CheckpointListener *listener : config_.listeners) listener->Unref();
  }

  // B20: the event file of checkpoint_dir, the kept list of that directory, then listeners' begin.
  // The session says whether its job is sharded (D17), not the options the hook was created with
  // (TF's CheckpointSaverHook takes no job): then every rank saves, synchronously, and only the chief
  // keeps the event file. The hook's writer works on the session's saver (one retention for the
  // directory) and is attached to the session, whose other users of the saver wait for its write.
  Status Begin(Session &session) override {
    every_rank_ = session.agreement().sharded_job();
    async_ = config_.async && !every_rank_;
    writer_ = std::make_unique<checkpoint::AsyncSaver>(session.saver());
    session.AttachWriter(writer_.get());
    events_.reset();
    if (config_.chief && (!every_rank_ || session.is_chief())) {
      TW_RETURN_IF_ERROR(summary::GetCachedEventWriter(config_.checkpoint_dir, &events_));
    }
    TW_RETURN_IF_ERROR(session.IdleSaver().RecoverLastCheckpoints(config_.checkpoint_dir));
    for (CheckpointListener *listener : config_.listeners) TW_RETURN_IF_ERROR(listener->Begin());
    return Status();
  }

  // B21: save at once, on first creation and after every recovery; listeners' stop requests ignored.
  Status AfterCreateSession(Session &session) override {
    TW_RETURN_IF_ERROR(RequireBegun());
    TW_RETURN_IF_ERROR(FinishPendingSave(session, nullptr));
    const int64_t step = session.global_step();
    TW_RETURN_IF_ERROR(MaybeOverriddenSave(session, step, nullptr));
    config_.timer->UpdateLastTriggeredStep(step);
    return Status();
  }

  // B22: the stale step says whether the timer may fire; the real step decides.
  Status AfterRun(RunContext &ctx) override {
    Session &session = *ctx.session;
    bool stop = false;
    TW_RETURN_IF_ERROR(RequireBegun());
    if (async_ && writer_->finished()) TW_RETURN_IF_ERROR(FinishPendingSave(session, &stop));
    if (every_rank_ && config_.timer->every_secs()) {
      // D17: clocks differ between ranks; the chief's says when, and the vote tells every rank.
      const int64_t step = session.global_step();
      if (session.agreement().TakeAgreedSave()) {
        config_.timer->UpdateLastTriggeredStep(step);
        TW_RETURN_IF_ERROR(MaybeOverriddenSave(session, step, &stop));
      } else if (session.is_chief() && config_.timer->ShouldTriggerForStep(step)) {
        session.agreement().NoteSaveDue();
      }
    } else if (config_.timer->ShouldTriggerForStep(NextStep(session.run_global_step()))) {
      const int64_t step = session.global_step();
      if (config_.timer->ShouldTriggerForStep(step)) {
        config_.timer->UpdateLastTriggeredStep(step);
        TW_RETURN_IF_ERROR(MaybeOverriddenSave(session, step, &stop));
      }
    }
    return stop ? ctx.RequestStop() : Status();
  }

  // B23: a final save if the step moved, waited for; then listeners' end.
  Status End(Session &session) override {
    TW_RETURN_IF_ERROR(RequireBegun());
    TW_RETURN_IF_ERROR(FinishPendingSave(session, nullptr));
    const int64_t step = session.global_step();
    if (step != last_saved_step_) {
      TW_RETURN_IF_ERROR(MaybeOverriddenSave(session, step, nullptr));
      TW_RETURN_IF_ERROR(FinishPendingSave(session, nullptr));
    }
    for (CheckpointListener *listener : config_.listeners) TW_RETURN_IF_ERROR(listener->End(session, step));
    return events_ != nullptr ? events_->Flush() : Status();
  }

  // A failed run: let a background write finish (never abandon a half-written file), drop its result.
  void OnError(Session &, const Status &) override {
    if (writer_ != nullptr && writer_->pending()) writer_->Take();
  }

  // TF's _save: the user's function when set, else the built-in. Its stop request counts where TF's
  // does (after_run: request_stop in this run); at creation and at end it is ignored, as in TF. The
  // step counts as saved for end's "did the step move" test whether or not the function saved.
  Status MaybeOverriddenSave(Session &session, int64_t step, bool *stop) {
    if (!save_fn_.overridden()) return Save(session, step, stop);
    last_saved_step_ = step;
    int wants_stop = 0;
    TW_RETURN_IF_ERROR(save_fn_.Call(*this, static_cast<Hook *>(this), &session, step, &wants_stop));
    if (wants_stop != 0 && stop != nullptr) *stop = true;
    return Status();
  }

  // B24: listeners' before_save → the save → (once written) SessionLog CHECKPOINT and after_save.
  // `stop` collects after_save stop requests; nullptr ignores them (saves at creation and at end).
  Status Save(Session &session, int64_t step, bool *stop) {
    TW_RETURN_IF_ERROR(FinishPendingSave(session, stop));  // one save in flight, announced in order
    Log(TW_LOG_INFO, "Calling checkpoint listeners before saving checkpoint %lld...", static_cast<long long>(step));
    for (CheckpointListener *listener : config_.listeners) TW_RETURN_IF_ERROR(listener->BeforeSave(session, step));
    std::string bad;
    const Status scanned = FirstNonFiniteVariable(session, &bad);
    int32_t bad_rank = bad.empty() ? -1 : 0;
    if (every_rank_) {  // D17: every rank's part or none, so every rank skips together
      // A rank whose device could not count takes part as one that found NaN (never as all finite),
      // then fails with the device's status.
      TW_RETURN_IF_ERROR(session.agreement().LowestRankWith(
          !bad.empty() || !scanned.ok(), "agreeing whether to save checkpoint " + std::to_string(step), &bad_rank));
    }
    if (!scanned.ok()) {
      return scanned.WithPrefix("checking the variables for NaN before saving checkpoint " + std::to_string(step) +
                                ": ");
    }
    if (!bad.empty()) {
      Log(TW_LOG_WARNING, "Not saving checkpoint for step %lld: variable '%s' holds NaN or Inf values.",
          static_cast<long long>(step), bad.c_str());
      return Status();
    }
    if (bad_rank >= 0) {
      Log(TW_LOG_WARNING, "Not saving checkpoint for step %lld: a variable of rank %d holds NaN or Inf values.",
          static_cast<long long>(step), bad_rank);
      return Status();
    }
    Log(TW_LOG_INFO, "Saving checkpoints for %lld into %s.", static_cast<long long>(step), prefix_.c_str());
    last_saved_step_ = step;
    // A synchronous save writes on the session's thread: a sharded one's vote calls the collective,
    // which only that thread may (trainwatch/distributed.h).
    session.IdleSaver();  // one write at a time on the saver, whoever's (another saver hook's) it is
    if (async_) {
      writer_->Start(prefix_, step);
    } else {
      writer_->Run(prefix_, step);
    }
    return WaitsForWrite() ? FinishPendingSave(session, stop) : Status();
  }

  // Listeners hear after_save in the run that saved (TF's B22: a stop request ends that run), unless
  // the user deferred them to keep the write in the background.
  // A wrapper may forward after_create_session, after_run and end without begin (a Python subclass
  // whose begin() does not call the built-in's): the hook then has no writer, and says so.
  Status RequireBegun() const {
    if (writer_ != nullptr) return Status();
    return Status(TW_FAILED_PRECONDITION,
                  "CheckpointSaverHook was not begun: a subclass overriding begin() must call the built-in "
                  "begin() (super().begin())");
  }

  bool WaitsForWrite() const { return !async_ || (!config_.listeners.empty() && !config_.deferred_listeners); }

  // Takes the result of the write in flight, if any: a failure fails this call; success is announced.
  Status FinishPendingSave(Session &session, bool *stop) {
    if (writer_ == nullptr || !writer_->pending()) return Status();
    const checkpoint::SaveResult result = writer_->Take();
    if (!result.status.ok()) {
      return result.status.WithPrefix("saving checkpoint " + std::to_string(result.global_step) + " failed: ");
    }
    if (events_ != nullptr) {
      TW_RETURN_IF_ERROR(events_->AddSessionLog(result.global_step, summary::SessionStatus::kCheckpoint, prefix_));
    }
    Log(TW_LOG_INFO, "Calling checkpoint listeners after saving checkpoint %lld...",
        static_cast<long long>(result.global_step));
    for (CheckpointListener *listener : config_.listeners) {
      bool wants_stop = false;
      TW_RETURN_IF_ERROR(listener->AfterSave(session, result.global_step, &wants_stop));
      if (wants_stop && stop != nullptr) {
        Log(TW_LOG_INFO, "A CheckpointSaverListener requested that training be stopped. listener: %s",
            listener->name().c_str());
        *stop = true;
      }
    }
    return Status();
  }

  ExtensionPoint<tw_checkpoint_save_fn> save_fn_{"save"};

 private:
  // V11: *bad is the first variable (in registration order) holding NaN or Inf, else empty. Host variables
  // are scanned here; every device variable is counted on its device in one multi-tensor call
  // (trainwatch/device.h), 40 bytes per tensor crossing to the host. A count that fails is an error,
  // never "all finite".
  static Status FirstNonFiniteVariable(const Session &session, std::string *bad) {
    const std::vector<TensorRef> &variables = session.variables();
    size_t first = variables.size();  // of the first variable found bad
    std::vector<tw_tensor> on_device;
    std::vector<size_t> device_index;
    for (size_t i = 0; i < variables.size(); ++i) {
      if (!IsFloatDtype(variables[i].dtype())) continue;
      tw_tensor view = TW_TENSOR_INIT;
      variables[i].FillView(&view);
      if (variables[i].on_device()) {
        on_device.push_back(view);
        device_index.push_back(i);
      } else if (first == variables.size() && numerics::HasNonFinite(view)) {
        first = i;
      }
    }
    if (!on_device.empty()) {
      std::vector<tw_device_scan> counts;
      TW_RETURN_IF_ERROR(device::CountNonfinite(on_device, &counts));
      for (size_t k = 0; k < counts.size() && device_index[k] < first; ++k) {
        if (counts[k].nan_count + counts[k].pos_inf_count + counts[k].neg_inf_count > 0) first = device_index[k];
      }
    }
    bad->assign(first < variables.size() ? variables[first].name() : std::string());
    return Status();
  }

  CheckpointSaverConfig config_;
  std::string prefix_;
  std::shared_ptr<summary::EventWriter> events_;
  int64_t last_saved_step_ = INT64_MIN;
  // Of the session being served (Begin).
  bool every_rank_ = false;
  bool async_ = true;
  // The hook's writes (in the background with TW_OPT_ASYNC_CHECKPOINT; a synchronous one too, for its
  // result and B48's list), over the session's saver and attached to it; made in Begin.
  std::unique_ptr<checkpoint::AsyncSaver> writer_;
};

}  // namespace

Status MakeCheckpointSaverConfig(const std::string &checkpoint_dir, const Options &options,
                                 CheckpointSaverConfig *config) {
  if (checkpoint_dir.empty()) return Status(TW_INVALID_ARGUMENT, "checkpoint_dir is NULL or empty");
  const EveryN every = EveryNFromOptions(options);
  if (!every.secs && !every.steps &&
      (options.IsSet(TW_OPT_CHECKPOINT_EVERY_N_SECS) || options.IsSet(TW_OPT_CHECKPOINT_EVERY_N_STEPS))) {
    // Every hook reads its period from TW_OPT_EVERY_N_*; the CHECKPOINT_ keys are MonitoredTrainingSession's.
    return Status(TW_INVALID_ARGUMENT,
                  "CheckpointSaverHook reads TW_OPT_EVERY_N_STEPS / TW_OPT_EVERY_N_SECS; "
                  "TW_OPT_CHECKPOINT_EVERY_N_* are MonitoredTrainingSession's save_checkpoint_steps / _secs");
  }
  TW_RETURN_IF_ERROR(SecondOrStepTimer::Create(every.secs, every.steps, &config->timer));
  config->checkpoint_dir = checkpoint_dir;
  if (const std::string *basename = options.String(TW_OPT_CHECKPOINT_BASENAME)) {
    if (basename->empty() || basename->find('/') != std::string::npos) {
      return Errorf(TW_INVALID_ARGUMENT, "TW_OPT_CHECKPOINT_BASENAME must be a non-empty file name, got '%s'",
                    basename->c_str());
    }
    config->basename = *basename;
  }
  config->async = options.Int64(TW_OPT_ASYNC_CHECKPOINT) != 0;
  config->deferred_listeners = options.Int64(TW_OPT_DEFERRED_CHECKPOINT_LISTENERS) != 0;
  return Status();
}

Status SetCheckpointSaveFn(Hook *hook, tw_checkpoint_save_fn fn, void *user_data, void (*destroy)(void *)) {
  CheckpointSaverHook *saver = nullptr;
  TW_RETURN_IF_ERROR(HookOfKind(hook, "CheckpointSaverHook", &saver));
  return saver->save_fn_.Set(*saver, fn, user_data, destroy);
}

Status CheckpointSaveDefault(Hook *hook, Session &session, int64_t step, bool *stop) {
  CheckpointSaverHook *saver = nullptr;
  TW_RETURN_IF_ERROR(HookOfKind(hook, "CheckpointSaverHook", &saver));
  TW_RETURN_IF_ERROR(saver->save_fn_.CheckInside(*saver, "tw_checkpoint_saver_hook_save"));
  if (hook->owner != &session) {
    return Errorf(TW_INVALID_ARGUMENT, "session is not the session hook '%s' belongs to", hook->name().c_str());
  }
  return saver->Save(session, step, stop);
}

Status NewCheckpointSaverHook(CheckpointSaverConfig config, Hook **out) {
  *out = new CheckpointSaverHook(std::move(config));
  return Status();
}

}  // namespace tw
