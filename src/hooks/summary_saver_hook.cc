#include "hooks/summary_saver_hook.h"

#include "base/saturating.h"
#include "base/timer.h"
#include "hooks/event_writer_hook.h"
#include "session/run_context.h"
#include "session/session.h"
#include "summary/histogram.h"
#include "summary/tensor_values.h"

namespace tw {
namespace {

class SummarySaverHook final : public EventWriterHook {
 public:
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
  // Every fetched value, as one Summary event (a merged summary op's output).
  Status WriteSummaries(const RunContext &ctx, int64_t step) {
    std::vector<summary::SummaryValue> values;
    for (size_t i = 0; i < ctx.ResultCount(); ++i) {
      tw_tensor view = TW_TENSOR_INIT;
      TW_RETURN_IF_ERROR(ctx.ResultAt(i, &view));
      summary::SummaryValue value;
      value.tag = view.name;
      if (ElementCount(view) == 1) {
        value.kind = summary::SummaryValue::Kind::kSimpleValue;
        value.simple_value = static_cast<float>(summary::ElementAsDouble(view.dtype, view.data));
      } else if (config_.histograms) {
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
  if (config.summarize.empty()) config.summarize.emplace_back("*");
  *out = new SummarySaverHook(std::move(config), std::move(timer));
  return Status();
}

}  // namespace tw
