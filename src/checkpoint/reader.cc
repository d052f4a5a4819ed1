#include "checkpoint/reader.h"

#include <cstring>

#include "checkpoint/codec.h"
#include "checkpoint/kept_planes.h"
#include "checkpoint/parallel.h"
#include "checkpoint/sharded_reader.h"
#include "checkpoint/checksum.h"

namespace tw {
namespace checkpoint {

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
  uint32_t version = 0;
  TW_RETURN_IF_ERROR(ParseHeader(data_, size_, path_, 0, &version));
  hash_ = ChunkHashOf(version);
  Footer footer;
  TW_RETURN_IF_ERROR(ParseFooter(data_ + size_ - kFooterSize, size_, path_, &footer));
  TW_RETURN_IF_ERROR(ParseIndex(data_ + footer.index_offset, footer, path_, &tensors_, version, &origin_));
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
  return StoredChecksum(hash_, data_ + chunk.offset, chunk) == chunk.stored_checksum;
}

Status CheckpointReader::CheckChunks(const std::vector<ChunkJob> &jobs, int threads, KeptPlanes *keep) const {
  if (keep != nullptr) {
    size_t bytes = 0;
    for (const ChunkJob &job : jobs) bytes += ChunkCodec::CodedPlaneBytes(job.tensor->chunks[job.chunk]);
    keep->Expect(bytes, jobs.size());
  }
  std::vector<std::unique_ptr<ChunkCodec>> codecs(static_cast<size_t>(threads > 0 ? threads : DefaultThreadCount()));
  return ParallelFor(jobs.size(), static_cast<int>(codecs.size()), [&](size_t j, int worker) {
    const ChunkJob &job = jobs[j];
    const Chunk &chunk = job.tensor->chunks[job.chunk];
    if (file_) file_->Prefault(chunk.offset, chunk.stored_size());
    if (!StoredChecksumMatches(chunk)) {
      return ChunkError(*job.tensor, job.chunk, Status(TW_DATA_LOSS, "checksum mismatch in the stored bytes"));
    }
    std::unique_ptr<ChunkCodec> &codec = codecs[static_cast<size_t>(worker)];
    if (!codec) codec.reset(new ChunkCodec());
    // Stored bytes that match their checksum but do not decode mean the writer was faulty (or the file
    // was crafted).
    const size_t coded_bytes = ChunkCodec::CodedPlaneBytes(chunk);
    uint8_t *kept = keep != nullptr && coded_bytes != 0 ? keep->Reserve(&chunk, coded_bytes) : nullptr;
    const Status checked =
        codec->Check(data_ + chunk.offset, chunk, job.tensor->dtype, job.tensor->filter, hash_, kept);
    return checked.ok() ? checked : ChunkError(*job.tensor, job.chunk, checked);
  });
}

Status CheckpointReader::ReadInto(const std::vector<Target> &targets, int threads, size_t keep_budget) const {
  std::vector<ChunkJob> jobs;
  for (const Target &target : targets) {
    uint8_t *destination = static_cast<uint8_t *>(target.data);
    for (size_t c = 0; c < target.tensor->chunks.size(); ++c) {
      jobs.push_back(ChunkJob{target.tensor, c, destination});
      destination += target.tensor->chunks[c].raw_size;
    }
  }
  // Pass 1 proves every chunk (stored checksum, frames, sizes, raw checksum) without writing a
  // destination byte; pass 2 decodes again, into the destinations. Decoding twice keeps memory bounded
  // (per-thread scratch of one chunk) where staging would hold a second copy of the model.
  KeptPlanes kept(keep_budget);
  TW_RETURN_IF_ERROR(CheckChunks(jobs, threads, &kept));
  std::vector<std::unique_ptr<ChunkCodec>> codecs(static_cast<size_t>(threads > 0 ? threads : DefaultThreadCount()));
  return ParallelFor(jobs.size(), static_cast<int>(codecs.size()), [&](size_t j, int worker) {
    const ChunkJob &job = jobs[j];
    const Chunk &chunk = job.tensor->chunks[job.chunk];
    std::unique_ptr<ChunkCodec> &codec = codecs[static_cast<size_t>(worker)];
    if (!codec) codec.reset(new ChunkCodec());
    // Only a file changed in place since pass 1 (never done to a checkpoint) could fail here.
    const Status decoded = codec->Decode(data_ + chunk.offset, chunk, job.tensor->dtype, job.tensor->filter, hash_,
                                         job.destination, RawCheck::kTrusted, kept.Find(&chunk),
                                         DestinationStores(chunk.raw_size));
    return decoded.ok() ? decoded : ChunkError(*job.tensor, job.chunk, decoded);
  });
}

Status CheckpointReader::Verify(int threads) const {
  std::vector<ChunkJob> jobs;
  for (const TensorEntry &tensor : tensors_) {
    for (size_t c = 0; c < tensor.chunks.size(); ++c) jobs.push_back(ChunkJob{&tensor, c, nullptr});
  }
  return CheckChunks(jobs, threads, nullptr);
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
  std::unique_ptr<ShardedReader> sharded;
  TW_RETURN_IF_ERROR(ShardedReader::Open(path, &sharded));
  if (sharded != nullptr) {  // whole tensors, as the job declared them; no chunks of their own
    tensors->clear();
    for (const ShardedTensor &tensor : sharded->index().tensors) {
      TensorEntry entry;
      entry.name = tensor.name;
      entry.dtype = tensor.dtype;
      entry.shape = tensor.shape;
      tensors->push_back(std::move(entry));
    }
    return Status();
  }
  std::unique_ptr<CheckpointReader> reader;
  TW_RETURN_IF_ERROR(CheckpointReader::Open(path, &reader));
  *tensors = reader->tensors();
  return Status();
}

Status LoadVariable(const std::string &path, const TensorRef &destination) {
  std::unique_ptr<ShardedReader> sharded;
  TW_RETURN_IF_ERROR(ShardedReader::Open(path, &sharded));
  if (sharded != nullptr) {  // the whole tensor, assembled from the parts holding its boxes
    const ShardedTensor *tensor = sharded->Find(destination.name());
    if (tensor == nullptr) return Status(TW_NOT_FOUND, "Key " + destination.name() + " not found in checkpoint " + path);
    TensorEntry whole;
    whole.dtype = tensor->dtype;
    whole.shape = tensor->shape;
    TW_RETURN_IF_ERROR(CheckRestorable(whole, destination, path));
    // Assembled aside: a part failing half-way leaves the destination untouched.
    std::vector<uint8_t> bytes(destination.byte_size());
    TW_RETURN_IF_ERROR(sharded->ReadBox(*tensor, std::vector<int64_t>(tensor->shape.size(), 0), tensor->shape,
                                        bytes.data()));
    if (!bytes.empty()) std::memcpy(destination.data(), bytes.data(), bytes.size());
    return Status();
  }
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
