#include "hooks/nan_tensor_hook.h"

#include "base/log.h"
#include "checkpoint/saver.h"
#include "numerics/scan.h"
#include "session/session.h"

namespace tw {
namespace {

class NanTensorHook final : public Hook {
 public:
  explicit NanTensorHook(NanGuardConfig config) : Hook("NanTensorHook"), config_(std::move(config)) {}

  // C24: a rollback takes the checkpoints of the run that diverged off the state file (B48).
  const char *checkpoint_writer() const override {
    return config_.action == TW_NAN_ACTION_ROLLBACK ? "a NanTensorHook that rolls back on NaN" : nullptr;
  }

  // B31: fetch on every run (or every N-th step, which TF lacked).
  Status BeforeRun(RunContext &ctx) override {
    checking_ = ctx.session->run_global_step() % config_.every_n_steps == 0;
    if (!checking_) return Status();
    for (const std::string &name : config_.watch) TW_RETURN_IF_ERROR(ctx.RequestFetch(name.c_str()));
    return Status();
  }

  Status AfterRun(RunContext &ctx) override {
    if (!checking_) return Status();
    const int64_t step = ctx.session->run_global_step();
    // One pass reads the results and scans the host values; device values wait for one count of all.
    values_.clear();
    scans_.clear();
    device_views_.clear();
    for (size_t i = 0; i < ctx.ResultCount(); ++i) {
      tw_tensor value = TW_TENSOR_INIT;
      TW_RETURN_IF_ERROR(ctx.ResultAt(i, &value));
      values_.push_back(value);
      if (IsOnDevice(value)) device_views_.push_back(value);
      scans_.push_back(IsOnDevice(value) ? numerics::ScanResult() : numerics::Scan(value));
    }
    TW_RETURN_IF_ERROR(CountDeviceValues());
    for (size_t i = 0; i < values_.size(); ++i) {
      const numerics::ScanResult &scan = scans_[i];
      const bool bad = scan.nan_count > 0 || (config_.detect_inf && scan.inf_count() > 0);
      if (bad) TW_RETURN_IF_ERROR(Act(ctx, values_[i].name, step, scan));
    }
    return Status();
  }

 private:
  Status Act(RunContext &ctx, const char *name, int64_t step, const numerics::ScanResult &scan) {
    const int64_t pos_inf = config_.detect_inf ? scan.pos_inf_count : 0;
    const int64_t neg_inf = config_.detect_inf ? scan.neg_inf_count : 0;
    const int64_t first = config_.detect_inf ? scan.first_nonfinite_index : FirstNanIndex(scan);
    const std::string where = FormatWhere(name, step, scan.nan_count, pos_inf, neg_inf, first);
    switch (config_.action) {
      case TW_NAN_ACTION_FAIL:  // B33
        return Fail(where, "");
      case TW_NAN_ACTION_ROLLBACK: return RollBack(*ctx.session, where);
      case TW_NAN_ACTION_MAX_ENUM_: break;  // not an action; the option table rejects it
      case TW_NAN_ACTION_STOP:              // B34
        Log(TW_LOG_WARNING, "Model diverged with loss = NaN. %s", where.c_str());
        return ctx.RequestStop();
      case TW_NAN_ACTION_CALLBACK: {
        const tw_nan_event event = {sizeof(tw_nan_event), name, step, scan.nan_count, pos_inf, neg_inf, first};
        const UserCallback<tw_nan_fn> &callback = *config_.callback;
        return CallUserCallback([&] { return "NanTensorHook callback for " + where + ": "; },
                                [&] { return callback.fn(callback.user_data, ctx.session, &event); });
      }
    }
    return Status(TW_INTERNAL, "unknown NaN action");
  }

  // V3: every watched device value of this run in one multi-tensor count (one count_nonfinite call
  // per device), 40 bytes per tensor crossing to the host; a run without device values calls nothing.
  Status CountDeviceValues() {
    if (device_views_.empty()) return Status();
    TW_RETURN_IF_ERROR(numerics::ScanAll(device_views_, &device_scans_));
    for (size_t i = 0, on_device = 0; i < values_.size(); ++i) {
      if (IsOnDevice(values_[i])) scans_[i] = device_scans_[on_device++];
    }
    return Status();
  }

