// Writes tensors as one checkpoint file (format.h): chunks are filtered and compressed on every core
// and appended in index order as they complete, then the index and footer; the file appears under its
// name only once complete and fsynced (durable_file.h).
#ifndef TRAINWATCH_CHECKPOINT_WRITER_H
#define TRAINWATCH_CHECKPOINT_WRITER_H

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/format.h"
#include "core/status.h"
#include "core/tensor.h"

namespace tw {
namespace checkpoint {

struct WriteOptions {
  int zstd_level = 1;
  uint64_t chunk_bytes = kDefaultChunkBytes;  // raw bytes per chunk, at most kMaxChunkBytes
  int threads = 0;                            // 0: one per core
};

// `tensors` hold contiguous row-major data and unique non-empty names. Errors: TW_INVALID_ARGUMENT
// (names, dtypes, options), TW_NOT_FOUND (directory missing), TW_IO / TW_RESOURCE_EXHAUSTED (the OS
// failed a write or fsync; `path` keeps what it held before, no temporary file is left). Thread-safe:
// distinct calls share nothing.
Status WriteCheckpoint(const std::string &path, const std::vector<TensorRef> &tensors,
                       const WriteOptions &options = WriteOptions());

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_WRITER_H
