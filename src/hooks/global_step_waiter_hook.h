// GlobalStepWaiterHook (TF's B41–B42): the first run waits until the global step reaches a target,
// optionally bounded (TF waits forever).
#ifndef TRAINWATCH_HOOKS_GLOBAL_STEP_WAITER_HOOK_H
#define TRAINWATCH_HOOKS_GLOBAL_STEP_WAITER_HOOK_H

#include <memory>

#include "session/hook.h"
#include "session/options.h"
#include "trainwatch/hooks.h"

namespace tw {

struct GlobalStepWaiterConfig {
  int64_t wait_until_step = 0;
  double poll_secs = 0.5;
  double max_wait_secs = -1;                                          // negative: forever
  std::shared_ptr<UserCallback<tw_global_step_fn>> read_global_step;  // null: the session's
};

Status NewGlobalStepWaiterHook(GlobalStepWaiterConfig config, Hook **out);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_GLOBAL_STEP_WAITER_HOOK_H
