// StepCounterHook (TF's B26–B30): global_step/sec in the log and as a scalar summary; a global step
// going backwards restarts the measurement instead of giving a negative rate.
#ifndef TRAINWATCH_HOOKS_STEP_COUNTER_HOOK_H
#define TRAINWATCH_HOOKS_STEP_COUNTER_HOOK_H

#include <memory>
#include <string>

#include "hooks/every_n.h"
#include "session/hook.h"
#include "summary/event_writer.h"
#include "trainwatch/hooks.h"

namespace tw {

struct StepCounterConfig {
  EveryN every;                                  // exactly one
  std::string output_dir;                        // used when writer is null; empty: log only
  std::shared_ptr<summary::EventWriter> writer;  // optional
};

// Errors: TW_INVALID_ARGUMENT "exactly one of every_n_steps and every_n_secs should be provided." (B26).
Status NewStepCounterHook(StepCounterConfig config, Hook **out);

// TF's _log_and_record as an extension point (tw_step_counter_hook_set_record_fn / _log_and_record).
Status SetStepRateFn(Hook *hook, tw_step_rate_fn fn, void *user_data, void (*destroy)(void *));
Status LogAndRecordDefault(Hook *hook, int64_t elapsed_steps, double elapsed_time, int64_t global_step);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_STEP_COUNTER_HOOK_H
