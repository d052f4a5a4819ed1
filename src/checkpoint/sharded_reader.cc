#include "checkpoint/sharded_reader.h"

#include <algorithm>
#include <vector>

#include "base/tensor.h"
#include "checkpoint/format.h"

namespace tw {
namespace checkpoint {

void RangeReads::Add(const CheckpointReader *reader, const CheckpointReader::Range &range) {
  for (auto &file : files_) {
    if (file.first == reader) {
      file.second.push_back(range);
      return;
    }
  }
  files_.emplace_back(reader, std::vector<CheckpointReader::Range>{range});
}

Status RangeReads::Prove(int threads) const {
  for (const auto &file : files_) TW_RETURN_IF_ERROR(file.first->ProveRanges(file.second, threads, &kept_));
  return Status();
}

Status RangeReads::Fill(int threads) const {
  for (const auto &file : files_) TW_RETURN_IF_ERROR(file.first->FillRanges(file.second, threads, &kept_));
  return Status();
}

Status ShardedReader::Open(const std::string &path, std::unique_ptr<ShardedReader> *out) {
  out->reset();
  std::unique_ptr<MappedFile> file;
  TW_RETURN_IF_ERROR(MappedFile::Open(path, &file));
  if (!LooksLikeShardIndex(file->data(), file->size())) return Status();
  std::unique_ptr<ShardedReader> reader(new ShardedReader());
  reader->path_ = path;
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos) reader->dir_ = path.substr(0, slash + 1);
  TW_RETURN_IF_ERROR(ParseShardIndex(file->data(), file->size(), path, &reader->index_));
  *out = std::move(reader);
  return Status();
}

const ShardedTensor *ShardedReader::Find(const std::string &name) const {
  for (const ShardedTensor &tensor : index_.tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

Status ShardedReader::Part(uint32_t part, const CheckpointReader **out) {
  auto found = parts_.find(part);
  if (found == parts_.end()) {
    const ShardPart &pinned = index_.parts[part];
    const std::string file = dir_ + pinned.file;
    OpenPart open;
    const Status mapped = MappedFile::Open(file, &open.file);
    if (!mapped.ok()) {
      return Status(TW_DATA_LOSS,
                    "part " + file + " of sharded checkpoint " + path_ + " is unreadable: " + mapped.message());
    }
    Footer footer;
    const uint64_t size = open.file->size();
    if (size != pinned.file_size || size < kFooterSize ||
        !ParseFooter(open.file->data() + size - kFooterSize, size, file, &footer).ok() ||
        footer.index_xxh64 != pinned.index_xxh64) {
      return Status(TW_DATA_LOSS, "part " + file + " is not the one sharded checkpoint " + path_ +
                                      " recorded (size or footer checksum differs)");
    }
    TW_RETURN_IF_ERROR(CheckpointReader::OpenMemory(open.file->data(), size, file, &open.reader));
    found = parts_.emplace(part, std::move(open)).first;
  }
  *out = found->second.reader.get();
  return Status();
}

Status ShardedReader::ReadRows(const ShardedTensor &tensor, int64_t row_begin, int64_t rows, void *data) {
  RangeReads reads;
  TW_RETURN_IF_ERROR(PlanRows(tensor, row_begin, rows, data, &reads));
  TW_RETURN_IF_ERROR(reads.Prove());
  return reads.Fill();
}

Status ShardedReader::PlanRows(const ShardedTensor &tensor, int64_t row_begin, int64_t rows, void *data,
                               RangeReads *reads) {
  const std::vector<int64_t> &shape = tensor.shape;
  const int64_t total_rows = shape.empty() ? 1 : shape[0];
  if (row_begin < 0 || rows < 0 || row_begin > total_rows || rows > total_rows - row_begin) {
    return Status(TW_INVALID_ARGUMENT, "rows out of range of '" + tensor.name + "'");
  }
  if (rows == 0) return Status();
  uint64_t row_bytes = DtypeSize(tensor.dtype);
  for (size_t d = 1; d < shape.size(); ++d) row_bytes *= static_cast<uint64_t>(shape[d]);
  std::vector<int64_t> offset(shape.size(), 0), extent = shape;
  if (!shape.empty()) {
    offset[0] = row_begin;
    extent[0] = rows;
  }
  for (const ShardBox *box : BoxesIntersecting(tensor, offset, extent)) {
    for (size_t d = 1; d < shape.size(); ++d) {
      if (box->offset[d] != 0 || box->extent[d] != shape[d]) {
        return Status(TW_UNIMPLEMENTED, "variable '" + tensor.name + "' of " + path_ +
                                            " is split along a dimension other than the first; only first-dimension "
                                            "slices can be read");
      }
    }
    const CheckpointReader *reader = nullptr;
    TW_RETURN_IF_ERROR(Part(box->part, &reader));
    const TensorEntry *entry = reader->Find(tensor.name);
    if (entry == nullptr || entry->dtype != tensor.dtype || entry->shape != box->extent) {
      return Status(TW_DATA_LOSS,
                    "part " + reader->path() + " does not hold the box of '" + tensor.name + "' its index records");
    }
    const int64_t box_begin = shape.empty() ? 0 : box->offset[0];
    const int64_t box_rows = shape.empty() ? 1 : box->extent[0];
    const int64_t first = std::max(row_begin, box_begin);
    const int64_t last = std::min(row_begin + rows, box_begin + box_rows);
    if (first >= last) continue;
    reads->Add(reader, CheckpointReader::Range{
                           entry, static_cast<uint64_t>(first - box_begin) * row_bytes,
                           static_cast<uint64_t>(last - box_begin) * row_bytes,
                           static_cast<uint8_t *>(data) + static_cast<uint64_t>(first - row_begin) * row_bytes});
  }
  return Status();
}

Status ShardedReader::Verify() {
  for (uint32_t part = 0; part < index_.parts.size(); ++part) {
    const CheckpointReader *reader = nullptr;
    TW_RETURN_IF_ERROR(Part(part, &reader));
    TW_RETURN_IF_ERROR(reader->Verify());
  }
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
