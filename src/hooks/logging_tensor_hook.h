// LoggingTensorHook (TF's B6–B10), with values of any dtype and shape printed numpy-style (large ones
// summarised); a formatter's text is logged as it is (B9).
#ifndef TRAINWATCH_HOOKS_LOGGING_TENSOR_HOOK_H
#define TRAINWATCH_HOOKS_LOGGING_TENSOR_HOOK_H

#include <memory>
#include <string>
#include <vector>

#include "hooks/every_n.h"
#include "session/hook.h"
#include "session/options.h"
#include "trainwatch/hooks.h"

namespace tw {

struct LoggingTensorConfig {
  std::vector<std::string> names;  // the values to log (exact names)
  std::vector<std::string> tags;   // empty: tags are the names, printed in order (TF's list form);
                                   // else one per name, printed sorted by tag (TF's dict form)
  EveryN every;                    // every_n_iter (local runs) / every_n_secs
  bool at_end = false;
  int64_t max_elements = 32;                                     // larger values are summarised
  std::shared_ptr<UserCallback<tw_log_formatter_fn>> formatter;  // optional
};

// Errors: TW_INVALID_ARGUMENT with TF's texts (B6), for empty, pattern or duplicate names, duplicate
// tags.
Status NewLoggingTensorHook(LoggingTensorConfig config, Hook **out);

// TF's _log_tensors as an extension point: a function that replaces "format and log", and the
// built-in, callable from inside it (tw_logging_tensor_hook_set_log_fn / _log_tensors).
Status SetLogTensorsFn(Hook *hook, tw_log_tensors_fn fn, void *user_data, void (*destroy)(void *));
Status LogTensorsDefault(Hook *hook, const tw_tensor *const *values, size_t n_values);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_LOGGING_TENSOR_HOOK_H
