#include "checkpoint/file/writer.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "base/progress.h"
#include "checkpoint/codec/codec.h"
#include "checkpoint/format/xxhash64.h"
#include "checkpoint/io/durable_file.h"
#include "checkpoint/io/parallel.h"
#include "checkpoint/io/path.h"

namespace tw {
namespace checkpoint {
namespace {

struct ChunkJob {
  size_t tensor;   // index into the tensor list
  size_t chunk;    // index into that tensor's chunks
  uint64_t begin;  // first raw byte
};

// Appends encoded chunks to the file in job order whichever worker finishes first: the worker that
// completes the next chunk due also writes every later one already waiting, so no worker blocks and
// the file layout does not depend on scheduling. Written buffers are recycled, so a save touches only
// a few chunks' worth of fresh memory.
class OrderedAppender {
 public:
  OrderedAppender(DurableFile *file, size_t count, size_t buffer_size, std::vector<std::unique_ptr<uint8_t[]>> buffers)
      : file_(file), buffer_size_(buffer_size), pending_(count), offsets_(count), free_(std::move(buffers)) {}

  // The buffers not in use (all of them once the jobs are done), for the next save.
  std::vector<std::unique_ptr<uint8_t[]>> ReleaseBuffers() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(free_);
  }

  std::unique_ptr<uint8_t[]> TakeBuffer() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return std::unique_ptr<uint8_t[]>(new uint8_t[buffer_size_]);
    std::unique_ptr<uint8_t[]> buffer = std::move(free_.back());
    free_.pop_back();
    return buffer;
  }

  Status Submit(size_t index, std::unique_ptr<uint8_t[]> bytes, size_t size) {
    std::unique_lock<std::mutex> lock(mutex_);
    pending_[index] = Pending{std::move(bytes), size, true};
    if (draining_) return error_;
    draining_ = true;
    while (error_.ok() && next_ < pending_.size() && pending_[next_].ready) {
      Pending chunk = std::move(pending_[next_]);
      const size_t i = next_;
      lock.unlock();
      offsets_[i] = file_->size();
      Status status = file_->Append(chunk.bytes.get(), chunk.size);
      lock.lock();
      if (!status.ok()) error_ = status;
      free_.push_back(std::move(chunk.bytes));
      ++next_;
    }
    draining_ = false;
    return error_;
  }

  uint64_t offset(size_t index) const { return offsets_[index]; }

 private:
  struct Pending {
    std::unique_ptr<uint8_t[]> bytes;
    size_t size = 0;
    bool ready = false;
  };

  DurableFile *file_;
  const size_t buffer_size_;
  std::mutex mutex_;
  std::vector<Pending> pending_;
  std::vector<uint64_t> offsets_;
  std::vector<std::unique_ptr<uint8_t[]>> free_;
  size_t next_ = 0;
  bool draining_ = false;
  Status error_;
};

Status CheckTensors(const std::vector<TensorRef> &tensors, const WriteOptions &options) {
  if (options.chunk_bytes == 0 || options.chunk_bytes > kMaxChunkBytes) {
    return Errorf(TW_INVALID_ARGUMENT, "chunk size %llu is not in [1, %llu]",
                  static_cast<unsigned long long>(options.chunk_bytes),
                  static_cast<unsigned long long>(kMaxChunkBytes));
  }
  std::unordered_set<std::string> names;
  for (const TensorRef &t : tensors) {
    if (t.name().empty()) return Status(TW_INVALID_ARGUMENT, "a tensor to save has an empty name");
    if (!names.insert(t.name()).second) {
      return Status(TW_INVALID_ARGUMENT, "two tensors to save are named '" + t.name() + "'");
    }
    if (DtypeSize(t.dtype()) == 0 || t.shape().size() > static_cast<size_t>(kMaxRank)) {
      return Status(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' has a bad dtype or more than " +
                                             std::to_string(kMaxRank) + " dimensions");
    }
    if (t.byte_size() > 0 && t.data() == nullptr) {
      return Status(TW_INVALID_ARGUMENT, "tensor '" + t.name() + "' has elements but no data");
    }
  }
  return Status();
}

// Lays out each tensor's chunks (raw ranges only) and the jobs that will fill them.
std::vector<ChunkJob> PlanChunks(const std::vector<TensorRef> &tensors, uint64_t chunk_bytes,
                                 std::vector<TensorEntry> *entries) {
  std::vector<ChunkJob> jobs;
  entries->resize(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorRef &t = tensors[i];
    TensorEntry &entry = (*entries)[i];
    entry.name = t.name();
    entry.dtype = t.dtype();
    entry.shape = t.shape();
    entry.filter = FilterFor(t.dtype());
    const uint64_t element_size = DtypeSize(t.dtype());
    const uint64_t step = std::max<uint64_t>(1, chunk_bytes / element_size) * element_size;
    const uint64_t size = t.byte_size();
    for (uint64_t begin = 0; begin < size; begin += step) {
      Chunk chunk;
      chunk.raw_size = std::min(step, size - begin);
      jobs.push_back(ChunkJob{i, entry.chunks.size(), begin});
      entry.chunks.push_back(chunk);
    }
  }
  return jobs;
}

}  // namespace

