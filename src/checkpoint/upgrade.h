// Conversion to the current format: a checkpoint of any format this build reads (docs/checkpoint-format.md,
// "Versioning": 1.0 reads its own format, the formats before it only with -Dlegacy_formats=true)
// rewritten as one file of the current one. `trainwatch-ckpt upgrade OLD NEW` (tw_checkpoint_upgrade).
#ifndef TRAINWATCH_CHECKPOINT_UPGRADE_H
#define TRAINWATCH_CHECKPOINT_UPGRADE_H

#include <string>

#include "base/status.h"

namespace tw {
namespace checkpoint {

// Reads every tensor of the checkpoint at `from` (a single file, or a sharded checkpoint's index: its
// whole tensors, assembled from the parts) and writes them, bit for bit, as one checkpoint file of the
// current format at `to`, durably (it appears complete or not at all). Every tensor is held in memory
// at once. The new file records no job (as a file written outside a saver): a saver never deletes it or
// finds it by name; restore it by its path. Errors: those of reading `from` (TW_NOT_FOUND, TW_DATA_LOSS,
// TW_UNIMPLEMENTED for a format this build does not read, …), TW_INVALID_ARGUMENT when `to` names the
// same file as `from`, TW_RESOURCE_EXHAUSTED, and those of writing `to` (TW_NOT_FOUND: its directory is
// missing; TW_IO). On failure `to` is untouched.
Status UpgradeCheckpoint(const std::string &from, const std::string &to);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_UPGRADE_H
