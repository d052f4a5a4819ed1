// NanTensorHook: TF's B31–B34, plus Inf detection, many watched names or patterns, a check interval,
// and an action (fail, stop, or a user callback).
#ifndef TRAINWATCH_HOOKS_NAN_TENSOR_HOOK_H
#define TRAINWATCH_HOOKS_NAN_TENSOR_HOOK_H

#include <memory>
#include <string>
#include <vector>

#include "session/hook.h"
#include "session/options.h"
#include "trainwatch/hooks.h"

namespace tw {

struct NanGuardConfig {
  std::vector<std::string> watch;  // names or fnmatch patterns
  tw_nan_action action = TW_NAN_ACTION_FAIL;
  bool detect_inf = true;
  int64_t every_n_steps = 1;
  int64_t max_rollbacks = 3;                          // for TW_NAN_ACTION_ROLLBACK
  std::shared_ptr<UserCallback<tw_nan_fn>> callback;  // for TW_NAN_ACTION_CALLBACK
};

Status NewNanTensorHook(NanGuardConfig config, Hook **out);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_NAN_TENSOR_HOOK_H
