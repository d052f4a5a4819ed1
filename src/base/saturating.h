// Global-step arithmetic that saturates at the int64 limits instead of overflowing (undefined
// behaviour, and in practice a wrap to a negative step): the step after INT64_MAX is INT64_MAX, and a
// StopAtStepHook(num_steps=INT64_MAX) target is INT64_MAX rather than a step in the past.
#ifndef TRAINWATCH_BASE_SATURATING_H
#define TRAINWATCH_BASE_SATURATING_H

#include <cstdint>

namespace tw {

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

// The step a run that starts at `step` ends at when it adds one.
inline int64_t NextStep(int64_t step) { return SaturatingAdd(step, 1); }

}  // namespace tw

#endif  // TRAINWATCH_BASE_SATURATING_H
