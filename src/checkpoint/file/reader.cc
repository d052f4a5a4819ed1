#include "checkpoint/file/reader.h"

#include <cstring>
#include <unordered_set>

#include "checkpoint/codec/codec.h"
#include "checkpoint/codec/kept_planes.h"
#include "checkpoint/format/checksum.h"
#include "checkpoint/io/parallel.h"

namespace tw {
namespace checkpoint {

Status CheckpointReader::Open(const std::string &path, std::unique_ptr<CheckpointReader> *out) {
  std::unique_ptr<PrivateFile> file;
  TW_RETURN_IF_ERROR(PrivateFile::Open(path, &file));
  return OpenFile(std::move(file), path, out);
}

Status CheckpointReader::OpenFile(std::unique_ptr<PrivateFile> file, const std::string &path,
                                  std::unique_ptr<CheckpointReader> *out) {
  std::unique_ptr<CheckpointReader> reader(new CheckpointReader());
  reader->path_ = path;
  reader->file_ = std::move(file);
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

// A file's header, footer and index are read (Load) just before they are parsed; chunks when proven.
Status CheckpointReader::Parse() {
  uint32_t version = 0;
  if (file_ && size_ >= kHeaderSize + kFooterSize) {
    TW_RETURN_IF_ERROR(file_->Load(0, kHeaderSize));
    TW_RETURN_IF_ERROR(file_->Load(size_ - kFooterSize, kFooterSize));
  }
  TW_RETURN_IF_ERROR(ParseHeader(data_, size_, path_, 0, &version));
  hash_ = ChunkHashOf(version);
  Footer footer;
  TW_RETURN_IF_ERROR(ParseFooter(data_ + size_ - kFooterSize, size_, path_, &footer));
  if (file_) TW_RETURN_IF_ERROR(file_->Load(footer.index_offset, footer.index_size));
  TW_RETURN_IF_ERROR(ParseIndex(data_ + footer.index_offset, footer, path_, &tensors_, version, &origin_));
  index_checksum_ = footer.index_xxh64;
  for (size_t i = 0; i < tensors_.size(); ++i) by_name_.emplace(tensors_[i].name, i);
  return Status();
}

const TensorEntry *CheckpointReader::Find(const std::string &name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

Status CheckpointReader::ChunkError(const TensorEntry &tensor, size_t chunk, const Status &cause) const {
  return Status(cause.code(), "checkpoint " + path_ + ": tensor '" + tensor.name + "' chunk " + std::to_string(chunk) +
                                  " of " + std::to_string(tensor.chunks.size()) + ": " + cause.message());
}

bool CheckpointReader::StoredChecksumMatches(const Chunk &chunk) const {
  return StoredChecksum(hash_, data_ + chunk.offset, chunk) == chunk.stored_checksum;
}

Status CheckpointReader::CheckChunks(const std::vector<ChunkJob> &jobs, int threads, KeptPlanes *keep, bool release,
                                     Progress *progress) const {
  // Each chunk once: a chunk read into the buffer again while another worker proves it would change
  // the bytes under the proof.
  std::vector<ChunkJob> unique;
  unique.reserve(jobs.size());
  std::unordered_set<const Chunk *> seen;
  for (const ChunkJob &job : jobs) {
    if (seen.insert(&job.tensor->chunks[job.chunk]).second) unique.push_back(job);
  }
  if (keep != nullptr) {
    size_t bytes = 0;
    for (const ChunkJob &job : unique) bytes += ChunkCodec::CodedPlaneBytes(job.tensor->chunks[job.chunk]);
    keep->Expect(bytes, unique.size());
  }
  std::vector<std::unique_ptr<ChunkCodec>> codecs(static_cast<size_t>(threads > 0 ? threads : DefaultThreadCount()));
  return ParallelFor(unique.size(), static_cast<int>(codecs.size()), [&](size_t j, int worker) {
    const ChunkJob &job = unique[j];
    const Chunk &chunk = job.tensor->chunks[job.chunk];
    if (file_) {
      const Status loaded = file_->Load(chunk.offset, chunk.stored_size());
      if (!loaded.ok()) return ChunkError(*job.tensor, job.chunk, loaded);
    }
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
    if (release && file_) file_->Release(chunk.offset, chunk.stored_size());
    if (!checked.ok()) return ChunkError(*job.tensor, job.chunk, checked);
    if (progress != nullptr) progress->Add(chunk.raw_size);
    return Status();
  });
}

Status CheckpointReader::ReadInto(const std::vector<Target> &targets, int threads, size_t keep_budget) const {
  // Pass 1 proves every chunk (stored checksum, frames, sizes, raw checksum) without writing a
  // destination byte; pass 2 decodes again, into the destinations. Decoding twice keeps memory bounded
  // (per-thread scratch of one chunk) where staging would hold a second copy of the model.
  std::vector<Range> ranges;
  ranges.reserve(targets.size());
  for (const Target &target : targets)
    ranges.push_back(Range{target.tensor, 0, target.tensor->byte_size(), target.data});
  KeptPlanes kept(keep_budget);
  TW_RETURN_IF_ERROR(ProveRanges(ranges, threads, &kept));
  return FillRanges(ranges, threads, &kept);
}

Status CheckpointReader::Verify(int threads) const {
  std::vector<ChunkJob> jobs;
  for (const TensorEntry &tensor : tensors_) {
    for (size_t c = 0; c < tensor.chunks.size(); ++c) jobs.push_back(ChunkJob{&tensor, c});
  }
  return CheckChunks(jobs, threads, nullptr, true);
}

std::string Describe(int32_t dtype, const std::vector<int64_t> &shape) {
  std::string text = std::string(DtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

Status CheckRestorable(const TensorEntry &tensor, const TensorRef &destination, const std::string &file) {
  if (tensor.dtype == destination.dtype() && tensor.shape == destination.shape()) return Status();
  return Status(TW_INVALID_ARGUMENT, "variable '" + destination.name() + "' is " +
                                         Describe(destination.dtype(), destination.shape()) + " but checkpoint " +
                                         file + " holds " + Describe(tensor.dtype, tensor.shape));
}

}  // namespace checkpoint
}  // namespace tw