  static Status Fail(const std::string &where, const std::string &why_not_rolled_back) {
    Log(TW_LOG_ERROR, "Model diverged with loss = NaN. %s%s", where.c_str(), why_not_rolled_back.c_str());
    return Status(TW_NAN_LOSS, "NaN loss during training. " + where + why_not_rolled_back);
  }

  // Restores the newest good checkpoint into the variables (global_step included) and lets training
  // go on from there; bounded, so a divergence that keeps coming back still fails.
  Status RollBack(Session &session, const std::string &where) {
    if (rollbacks_ >= config_.max_rollbacks) {
      return Fail(where,
                  "; not rolled back: " + std::to_string(rollbacks_) + " rollbacks already (TW_OPT_NAN_MAX_ROLLBACKS)");
    }
    if (session.agreement().collective() != nullptr) {  // D7: every rank rolls back together, to the chief's choice
      ++rollbacks_;
      session.agreement().RequestRollback(where);
      return Status();
    }
    // B48: what this run saved holds the state after the NaN: never the target.
    const Status discarded = session.DiscardDivergedCheckpoints();
    if (!discarded.ok()) return Fail(where, "; not rolled back: " + discarded.message());
    if (session.checkpoint_dir().empty()) return Fail(where, "; not rolled back: TW_OPT_CHECKPOINT_DIR is not set");
    std::string path;
    const Status restored = session.IdleSaver().RestoreNewestGood(session.checkpoint_dir(), &path);
    if (!restored.ok()) return Fail(where, "; not rolled back: " + restored.message());
    ++rollbacks_;
    Log(TW_LOG_WARNING,
        "Model diverged with loss = NaN. %s; rolled back to %s (global step %lld), rollback %lld of %lld",
        where.c_str(), path.c_str(), static_cast<long long>(session.global_step()), static_cast<long long>(rollbacks_),
        static_cast<long long>(config_.max_rollbacks));
    return Status();
  }

  // Without Inf detection the first non-finite element may be an Inf; the NaN's own index is then
  // not known without a second scan, which only a failing run pays for.
  static int64_t FirstNanIndex(const numerics::ScanResult &scan) {
    return scan.inf_count() == 0 ? scan.first_nonfinite_index : -1;
  }

  static std::string FormatWhere(const char *name, int64_t step, int64_t nans, int64_t pos_inf, int64_t neg_inf,
                                 int64_t first) {
    std::string text = "(tensor '" + std::string(name) + "', step " + std::to_string(step) + ": " +
                       std::to_string(nans) + " NaN, " + std::to_string(pos_inf) + " +Inf, " + std::to_string(neg_inf) +
                       " -Inf";
    if (first >= 0) text += ", first at index " + std::to_string(first);
    return text + ")";
  }

  NanGuardConfig config_;
  std::vector<tw_tensor> values_;  // this run's watched values (reused)
  std::vector<numerics::ScanResult> scans_;
  std::vector<tw_tensor> device_views_;  // this run's watched device values (reused)
  std::vector<numerics::ScanResult> device_scans_;
  bool checking_ = false;
  int64_t rollbacks_ = 0;
};

}  // namespace

Status NewNanTensorHook(NanGuardConfig config, Hook **out) {
  if (config.watch.empty()) return Status(TW_INVALID_ARGUMENT, "NanTensorHook watches nothing: watch is empty");
  for (const std::string &name : config.watch) {
    if (name.empty()) return Status(TW_INVALID_ARGUMENT, "NanTensorHook: a watched name is empty");
  }
  if (config.action == TW_NAN_ACTION_CALLBACK && (config.callback == nullptr || config.callback->fn == nullptr)) {
    return Status(TW_INVALID_ARGUMENT, "TW_NAN_ACTION_CALLBACK needs a tw_nan_fn");
  }
  *out = new NanTensorHook(std::move(config));
  return Status();
}

}  // namespace tw
