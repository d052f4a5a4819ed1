// StopAtStepHook (TF's B11–B15).
#ifndef TRAINWATCH_HOOKS_STOP_AT_STEP_HOOK_H
#define TRAINWATCH_HOOKS_STOP_AT_STEP_HOOK_H

#include "session/hook.h"

namespace tw {

// num_steps / last_step: exactly one is TW_UNSET.
Status NewStopAtStepHook(int64_t num_steps, int64_t last_step, Hook **out);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_STOP_AT_STEP_HOOK_H
