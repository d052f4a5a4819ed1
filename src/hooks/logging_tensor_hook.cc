#include "hooks/logging_tensor_hook.h"

#include <algorithm>
#include <numeric>

#include "base/log.h"
#include "base/tensor_copy.h"
#include "base/timer.h"
#include "device/transfer.h"
#include "hooks/extension_point.h"
#include "hooks/tensor_text.h"
#include "session/run_context.h"
#include "session/session.h"

namespace tw {
namespace {

class LoggingTensorHook final : public Hook {
 public:
  bool chief_only_in_a_job() const override { return true; }  // D14
  LoggingTensorHook(LoggingTensorConfig config, std::unique_ptr<Timer> timer)
      : Hook("LoggingTensorHook"), config_(std::move(config)), timer_(std::move(timer)) {
    views_.resize(config_.names.size());
    host_copies_.resize(config_.names.size());
    for (const tw_tensor &view : views_) view_pointers_.push_back(&view);
    if (config_.at_end) last_values_.resize(config_.names.size());
  }

  // B8: counting restarts with every session.
  Status Begin(Session &) override {
    timer_->Reset();
    iter_count_ = 0;
    have_last_values_ = false;
    return Status();
  }

  // B8: tensors are fetched on triggering runs only — and, for at_end, on every run, since trainwatch
  // has no graph to evaluate them again in end().
  Status BeforeRun(RunContext &ctx) override {
    should_trigger_ = timer_->ShouldTriggerForStep(iter_count_);
    if (!should_trigger_ && !config_.at_end) return Status();
    for (const std::string &name : config_.names) TW_RETURN_IF_ERROR(ctx.RequestFetch(name.c_str()));
    return Status();
  }

  Status AfterRun(RunContext &ctx) override {
    if (should_trigger_ || config_.at_end) {
      for (size_t i = 0; i < views_.size(); ++i) {
        tw_tensor &view = views_[i];
        view = TW_TENSOR_INIT;
        TW_RETURN_IF_ERROR(ctx.GetResult(config_.names[i].c_str(), &view));
        if (IsOnDevice(view)) {  // V4: logged from a host copy
          TW_RETURN_IF_ERROR(device::HostCopy::Make(view, &host_copies_[i]));
          view = host_copies_[i].view();
        }
        if (config_.at_end) last_values_[i].Assign(view, config_.names[i].c_str());
      }
      have_last_values_ = config_.at_end;
      if (should_trigger_) TW_RETURN_IF_ERROR(LogValues());
    }
    ++iter_count_;
    return Status();
  }

  // B10: the last fetched values (TF evaluates the tensors once more; a step function cannot be re-run
  // here). Nothing is logged when no run fetched them.
  Status End(Session &) override {
    if (!config_.at_end || !have_last_values_) return Status();
    for (size_t i = 0; i < views_.size(); ++i) {
      views_[i] = TW_TENSOR_INIT;
      last_values_[i].FillView(&views_[i]);
    }
    return LogValues();
  }

  // TF's _log_tensors: the user's function when set (it gets the hook, to call the built-in), else the
  // built-in. Values are named by their tags, in print order.
  Status LogValues() {
    for (size_t i = 0; i < views_.size(); ++i) views_[i].name = config_.tags[i].c_str();
    if (log_fn_.overridden()) {
      return log_fn_.Call(*this, static_cast<Hook *>(this), view_pointers_.data(), view_pointers_.size());
    }
    return LogTensors(view_pointers_.data(), view_pointers_.size());
  }

  // B9: "tag = value, …" then " (x.xxx sec)" since the previous line (not on the first), or exactly the
  // formatter's text (TF appends nothing to it: users parse their own lines). Like TF's, it also moves the timer: a
  // replacement that never calls it leaves the timer untouched, so the hook triggers on every run.
  Status LogTensors(const tw_tensor *const *values, size_t n_values) {
    const std::optional<TimerElapsed> elapsed = timer_->UpdateLastTriggeredStep(iter_count_);
    if (!LogEnabled(TW_LOG_INFO)) return Status();
    std::string line;
    if (config_.formatter != nullptr) {
      TW_RETURN_IF_ERROR(CallFormatter(values, n_values, &line));
      Log(TW_LOG_INFO, "%s", line.c_str());
      return Status();
    }
    for (size_t i = 0; i < n_values; ++i) {
      if (i > 0) line += ", ";
      line += values[i]->name;
      line += " = ";
      AppendTensorText(*values[i], config_.max_elements, &line);
    }
    if (elapsed) line += Format(" (%.3f sec)", elapsed->secs);
    Log(TW_LOG_INFO, "%s", line.c_str());
    return Status();
  }

  ExtensionPoint<tw_log_tensors_fn> log_fn_{"log_tensors"};

 private:
  // The formatter sees the values named by their tags, in print order. It writes snprintf-style: when
  // the text does not fit it reports the length needed and is called once more with room for it.
  Status CallFormatter(const tw_tensor *const *values, size_t n_values, std::string *line) {
    const UserCallback<tw_log_formatter_fn> &formatter = *config_.formatter;
    std::vector<char> buffer(256);
    for (int attempt = 0; attempt < 2; ++attempt) {
      size_t length = 0;
      TW_RETURN_IF_ERROR(CallUserCallback("LoggingTensorHook formatter: ", [&] {
        return formatter.fn(formatter.user_data, values, n_values, buffer.data(), buffer.size(), &length);
      }));
      if (length < buffer.size()) {
        line->assign(buffer.data(), length);
        return Status();
      }
      buffer.resize(length + 1);
    }
    return Status(TW_INVALID_ARGUMENT, "LoggingTensorHook formatter: reported a longer text on the second call");
  }

