// tf.train.MonitoredTrainingSession (T1–T10): resolves TF's frequency arguments, assembles the chief's
// default hooks in TF's order, and creates a MonitoredSession. The layer above src/hooks/: it is the
// one place that knows several hooks.
#ifndef TRAINWATCH_TRAINING_MONITORED_TRAINING_SESSION_H
#define TRAINWATCH_TRAINING_MONITORED_TRAINING_SESSION_H

#include "session/session.h"

namespace tw {

Status CreateMonitoredTrainingSession(const Options &options, Hook *const *hooks, size_t hook_count,
                                      Hook *const *chief_only_hooks, size_t chief_only_count, Session **out);

}  // namespace tw

#endif  // TRAINWATCH_TRAINING_MONITORED_TRAINING_SESSION_H
