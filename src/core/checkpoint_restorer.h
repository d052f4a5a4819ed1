// The chief's restore step (S5, C12): the newest intact checkpoint of checkpoint_dir is restored into
// the registered variables and global_step; a corrupt or truncated newest one is skipped with a
// warning naming it. The kept list is then re-seeded from the state file and trimmed to max_to_keep.
#ifndef TRAINWATCH_CORE_CHECKPOINT_RESTORER_H
#define TRAINWATCH_CORE_CHECKPOINT_RESTORER_H

#include <memory>
#include <string>

#include "core/session_creator.h"

namespace tw {

std::unique_ptr<Restorer> NewCheckpointRestorer(std::string checkpoint_dir);

}  // namespace tw

#endif  // TRAINWATCH_CORE_CHECKPOINT_RESTORER_H
