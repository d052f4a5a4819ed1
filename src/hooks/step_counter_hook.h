// StepCounterHook (TF's B26–B30): global_step/sec in the log and as a scalar summary; a global step
// going backwards restarts the measurement instead of giving a negative rate.
#ifndef TRAINWATCH_HOOKS_STEP_COUNTER_HOOK_H
#define TRAINWATCH_HOOKS_STEP_COUNTER_HOOK_H

#include <memory>
#include <string>

#include "core/hook.h"
#include "hooks/every_n.h"
#include "summary/event_writer.h"

namespace tw {

struct StepCounterConfig {
  EveryN every;                                   // exactly one
  std::string output_dir;                         // used when writer is null; empty: log only
  std::shared_ptr<summary::EventWriter> writer;   // optional
};

// Errors: TW_INVALID_ARGUMENT "exactly one of every_n_steps and every_n_secs should be provided." (B26).
Status NewStepCounterHook(StepCounterConfig config, Hook **out);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_STEP_COUNTER_HOOK_H
