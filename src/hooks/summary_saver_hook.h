// SummarySaverHook (TF's B35–B40): the values a step publishes under configured names or patterns,
// written to TensorBoard event files as scalars (one element) or, when asked for, histograms (B49).
#ifndef TRAINWATCH_HOOKS_SUMMARY_SAVER_HOOK_H
#define TRAINWATCH_HOOKS_SUMMARY_SAVER_HOOK_H

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hooks/every_n.h"
#include "session/hook.h"
#include "summary/event_writer.h"

namespace tw {

struct SummarySaverConfig {
  std::vector<std::string> summarize;            // names or patterns; empty: every value ("*")
  EveryN every;                                  // save_steps / save_secs, exactly one
  std::string output_dir;                        // used when writer is null
  std::shared_ptr<summary::EventWriter> writer;  // optional
  // B49: which values of more than one element become histograms (a histogram of a large variable costs
  // a pass over its elements). Unset: those `summarize` names explicitly, none when it is empty ("*").
  // Set: those matching these names or patterns (requested as well); empty: none.
  std::optional<std::vector<std::string>> histograms;
};

// The names of a comma-separated list (TW_OPT_SUMMARY_HISTOGRAM_NAMES). Errors: TW_INVALID_ARGUMENT
// naming `what` for an empty entry.
Status SplitNameList(const std::string &list, const char *what, std::vector<std::string> *out);

// Errors: TW_INVALID_ARGUMENT (the timer's B1 texts, an empty name, "At least one of output_dir or
// summary_writer must be provided.").
Status NewSummarySaverHook(SummarySaverConfig config, Hook **out);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_SUMMARY_SAVER_HOOK_H