  static std::string Format(const char *format, double value) {
    char text[64];
    std::snprintf(text, sizeof(text), format, value);
    return text;
  }

  LoggingTensorConfig config_;  // names and tags in print order
  std::unique_ptr<Timer> timer_;
  int64_t iter_count_ = 0;
  bool should_trigger_ = false;
  std::vector<tw_tensor> views_;                  // this run's values, in print order
  std::vector<const tw_tensor *> view_pointers_;  // to views_: what the formatter and log function get
  std::vector<TensorCopy> last_values_;           // at_end: the last run's values
  std::vector<device::HostCopy> host_copies_;     // of this run's device values (buffers reused)
  bool have_last_values_ = false;
};

}  // namespace

Status SetLogTensorsFn(Hook *hook, tw_log_tensors_fn fn, void *user_data, void (*destroy)(void *)) {
  LoggingTensorHook *logging = nullptr;
  TW_RETURN_IF_ERROR(HookOfKind(hook, "LoggingTensorHook", &logging));
  return logging->log_fn_.Set(*logging, fn, user_data, destroy);
}

Status LogTensorsDefault(Hook *hook, const tw_tensor *const *values, size_t n_values) {
  LoggingTensorHook *logging = nullptr;
  TW_RETURN_IF_ERROR(HookOfKind(hook, "LoggingTensorHook", &logging));
  TW_RETURN_IF_ERROR(logging->log_fn_.CheckInside(*logging, "tw_logging_tensor_hook_log_tensors"));
  if (n_values > 0 && values == nullptr)
    return Errorf(TW_INVALID_ARGUMENT, "values is NULL but n_values is %zu", n_values);
  std::vector<tw_tensor> views(n_values);
  std::vector<const tw_tensor *> pointers(n_values);
  std::vector<device::HostCopy> copies(n_values);
  for (size_t i = 0; i < n_values; ++i) {
    const std::string where = "values[" + std::to_string(i) + "]";
    TW_RETURN_IF_ERROR(ReadTensor(values[i], where, &views[i], Place::kHostOrDevice));
    if (views[i].name == nullptr) return Errorf(TW_INVALID_ARGUMENT, "%s has no name (its tag)", where.c_str());
    if (IsOnDevice(views[i])) {  // V4
      TW_RETURN_IF_ERROR(device::HostCopy::Make(views[i], &copies[i]));
      views[i] = copies[i].view();
    }
    pointers[i] = &views[i];
  }
  return logging->LogTensors(pointers.data(), n_values);
}

Status NewLoggingTensorHook(LoggingTensorConfig config, Hook **out) {
  // B6, with TF's texts.
  const bool only_at_end = config.at_end && !config.every.steps && !config.every.secs;
  if (!only_at_end && config.every.steps.has_value() == config.every.secs.has_value()) {
    return Status(TW_INVALID_ARGUMENT,
                  "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.");
  }
  if (config.every.steps && *config.every.steps <= 0) {
    return Errorf(TW_INVALID_ARGUMENT, "invalid every_n_iter=%lld.", static_cast<long long>(*config.every.steps));
  }
  if (config.names.empty()) return Status(TW_INVALID_ARGUMENT, "LoggingTensorHook: no tensors to log");
  for (const std::string &name : config.names) {
    if (name.empty()) return Status(TW_INVALID_ARGUMENT, "LoggingTensorHook: a tensor name is empty");
    if (IsPattern(name.c_str())) {
      return Errorf(TW_INVALID_ARGUMENT, "LoggingTensorHook logs named values; '%s' is a pattern", name.c_str());
    }
  }
  if (config.tags.empty()) {
    config.tags = config.names;  // B7: a list is printed in the given order, names as tags
  } else {
    if (config.tags.size() != config.names.size()) return Status(TW_INVALID_ARGUMENT, "one tag per name is needed");
    // B7: a dict is printed sorted by tag.
    std::vector<size_t> order(config.names.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return config.tags[a] < config.tags[b]; });
    std::vector<std::string> names, tags;
    for (size_t i : order) {
      if (config.tags[i].empty()) return Status(TW_INVALID_ARGUMENT, "LoggingTensorHook: a tag is empty");
      if (!tags.empty() && tags.back() == config.tags[i]) {
        return Errorf(TW_INVALID_ARGUMENT, "LoggingTensorHook: tag '%s' is given twice", config.tags[i].c_str());
      }
      names.push_back(config.names[i]);
      tags.push_back(config.tags[i]);
    }
    config.names = std::move(names);
    config.tags = std::move(tags);
  }
  std::unique_ptr<Timer> timer;
  if (only_at_end) {
    timer.reset(new NeverTriggerTimer);
  } else {
    std::unique_ptr<SecondOrStepTimer> periodic;
    TW_RETURN_IF_ERROR(SecondOrStepTimer::Create(config.every.secs, config.every.steps, &periodic));
    timer = std::move(periodic);
  }
  *out = new LoggingTensorHook(std::move(config), std::move(timer));
  return Status();
}

}  // namespace tw
