// The chief's restore step (S5, C12): when the session writes checkpoints, takes checkpoint_dir's lock
// (a second writer fails here, at session creation; a session that only restores takes none, C24), then
// restores the newest intact checkpoint into the registered variables and
// global_step — the state file's entries first, then the checkpoints found by name, so a damaged or
// missing state file never makes a chief re-initialize over intact checkpoints. A checkpoint without
// global_step (a standalone Saver's) gives the step of its "-<step>" name. A writing session's kept list is then
// re-seeded (from the state file, or from the directory when the state file is unusable).
#ifndef TRAINWATCH_SESSION_CHECKPOINT_RESTORER_H
#define TRAINWATCH_SESSION_CHECKPOINT_RESTORER_H

#include <memory>
#include <string>
#include <vector>

#include "session/session_creator.h"

namespace tw {

std::unique_ptr<Restorer> NewCheckpointRestorer(std::string checkpoint_dir);

// After restoring `path`: when `missing` lists global_step (a standalone Saver's checkpoint), the
// session's step is taken from the "-<step>" of the checkpoint's name.
void TakeStepFromName(Session &session, const std::string &path, const std::vector<std::string> &missing);

}  // namespace tw

#endif  // TRAINWATCH_SESSION_CHECKPOINT_RESTORER_H
