#include "checkpoint/sharded/sharded_reader.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "base/tensor.h"
#include "checkpoint/format/format.h"

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

void RangeReads::AddBox(const CheckpointReader *reader, const TensorEntry *entry,
                        const std::vector<int64_t> &stored_offset, const std::vector<int64_t> &wanted_offset,
                        const std::vector<int64_t> &wanted_extent, void *data) {
  const std::vector<int64_t> &stored_extent = entry->shape;
  const size_t ndim = stored_extent.size();
  std::vector<int64_t> begin(ndim), count(ndim);  // the intersection, in global coordinates
  for (size_t d = 0; d < ndim; ++d) {
    begin[d] = std::max(stored_offset[d], wanted_offset[d]);
    count[d] = std::min(stored_offset[d] + stored_extent[d], wanted_offset[d] + wanted_extent[d]) - begin[d];
    if (count[d] <= 0) return;
  }
  const size_t element_size = DtypeSize(entry->dtype);
  uint64_t row_bytes = element_size;  // of the stored box
  bool rows_alike = true;             // both boxes whole along every other dimension: rows are contiguous in both
  for (size_t d = 1; d < ndim; ++d) {
    row_bytes *= static_cast<uint64_t>(stored_extent[d]);
    rows_alike = rows_alike && stored_offset[d] == wanted_offset[d] && stored_extent[d] == wanted_extent[d];
  }
  const int64_t first = ndim == 0 ? 0 : begin[0] - stored_offset[0];
  const int64_t rows = ndim == 0 ? 1 : count[0];
  const uint64_t from = static_cast<uint64_t>(first) * row_bytes, to = from + static_cast<uint64_t>(rows) * row_bytes;
  if (rows_alike) {
    const int64_t skip = ndim == 0 ? 0 : begin[0] - wanted_offset[0];
    Add(reader, CheckpointReader::Range{entry, from, to, static_cast<uint8_t *>(data) + skip * row_bytes});
    return;
  }
  aside_.emplace_back(static_cast<size_t>(to - from));
  Add(reader, CheckpointReader::Range{entry, from, to, aside_.back().data()});
  BoxCopy copy{aside_.back().data(),
               stored_extent,
               {},
               static_cast<uint8_t *>(data),
               wanted_extent,
               {},
               count,
               element_size,
               std::vector<int64_t>(ndim, 0)};
  copy.from_extent[0] = rows;
  for (size_t d = 0; d < ndim; ++d) {
    copy.from_begin.push_back(d == 0 ? 0 : begin[d] - stored_offset[d]);
    copy.to_begin.push_back(begin[d] - wanted_offset[d]);
  }
  copies_.push_back(std::move(copy));
}

Status RangeReads::Prove(int threads, Progress *progress) const {
  if (progress != nullptr) {
    for (const auto &file : files_) progress->Expect(file.first->ProvenBytes(file.second));
  }
  for (const auto &file : files_) TW_RETURN_IF_ERROR(file.first->ProveRanges(file.second, threads, &kept_, progress));
  fill_.clear();
  try {
    for (const auto &file : files_) TW_RETURN_IF_ERROR(file.first->PlanFill(file.second, &fill_));
  } catch (const std::bad_alloc &) {
    return Status(TW_RESOURCE_EXHAUSTED, "out of memory planning a checkpoint read");
  }
  return CheckpointReader::ReserveFill(fill_, threads, &kept_, &resources_);
}

namespace {

// Element offset of `index` + `begin` in a C-order array of `extent`.
int64_t Flat(const std::vector<int64_t> &extent, const std::vector<int64_t> &begin, const std::vector<int64_t> &index) {
  int64_t flat = 0;
  for (size_t d = 0; d < extent.size(); ++d) flat = flat * extent[d] + begin[d] + index[d];
  return flat;
}

}  // namespace

Status RangeReads::Fill() const {
  TW_RETURN_IF_ERROR(CheckpointReader::FillJobs(fill_, &resources_, &kept_));
  // Box copies have at least 2 dimensions (boxes of fewer are always rows alike): runs along the last one.
  for (const BoxCopy &c : copies_) {
    const size_t last = c.count.size() - 1;
    const size_t run = static_cast<size_t>(c.count[last]) * c.element_size;
    std::vector<int64_t> &index = c.index;
    std::fill(index.begin(), index.end(), 0);
    for (;;) {
      std::memcpy(c.to + static_cast<size_t>(Flat(c.to_extent, c.to_begin, index)) * c.element_size,
                  c.from + static_cast<size_t>(Flat(c.from_extent, c.from_begin, index)) * c.element_size, run);
      size_t d = last;
      while (d-- > 0 && ++index[d] == c.count[d]) index[d] = 0;
      if (d == static_cast<size_t>(-1)) break;
    }
  }
  return Status();
}

