// Which SIMD target the numerics kernels dispatch to, and which ones they can.
#ifndef TRAINWATCH_NUMERICS_TARGETS_H
#define TRAINWATCH_NUMERICS_TARGETS_H

#include <cstdint>
#include <vector>

namespace tw {
namespace numerics {

// The Highway target (HWY_AVX3, …) that the kernels dispatch to now: the best one the CPU supports,
// unless a test restricted the set with hwy::SetSupportedTargetsForTest.
int64_t ActiveTarget();

// Its name: "AVX3_DL", "AVX3", "AVX2", "SSE4", "SSSE3" or the portable fallback ("SCALAR" when built
// with GCC < 12.3, where Highway 1.0.3 disables EMU128; "EMU128" otherwise). Static storage.
const char *ActiveTargetName();

// Every target the kernels were compiled for that this CPU can run, best first. Reflects
// hwy::SetSupportedTargetsForTest while a test has it set.
std::vector<int64_t> RunnableTargets();

}  // namespace numerics
}  // namespace tw

#endif  // TRAINWATCH_NUMERICS_TARGETS_H
