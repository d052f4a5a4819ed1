#include "hooks/profiler_hook.h"

#include <unistd.h>

#include <vector>

#include "base/file_io.h"
#include "base/log.h"
#include "base/saturating.h"
#include "base/timer.h"
#include "session/run_context.h"
#include "session/run_tracer.h"
#include "session/session.h"
#include "trace/trace_writer.h"

namespace tw {
namespace {

const char *PhaseName(TracePhase phase) {
  switch (phase) {
    case TracePhase::kBeforeRun: return "before_run";
    case TracePhase::kStep: return "step";
    case TracePhase::kAfterRun: return "after_run";
  }
  return "?";
}

class ProfilerHook final : public Hook, public RunTracer {
 public:
  bool chief_only_in_a_job() const override { return true; }  // D14
  ProfilerHook(ProfilerConfig config, std::unique_ptr<SecondOrStepTimer> timer)
      : Hook("ProfilerHook"), config_(std::move(config)), timer_(std::move(timer)) {
    if (config_.output_dir.empty()) config_.output_dir = ".";
  }

  // B46.
  Status Begin(Session &session) override {
    session_ = &session;
    timer_->Reset();
    next_step_.reset();
    traced_step_.reset();
    armed_ = false;
    return MakeDirectories(config_.output_dir);
  }

  // B47 (NEW): the first run primes the timer and is not traced. A run is traced when the timer accepts
  // the step it will end at; that is decided here, at the end of the run before it, so that the
  // session times every hook of the traced run from its first before_run.
  Status AfterRun(RunContext &ctx) override {
    const int64_t stale = ctx.session->run_global_step();  // TF's stale read: the step the run started at
    if (!next_step_) timer_->UpdateLastTriggeredStep(stale);
    int64_t step = NextStep(stale);
    if (armed_) {  // this run is the traced one
      step = ctx.session->global_step();
      timer_->UpdateLastTriggeredStep(step);
      traced_step_ = step;
    }
    next_step_ = NextStep(step);
    armed_ = timer_->ShouldTriggerForStep(*next_step_);
    if (armed_) ctx.session->ArmTracer(this);
    return Status();
  }

  Status End(Session &session) override {
    Disarm(session);
    return Status();
  }
  void OnError(Session &session, const Status &) override { Disarm(session); }

  // RunTracer: collect the callbacks of the traced run; after its last after_run, write the file.
  void Record(TracePhase phase, const Hook *hook, double start, double end) override {
    calls_.push_back({phase, hook != nullptr ? hook->name() + "." + PhaseName(phase) : "step", start, end});
  }

  Status Finish(const Status &run_status, double start, double end) override {
    const std::vector<Call> calls = std::move(calls_);
    calls_.clear();
    const std::optional<int64_t> step = traced_step_;
    traced_step_.reset();
    if (!step) {
      // The run failed before this hook's after_run: nothing is armed for the next one. A run that went
      // on without it — a binding's subclass running TF's decision in its own language calls the
      // built-in after_run only in the runs to trace (H33) — keeps the next run recorded, so that the
      // run the subclass picks next is traced from its first before_run.
      armed_ = run_status.ok();
      if (armed_) session_->ArmTracer(this);
      return Status();
    }
    if (!run_status.ok()) return Status();
    const std::string path = trace::TimelinePath(config_.output_dir, *step);
    Log(TW_LOG_INFO, "Saving timeline for %lld into '%s'.", static_cast<long long>(*step), path.c_str());
    return WriteTimeline(calls, *step, start, end, path);
  }

 private:
  struct Call {
    TracePhase phase;
    std::string name;
    double start;
    double end;
  };

  void Disarm(Session &session) {
    if (armed_) session.ArmTracer(nullptr);
    armed_ = false;
    calls_.clear();
  }

  // One process ("trainwatch"), one thread ("session run"); times in microseconds from the run's start.
  static Status WriteTimeline(const std::vector<Call> &calls, int64_t step, double start, double end,
                              const std::string &path) {
    const int64_t pid = static_cast<int64_t>(::getpid());
    trace::TraceWriter timeline;
    timeline.SetProcessName(pid, "trainwatch");
    timeline.SetThreadName(pid, 0, "session run");
    const auto span = [&](std::string name, const char *category, double from, double to) {
      trace::TraceSpan s;
      s.name = std::move(name);
      s.category = category;
      s.pid = pid;
      s.start_us = (from - start) * 1e6;
      s.duration_us = (to - from) * 1e6;
      s.args.push_back(trace::TraceArg::Number("global_step", static_cast<double>(step)));
      timeline.AddSpan(std::move(s));
    };
    span("run", "run", start, end);
    for (const Call &call : calls) span(call.name, PhaseName(call.phase), call.start, call.end);
    return timeline.WriteFile(path);
  }

  ProfilerConfig config_;
  std::unique_ptr<SecondOrStepTimer> timer_;
  Session *session_ = nullptr;          // the session between begin and end
  std::optional<int64_t> next_step_;    // unknown until the first run
  std::optional<int64_t> traced_step_;  // set by the traced run's after_run
  bool armed_ = false;                  // the session will trace (or is tracing) the next run
  std::vector<Call> calls_;
};

}  // namespace

Status NewProfilerHook(ProfilerConfig config, Hook **out) {
  std::unique_ptr<SecondOrStepTimer> timer;
  TW_RETURN_IF_ERROR(SecondOrStepTimer::Create(config.every.secs, config.every.steps, &timer));
  *out = new ProfilerHook(std::move(config), std::move(timer));
  return Status();
}

}  // namespace tw
