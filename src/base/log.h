// The library's one log sink: every hook and layer logs through Log(); the sink is pluggable through
// tw_set_log_sink so bindings route lines to their language's logging.
#ifndef TRAINWATCH_BASE_LOG_H
#define TRAINWATCH_BASE_LOG_H

#include "trainwatch/common.h"

namespace tw {

void Log(tw_log_level level, const char *format, ...) __attribute__((format(printf, 2, 3)));

// True when a line at `level` would reach the sink; lets callers skip formatting costly values.
bool LogEnabled(tw_log_level level);

void SetLogSink(tw_log_fn fn, void *user_data);
void SetLogLevel(tw_log_level level);

}  // namespace tw

#endif  // TRAINWATCH_BASE_LOG_H
