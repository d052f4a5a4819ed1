// Compiled for the same targets as the kernels (numerics/hwy_targets.h), so what this file's dispatch
// table picks is what theirs pick: the chosen target is one process-wide Highway setting.
#include "numerics/hwy_targets.h"  // first: fixes HWY_TARGETS for this file

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "numerics/targets.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "numerics/targets.h"

HWY_BEFORE_NAMESPACE();
namespace tw {
namespace numerics {
namespace HWY_NAMESPACE {

int64_t CompiledTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace numerics
}  // namespace tw
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tw {
namespace numerics {

HWY_EXPORT(CompiledTarget);

int64_t ActiveTarget() { return HWY_DYNAMIC_DISPATCH(CompiledTarget)(); }

const char *ActiveTargetName() { return hwy::TargetName(ActiveTarget()); }

std::vector<int64_t> RunnableTargets() { return hwy::SupportedAndGeneratedTargets(); }

}  // namespace numerics
}  // namespace tw
#endif  // HWY_ONCE
