#include "hooks/summary_saver_hook.h"

#include <unordered_set>

#include "base/saturating.h"
#include "base/timer.h"
#include "device/transfer.h"
#include "hooks/event_writer_hook.h"
#include "numerics/tensor_values.h"
#include "session/run_context.h"
#include "session/session.h"
#include "summary/histogram.h"

namespace tw {
namespace {

class SummarySaverHook final : public EventWriterHook {
 public:
  bool chief_only_in_a_job() const override { return true; }  // D14
  SummarySaverHook(SummarySaverConfig config, std::unique_ptr<SecondOrStepTimer> timer)
      : EventWriterHook("SummarySaverHook", config.writer, config.output_dir),
        config_(std::move(config)),
        timer_(std::move(timer)) {}

  // B37 (NewSummarySaverHook made sure there is a writer or an output_dir).
  Status Begin(Session &) override {
    timer_->Reset();
    next_step_.reset();
    return OpenWriter();
  }

  // B38: summaries on the first run and whenever the timer accepts the step this run will end at. The
  // global step TF fetched every run is the session's run_global_step() here.
  Status BeforeRun(RunContext &ctx) override {
    request_summary_ = !next_step_ || timer_->ShouldTriggerForStep(*next_step_);
    if (!request_summary_) return Status();
    for (const std::string &name : config_.summarize) TW_RETURN_IF_ERROR(ctx.RequestFetch(name.c_str()));
    if (config_.histograms) {  // else they are among `summarize`
      for (const std::string &name : histograms_) TW_RETURN_IF_ERROR(ctx.RequestFetch(name.c_str()));
    }
    return Status();
  }

  // B39 (NEW): the step is stale + 1, re-read from the session on the first run and on summary runs.
  Status AfterRun(RunContext &ctx) override {
    int64_t step = NextStep(ctx.session->run_global_step());
    if (!next_step_ || request_summary_) step = ctx.session->global_step();
    if (!next_step_) TW_RETURN_IF_ERROR(writer_->AddSessionLog(step, summary::SessionStatus::kStart));
    if (request_summary_) {
      timer_->UpdateLastTriggeredStep(step);
      TW_RETURN_IF_ERROR(WriteSummaries(ctx, step));
    }
    next_step_ = NextStep(step);
    return Status();
  }

  // End: B40, flush, no final summary (EventWriterHook).

 private:
  // B49: a value of more than one element was asked for as a histogram.
  bool WantsHistogram(const char *name) const {
    for (const std::string &pattern : histograms_) {
      if (pattern == name || (IsPattern(pattern.c_str()) && MatchesPattern(pattern, name))) return true;
    }
    return false;
  }

  // Every fetched value, once, as one Summary event (a merged summary op's output).
  Status WriteSummaries(const RunContext &ctx, int64_t step) {
    std::vector<summary::SummaryValue> values;
    std::unordered_set<std::string> tags;  // a value both lists request comes back twice
    for (size_t i = 0; i < ctx.ResultCount(); ++i) {
      tw_tensor view = TW_TENSOR_INIT;
      TW_RETURN_IF_ERROR(ctx.ResultAt(i, &view));
      if (!tags.insert(view.name).second) continue;
      summary::SummaryValue value;
      value.tag = view.name;
      const bool scalar = ElementCount(view) == 1;
      device::HostCopy host;  // V4: a device value is summarised from a host copy, made only when used
      if (IsOnDevice(view) && (scalar || WantsHistogram(view.name))) {
        TW_RETURN_IF_ERROR(device::HostCopy::Make(view, &host));
        view = host.view();
      }
      if (scalar) {
        value.kind = summary::SummaryValue::Kind::kSimpleValue;
        value.simple_value = static_cast<float>(numerics::ElementAsDouble(view.dtype, view.data));
      } else if (WantsHistogram(view.name)) {
        value.kind = summary::SummaryValue::Kind::kHistogram;
        TW_RETURN_IF_ERROR(summary::HistogramOfTensor(view, value.tag, &value.histogram));
      } else {
        continue;
      }
      values.push_back(std::move(value));
    }
    if (values.empty()) return Status();
    return writer_->AddSummary(step, std::move(values));
  }

  SummarySaverConfig config_;
  // B49: the names and patterns whose larger values become histograms.
  const std::vector<std::string> histograms_ =
      config_.histograms
          ? *config_.histograms
          : (config_.summarize == std::vector<std::string>{"*"} ? std::vector<std::string>{} : config_.summarize);
  std::unique_ptr<SecondOrStepTimer> timer_;
  std::optional<int64_t> next_step_;  // unknown until the first run
  bool request_summary_ = false;
};

}  // namespace

Status NewSummarySaverHook(SummarySaverConfig config, Hook **out) {
  std::unique_ptr<SecondOrStepTimer> timer;
  TW_RETURN_IF_ERROR(SecondOrStepTimer::Create(config.every.secs, config.every.steps, &timer));
  if (config.writer == nullptr && config.output_dir.empty()) {
    return Status(TW_INVALID_ARGUMENT, "At least one of output_dir or summary_writer must be provided.");
  }
  for (const std::string &name : config.summarize) {
    if (name.empty()) return Status(TW_INVALID_ARGUMENT, "SummarySaverHook: a name to summarise is empty");
  }
  if (config.histograms) {
    for (const std::string &name : *config.histograms) {
      if (name.empty()) return Status(TW_INVALID_ARGUMENT, "SummarySaverHook: a histogram name is empty");
    }
  }
  if (config.summarize.empty()) config.summarize.emplace_back("*");
  *out = new SummarySaverHook(std::move(config), std::move(timer));
  return Status();
}

Status SplitNameList(const std::string &list, const char *what, std::vector<std::string> *out) {
  std::vector<std::string> names;
  size_t begin = 0;
  for (;;) {
    const size_t comma = list.find(',', begin);
    const size_t end = comma == std::string::npos ? list.size() : comma;
    if (end == begin) return Errorf(TW_INVALID_ARGUMENT, "%s \"%s\": an entry is empty", what, list.c_str());
    names.push_back(list.substr(begin, end - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  *out = std::move(names);
  return Status();
}

}  // namespace tw
