// The "every N steps or every N seconds" arguments of the periodic hooks, as the C API spells them
// (TW_UNSET and negative seconds for TF's None), turned into the timer they configure.
#ifndef TRAINWATCH_HOOKS_EVERY_N_H
#define TRAINWATCH_HOOKS_EVERY_N_H

#include <cstdint>
#include <optional>

#include "session/options.h"

namespace tw {

struct EveryN {
  std::optional<int64_t> steps;
  std::optional<double> secs;
};

// steps == TW_UNSET and any negative (or NaN) secs mean "not given".
inline EveryN EveryNFromArgs(int64_t steps, double secs) {
  EveryN every;
  if (steps != TW_UNSET) every.steps = steps;
  if (secs >= 0) every.secs = secs;
  return every;
}

// TW_OPT_EVERY_N_STEPS and TW_OPT_EVERY_N_SECS.
inline EveryN EveryNFromOptions(const Options &options) {
  return EveryNFromArgs(options.Int64(TW_OPT_EVERY_N_STEPS), options.Double(TW_OPT_EVERY_N_SECS));
}

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_EVERY_N_H
