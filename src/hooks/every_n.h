// The "every N steps or every N seconds" of the periodic hooks: every hook reads them from
// TW_OPT_EVERY_N_STEPS and TW_OPT_EVERY_N_SECS (TW_UNSET and negative seconds for TF's None).
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

// TW_OPT_EVERY_N_STEPS and TW_OPT_EVERY_N_SECS; steps == TW_UNSET and any negative (or NaN) secs
// mean "not given". A hook whose TF constructor has a default period (StepCounterHook's
// every_n_steps=100) passes it as `default_steps`: it applies while TW_OPT_EVERY_N_STEPS is left at
// its default, and tw_options_set_none gives TF's None.
inline EveryN EveryNFromOptions(const Options &options, std::optional<int64_t> default_steps = std::nullopt) {
  EveryN every;
  const int64_t steps = options.Int64(TW_OPT_EVERY_N_STEPS);
  const double secs = options.Double(TW_OPT_EVERY_N_SECS);
  if (steps != TW_UNSET) every.steps = steps;
  if (options.State(TW_OPT_EVERY_N_STEPS) == TW_OPTION_DEFAULT) every.steps = default_steps;
  if (secs >= 0) every.secs = secs;
  return every;
}

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_EVERY_N_H
