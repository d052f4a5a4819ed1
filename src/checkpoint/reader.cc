#include "checkpoint/reader.h"

#include "checkpoint/codec.h"
#include "checkpoint/parallel.h"
#include "checkpoint/xxhash64.h"

namespace tw {
namespace checkpoint {
namespace {

struct ChunkJob {
  const TensorEntry *tensor;
  size_t chunk;
  uint8_t *destination;  // where the chunk's raw bytes go (NULL: decode into scratch, for Verify)
};

}  // namespace

Status CheckpointReader::Open(const std::string &path, std::unique_ptr<CheckpointReader> *out) {
  std::unique_ptr<CheckpointReader> reader(new CheckpointReader());
  reader->path_ = path;
  TW_RETURN_IF_ERROR(MappedFile::Open(path, &reader->file_));
  reader->data_ = reader->file_->data();
  reader->size_ = reader->file_->size();
  TW_RETURN_IF_ERROR(reader->Parse());
  *out = std::move(reader);
  return Status();
}

Status CheckpointReader::OpenMemory(const uint8_t *data, size_t size, const std::string &name,
                                    std::unique_ptr<CheckpointReader> *out) {
  std::unique_ptr<CheckpointReader> reader(new CheckpointReader());
  reader->path_ = name;
  reader->data_ = data;
  reader->size_ = size;
  TW_RETURN_IF_ERROR(reader->Parse());
  *out = std::move(reader);
  return Status();
}

Status CheckpointReader::Parse() {
  TW_RETURN_IF_ERROR(ParseHeader(data_, size_, path_));
  Footer footer;
  TW_RETURN_IF_ERROR(ParseFooter(data_ + size_ - kFooterSize, size_, path_, &footer));
  TW_RETURN_IF_ERROR(ParseIndex(data_ + footer.index_offset, footer, path_, &tensors_));
  for (size_t i = 0; i < tensors_.size(); ++i) by_name_.emplace(tensors_[i].name, i);
  return Status();
}

const TensorEntry *CheckpointReader::Find(const std::string &name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

Status CheckpointReader::ChunkError(const TensorEntry &tensor, size_t chunk, const Status &cause) const {
  return Status(cause.code(), "checkpoint " + path_ + ": tensor '" + tensor.name + "' chunk " +
                                  std::to_string(chunk) + " of " + std::to_string(tensor.chunks.size()) +
                                  ": " + cause.message());
}

bool CheckpointReader::StoredChecksumMatches(const Chunk &chunk) const {
  return Xxh64(data_ + chunk.offset, static_cast<size_t>(chunk.stored_size())) == chunk.stored_xxh64;
}

Status CheckpointReader::ReadInto(const std::vector<Target> &targets, int threads) const {
  std::vector<ChunkJob> jobs;
  for (const Target &target : targets) {
    uint8_t *destination = static_cast<uint8_t *>(target.data);
    for (size_t c = 0; c < target.tensor->chunks.size(); ++c) {
      jobs.push_back(ChunkJob{target.tensor, c, destination});
      destination += target.tensor->chunks[c].raw_size;
    }
  }
  const Status stored_bytes_ok = ParallelFor(jobs.size(), threads, [&](size_t j, int) {
    const ChunkJob &job = jobs[j];
    if (StoredChecksumMatches(job.tensor->chunks[job.chunk])) return Status();
    return ChunkError(*job.tensor, job.chunk, Status(TW_DATA_LOSS, "checksum mismatch in the stored bytes"));
  });
  TW_RETURN_IF_ERROR(stored_bytes_ok);

  std::vector<std::unique_ptr<ChunkCodec>> codecs(static_cast<size_t>(threads > 0 ? threads : DefaultThreadCount()));
  return ParallelFor(jobs.size(), static_cast<int>(codecs.size()), [&](size_t j, int worker) {
    const ChunkJob &job = jobs[j];
    const Chunk &chunk = job.tensor->chunks[job.chunk];
    std::unique_ptr<ChunkCodec> &codec = codecs[static_cast<size_t>(worker)];
    if (!codec) codec.reset(new ChunkCodec());
    const Status decoded =
        codec->Decode(data_ + chunk.offset, chunk, job.tensor->dtype, job.tensor->filter, job.destination);
    // Stored bytes that match their checksum but do not decode mean the writer was faulty; the
    // buffer of this tensor may then be partly written.
    return decoded.ok() ? decoded : ChunkError(*job.tensor, job.chunk, decoded);
  });
}

Status CheckpointReader::Verify(int threads) const {
  std::vector<ChunkJob> jobs;
  for (const TensorEntry &tensor : tensors_) {
    for (size_t c = 0; c < tensor.chunks.size(); ++c) jobs.push_back(ChunkJob{&tensor, c, nullptr});
  }
  const size_t workers = static_cast<size_t>(threads > 0 ? threads : DefaultThreadCount());
  std::vector<std::unique_ptr<ChunkCodec>> codecs(workers);
  std::vector<std::unique_ptr<uint8_t[]>> scratch(workers);
  std::vector<uint64_t> scratch_size(workers, 0);
  return ParallelFor(jobs.size(), static_cast<int>(workers), [&](size_t j, int worker) {
    const ChunkJob &job = jobs[j];
    const Chunk &chunk = job.tensor->chunks[job.chunk];
    if (!StoredChecksumMatches(chunk)) {
      return ChunkError(*job.tensor, job.chunk, Status(TW_DATA_LOSS, "checksum mismatch in the stored bytes"));
    }
    const size_t w = static_cast<size_t>(worker);
    if (!codecs[w]) codecs[w].reset(new ChunkCodec());
    if (scratch_size[w] < chunk.raw_size) {
      scratch[w].reset(new uint8_t[chunk.raw_size]);
      scratch_size[w] = chunk.raw_size;
    }
    const Status decoded = codecs[w]->Decode(data_ + chunk.offset, chunk, job.tensor->dtype, job.tensor->filter,
                                             scratch[w].get());
    return decoded.ok() ? decoded : ChunkError(*job.tensor, job.chunk, decoded);
  });
}

namespace {

std::string Describe(int32_t dtype, const std::vector<int64_t> &shape) {
  std::string text = std::string(DtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

Status CheckRestorable(const TensorEntry &tensor, const TensorRef &destination, const std::string &file) {
  if (tensor.dtype == destination.dtype() && tensor.shape == destination.shape()) return Status();
  return Status(TW_INVALID_ARGUMENT, "variable '" + destination.name() + "' is " +
                                         Describe(destination.dtype(), destination.shape()) + " but checkpoint " +
                                         file + " holds " + Describe(tensor.dtype, tensor.shape));
}

Status ListVariables(const std::string &path, std::vector<TensorEntry> *tensors) {
  std::unique_ptr<CheckpointReader> reader;
  TW_RETURN_IF_ERROR(CheckpointReader::Open(path, &reader));
  *tensors = reader->tensors();
  return Status();
}

Status LoadVariable(const std::string &path, const TensorRef &destination) {
  std::unique_ptr<CheckpointReader> reader;
  TW_RETURN_IF_ERROR(CheckpointReader::Open(path, &reader));
  const TensorEntry *tensor = reader->Find(destination.name());
  if (tensor == nullptr) {
    return Status(TW_NOT_FOUND, "Key " + destination.name() + " not found in checkpoint " + path);
  }
  TW_RETURN_IF_ERROR(CheckRestorable(*tensor, destination, path));
  return reader->ReadInto({{tensor, destination.data()}});
}

}  // namespace checkpoint
}  // namespace tw
