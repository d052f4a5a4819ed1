// FinalOpsHook (TF's B43): a final step run without hooks at end(), its outputs kept past close.
#ifndef TRAINWATCH_HOOKS_FINAL_OPS_HOOK_H
#define TRAINWATCH_HOOKS_FINAL_OPS_HOOK_H

#include <memory>
#include <vector>

#include "base/tensor_copy.h"
#include "session/hook.h"
#include "session/options.h"

namespace tw {

struct FinalOpsConfig {
  std::shared_ptr<UserCallback<tw_step_fn>> final_step;
  std::vector<TensorCopy> feeds;  // owned copies
};

Status NewFinalOpsHook(FinalOpsConfig config, Hook **out);

// The outputs the final step published at the last end(), in publish order; nullptr when `hook` is
// not a FinalOpsHook, an empty list's `ran` false before the final step completed.
struct FinalOpsValues {
  bool ran = false;
  std::vector<TensorCopy> values;
};
const FinalOpsValues *FinalOpsValuesOf(const Hook *hook);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_FINAL_OPS_HOOK_H
