// ProfilerHook (TF's B45–B47): every N steps or seconds, a Chrome trace of one run — each hook's
// before_run/after_run and the step function — written to "<output_dir>/timeline-<step>.json".
#ifndef TRAINWATCH_HOOKS_PROFILER_HOOK_H
#define TRAINWATCH_HOOKS_PROFILER_HOOK_H

#include <string>

#include "hooks/every_n.h"
#include "session/hook.h"

namespace tw {

struct ProfilerConfig {
  EveryN every;            // save_steps / save_secs, exactly one
  std::string output_dir;  // empty: the current directory
};

// Errors: TW_INVALID_ARGUMENT (the timer's B1 texts).
Status NewProfilerHook(ProfilerConfig config, Hook **out);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_PROFILER_HOOK_H
