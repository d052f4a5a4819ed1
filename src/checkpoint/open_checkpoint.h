// A checkpoint at a path, whichever kind it is: a sharded checkpoint's index (sharded/sharded_reader.h)
// or a single file (file/reader.h). This is the one place that tells the two apart; the readers below
// know only their own kind, and the sharded reader reads its parts with the single-file reader.
#ifndef TRAINWATCH_CHECKPOINT_OPEN_CHECKPOINT_H
#define TRAINWATCH_CHECKPOINT_OPEN_CHECKPOINT_H

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "checkpoint/file/reader.h"
#include "checkpoint/sharded/sharded_reader.h"

namespace tw {
namespace checkpoint {

struct OpenedCheckpoint {
  std::unique_ptr<ShardedReader> sharded;  // a sharded checkpoint's index (its parts opened when read),
  std::unique_ptr<CheckpointReader> file;  // or a single file: exactly one is set after OpenCheckpoint
};

// Opens the checkpoint at `path`: an index when the file is one, else a single file. Errors: those of
// ShardedReader::Open, then of CheckpointReader::Open.
Status OpenCheckpoint(const std::string &path, OpenedCheckpoint *out);

// list_variables: every tensor's name, dtype and shape, in saved order (a single file's also its chunk
// layout; a sharded checkpoint's whole tensors, as the job declared them). Errors: those of OpenCheckpoint.
Status ListVariables(const std::string &path, std::vector<TensorEntry> *tensors);

// load_variable: reads the tensor named destination.name() from the checkpoint at `path` into
// destination's buffer (a sharded checkpoint's from the parts holding it). Errors: those of
// OpenCheckpoint, TW_NOT_FOUND (no such tensor), CheckRestorable's, TW_DATA_LOSS (the buffer is then
// untouched). A destination on a device is decoded into pinned host memory, then copied to the device
// (waited for); the device's failures name the operation and the tensor.
Status LoadVariable(const std::string &path, const TensorRef &destination);

// Decodes every chunk of the checkpoint (of every part of a sharded one, each pinned by the index) and
// checks both checksums, keeping nothing: `trainwatch-ckpt verify`. Errors: those of OpenCheckpoint,
// ShardedReader::Verify and CheckpointReader::Verify.
Status VerifyCheckpoint(const std::string &path);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_OPEN_CHECKPOINT_H