Status WriteCheckpoint(const std::string &path, const std::vector<TensorRef> &tensors, const WriteOptions &options) {
  return WriteCheckpoint(path, tensors, options, nullptr);
}

Status WriteCheckpoint(const std::string &path, const std::vector<TensorRef> &tensors, const WriteOptions &options,
                       WriteBuffers *reuse, WrittenFile *written_file) {
  TW_RETURN_IF_ERROR(CheckTensors(tensors, options));
  std::vector<TensorEntry> entries;
  const std::vector<ChunkJob> jobs = PlanChunks(tensors, options.chunk_bytes, &entries);

  std::unique_ptr<DurableFile> file;
  TW_RETURN_IF_ERROR(DurableFile::Create(path, &file, options.spare_slot));
  std::string header;
  AppendHeader(&header);
  TW_RETURN_IF_ERROR(file->Append(header.data(), header.size()));

  const int threads = options.threads > 0 ? options.threads : DefaultThreadCount();
  WriteBuffers local;
  std::unique_lock<std::mutex> reuse_lock;
  if (reuse != nullptr) reuse_lock = std::unique_lock<std::mutex>(reuse->mutex, std::try_to_lock);
  WriteBuffers &pool = reuse_lock.owns_lock() ? *reuse : local;
  std::vector<std::unique_ptr<ChunkCodec>> &codecs = pool.codecs;
  if (codecs.size() < static_cast<size_t>(threads)) codecs.resize(static_cast<size_t>(threads));
  uint64_t largest_chunk = 0;
  for (const TensorEntry &entry : entries) {
    for (const Chunk &chunk : entry.chunks) largest_chunk = std::max(largest_chunk, chunk.raw_size);
  }
  if (pool.buffer_size != largest_chunk) pool.buffers.clear();
  pool.buffer_size = static_cast<size_t>(largest_chunk);
  OrderedAppender appender(file.get(), jobs.size(), static_cast<size_t>(largest_chunk), std::move(pool.buffers));
  Progress progress(TW_PROGRESS_SAVE, path);
  for (const TensorRef &tensor : tensors) progress.Expect(tensor.byte_size());
  const Status written = ParallelFor(jobs.size(), threads, [&](size_t j, int worker) {
    const ChunkJob &job = jobs[j];
    const TensorRef &tensor = tensors[job.tensor];
    TensorEntry &entry = entries[job.tensor];
    Chunk &chunk = entry.chunks[job.chunk];
    std::unique_ptr<ChunkCodec> &codec = codecs[static_cast<size_t>(worker)];
    if (!codec || codec->zstd_level() != options.zstd_level) codec.reset(new ChunkCodec(options.zstd_level));
    std::unique_ptr<uint8_t[]> stored = appender.TakeBuffer();
    size_t stored_size = 0;
    TW_RETURN_IF_ERROR(codec->Encode(static_cast<const uint8_t *>(tensor.data()) + job.begin, entry.dtype, entry.filter,
                                     &chunk, stored.get(), &stored_size, options.tiered_planes));
    TW_RETURN_IF_ERROR(appender.Submit(j, std::move(stored), stored_size));
    progress.Add(chunk.raw_size);
    return Status();
  });
  pool.buffers = appender.ReleaseBuffers();
  if (pool.buffers.size() > static_cast<size_t>(threads) + 2) pool.buffers.resize(static_cast<size_t>(threads) + 2);
  TW_RETURN_IF_ERROR(written);
  for (size_t j = 0; j < jobs.size(); ++j) entries[jobs[j].tensor].chunks[jobs[j].chunk].offset = appender.offset(j);

  std::string tail;
  AppendIndex(Origin{options.job, Basename(path)}, entries, &tail);
  Footer footer;
  footer.index_offset = file->size();
  footer.index_size = tail.size();
  footer.index_xxh64 = Xxh64(tail.data(), tail.size(), IndexChecksumSeed(kFormatVersion));
  AppendFooter(footer, &tail);
  TW_RETURN_IF_ERROR(file->Append(tail.data(), tail.size()));
  const uint64_t file_size = file->size();
  TW_RETURN_IF_ERROR(file->Commit(options.sync_directory));
  if (written_file != nullptr) *written_file = {file_size, footer.index_xxh64};
  progress.Finish();
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
