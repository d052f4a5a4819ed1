// Writes tensors as one checkpoint file (format.h): chunks are filtered and compressed on every core
// and appended in index order as they complete, then the index and footer; the file appears under its
// name only once complete and fsynced (durable_file.h).
#ifndef TRAINWATCH_CHECKPOINT_WRITER_H
#define TRAINWATCH_CHECKPOINT_WRITER_H

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "checkpoint/codec/codec.h"
#include "checkpoint/format/format.h"

namespace tw {
namespace checkpoint {

struct WriteOptions {
  int zstd_level = 1;
  uint64_t chunk_bytes = kDefaultChunkBytes;  // raw bytes per chunk, at most kMaxChunkBytes
  int threads = 0;                            // 0: one per core
  bool sync_directory = true;  // false: the file's name is durable only once the caller fsyncs the directory
  // >= 0: overwrite the directory's spare of this slot when it has a usable one (a saver's checkpoint: 0,
  // a sharded part: its part index), instead of creating the file fresh (spare_files.h, durable_file.h).
  int spare_slot = -1;
  // Where exponent planes may be tiered-coded (codec 3) rather than Huffman-coded (plane_choice.h).
  TieredPlanes tiered_planes = TieredPlanes::kWhereFast;
  // The job identity of the directory (job_identity.h) recorded in the file's origin with its basename
  // (format.h: a saver proves its own checkpoints by it); all zero outside a saver: no job's.
  JobId job{};
};

// `tensors` hold contiguous row-major data and unique non-empty names. Errors: TW_INVALID_ARGUMENT
// (names, dtypes, options), TW_NOT_FOUND (directory missing), TW_IO / TW_RESOURCE_EXHAUSTED (the OS
// failed a write or fsync; `path` keeps what it held before, no temporary file is left). Thread-safe:
// distinct calls share nothing.
Status WriteCheckpoint(const std::string &path, const std::vector<TensorRef> &tensors,
                       const WriteOptions &options = WriteOptions());

// Memory one save leaves for the next (a Saver keeps one): the per-thread codecs (zstd contexts,
// scratch) and a few chunk buffers. Writing into fresh memory costs a page fault per 4 KiB, ~5000 per
// save with 4 MiB chunks. Holds at most (threads + 2) chunk buffers and one codec per thread.
// Thread-safe: a call that finds it in use by another allocates its own memory as without it.
struct WriteBuffers {
  std::mutex mutex;
  std::vector<std::unique_ptr<ChunkCodec>> codecs;
  std::vector<std::unique_ptr<uint8_t[]>> buffers;
  size_t buffer_size = 0;
};
// What a written file is pinned by (a sharded checkpoint's index records it for every part): its size
// and its footer's index checksum, which covers every chunk's checksum.
struct WrittenFile {
  uint64_t file_size = 0;
  uint64_t index_xxh64 = 0;
};
// `written` (may be NULL) receives them on success.
Status WriteCheckpoint(const std::string &path, const std::vector<TensorRef> &tensors, const WriteOptions &options,
                       WriteBuffers *reuse, WrittenFile *written = nullptr);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_WRITER_H