Status ShardedReader::Open(const std::string &path, std::unique_ptr<ShardedReader> *out) {
  out->reset();
  std::unique_ptr<PrivateFile> file;
  TW_RETURN_IF_ERROR(PrivateFile::Open(path, &file));
  if (file->size() < kHeaderSize + kFooterSize) return Status();  // not an index; the reader says what it is
  TW_RETURN_IF_ERROR(file->Load(0, kHeaderSize));
  if (!LooksLikeShardIndex(file->data(), file->size())) return Status();
  TW_RETURN_IF_ERROR(file->Load(0, file->size()));  // an index is metadata only: read whole
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
    std::unique_ptr<PrivateFile> opened;
    Status status = PrivateFile::Open(file, &opened);
    if (status.ok() && opened->size() == pinned.file_size && opened->size() >= kFooterSize) {
      status = opened->Load(opened->size() - kFooterSize, kFooterSize);  // short: truncated, TW_DATA_LOSS
    }
    if (!status.ok()) {
      // A part missing or not a regular file damages the checkpoint; a failure for lack of memory,
      // address space or descriptors, or an I/O error, says nothing about it (restore_failure.h).
      const bool gone = status.code() == TW_NOT_FOUND || status.code() == TW_INVALID_ARGUMENT;
      return Status(gone ? TW_DATA_LOSS : status.code(),
                    "part " + file + " of sharded checkpoint " + path_ + " is unreadable: " + status.message());
    }
    const Status other(TW_DATA_LOSS, "part " + file + " is not the one sharded checkpoint " + path_ +
                                         " recorded (size or footer checksum differs)");
    Footer footer;
    const uint64_t size = opened->size();
    if (size != pinned.file_size || size < kFooterSize ||
        !ParseFooter(opened->data() + size - kFooterSize, size, file, &footer).ok() ||
        footer.index_xxh64 != pinned.index_xxh64) {
      return other;
    }
    TW_RETURN_IF_ERROR(CheckpointReader::OpenFile(std::move(opened), file, &open.reader));
    // The reader read the footer again: the index it parsed must be the pinned one too.
    if (open.reader->index_checksum() != pinned.index_xxh64) return other;
    found = parts_.emplace(part, std::move(open)).first;
  }
  *out = found->second.reader.get();
  return Status();
}

Status ShardedReader::ReadBox(const ShardedTensor &tensor, const std::vector<int64_t> &offset,
                              const std::vector<int64_t> &extent, void *data) {
  RangeReads reads;
  TW_RETURN_IF_ERROR(PlanBox(tensor, offset, extent, data, &reads));
  TW_RETURN_IF_ERROR(reads.Prove());
  return reads.Fill();
}

Status ShardedReader::PlanBox(const ShardedTensor &tensor, const std::vector<int64_t> &offset,
                              const std::vector<int64_t> &extent, void *data, RangeReads *reads) {
  const std::vector<int64_t> &shape = tensor.shape;
  bool inside = offset.size() == shape.size() && extent.size() == shape.size();
  for (size_t d = 0; inside && d < shape.size(); ++d) {
    inside = offset[d] >= 0 && extent[d] >= 0 && offset[d] <= shape[d] && extent[d] <= shape[d] - offset[d];
  }
  if (!inside) return Status(TW_INVALID_ARGUMENT, "box out of range of '" + tensor.name + "'");
  for (int64_t e : extent) {
    if (e == 0) return Status();
  }
  for (const ShardBox *box : BoxesIntersecting(tensor, offset, extent)) {
    const CheckpointReader *reader = nullptr;
    TW_RETURN_IF_ERROR(Part(box->part, &reader));
    const TensorEntry *entry = reader->Find(tensor.name);
    if (entry == nullptr || entry->dtype != tensor.dtype || entry->shape != box->extent) {
      return Status(TW_DATA_LOSS,
                    "part " + reader->path() + " does not hold the box of '" + tensor.name + "' its index records");
    }
    reads->AddBox(reader, entry, box->offset, offset, extent, data);
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
