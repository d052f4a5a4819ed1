// The session's tracing seam (what ProfilerHook uses): a tracer armed on a session hears how long each
// hook callback and the step function of the next hooked run took. The session's run loop is compiled
// twice, with and without tracing, so a session with no tracer armed runs no tracing code at all.
#ifndef TRAINWATCH_SESSION_RUN_TRACER_H
#define TRAINWATCH_SESSION_RUN_TRACER_H

#include "base/status.h"

struct tw_hook;

namespace tw {

enum class TracePhase { kBeforeRun, kStep, kAfterRun };

class RunTracer {
 public:
  virtual ~RunTracer() = default;

  // One callback of the traced run, in call order: `hook` is the hook whose callback ran, nullptr for
  // the step function. Times are MonotonicSeconds() (base/timer.h).
  virtual void Record(TracePhase phase, const tw_hook *hook, double start, double end) = 0;

  // The traced run is over: it ran from `start` to `end` and ended with `run_status`. The session has
  // disarmed the tracer already (Finish may arm it again, for the next run). A non-OK return fails a run
  // that had succeeded.
  virtual Status Finish(const Status &run_status, double start, double end) = 0;
};

}  // namespace tw

#endif  // TRAINWATCH_SESSION_RUN_TRACER_H
