// TF's session creators: the chief restores from a checkpoint or initializes (ChiefSessionCreator +
// Scaffold.init_fn); a worker waits until the model is ready (WorkerSessionCreator).
#ifndef TRAINWATCH_SESSION_SESSION_CREATOR_H
#define TRAINWATCH_SESSION_SESSION_CREATOR_H

#include <memory>

#include "base/status.h"
#include "session/hook.h"
#include "session/options.h"

namespace tw {

// The seam through which a chief restores model state (implemented by the checkpoint layer). Sets
// *restored when it restored something; restoring nothing is not an error.
class Restorer {
 public:
  virtual ~Restorer() = default;
  virtual Status Restore(Session &session, bool *restored) = 0;
};

class SessionCreator {
 public:
  virtual ~SessionCreator() = default;
  // Brings the session's model state up: called on first creation and after every recovery.
  virtual Status CreateSession(Session &session) = 0;
};

// `restorer` may be null (nothing to restore from).
std::unique_ptr<SessionCreator> NewChiefSessionCreator(const Options &options, std::unique_ptr<Restorer> restorer);
std::unique_ptr<SessionCreator> NewWorkerSessionCreator(const Options &options);

}  // namespace tw

#endif  // TRAINWATCH_SESSION_SESSION_CREATOR_H
