#include "checkpoint/sharded/shard_index.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <unordered_set>

#include "base/tensor.h"
#include "checkpoint/format/wire.h"
#include "checkpoint/format/xxhash64.h"
#include "checkpoint/io/path.h"

namespace tw {
namespace checkpoint {
namespace {

Status Corrupt(const std::string &file, const std::string &what) {
  return Status(TW_DATA_LOSS, "sharded checkpoint index " + file + ": " + what);
}

// Smallest encodings, which bound how many entries the remaining bytes can hold.
constexpr size_t kMinPartBytes = 4 + 1 + 8 + 8;
constexpr size_t kMinTensorBytes = 4 + 1 + 4 + 4 + 4;
constexpr size_t kMinBoxBytes = 4;

// Element count of a box or shape; false when it does not fit int64.
bool Volume(const std::vector<int64_t> &extent, uint64_t *out) {
  uint64_t v = 1;
  for (int64_t e : extent) {
    if (e != 0 && v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / static_cast<uint64_t>(e)) {
      return false;
    }
    v *= static_cast<uint64_t>(e);
  }
  *out = v;
  return true;
}

bool Disjoint(const ShardBox &a, const ShardBox &b) {
  for (size_t d = 0; d < a.offset.size(); ++d) {
    if (a.offset[d] + a.extent[d] <= b.offset[d] || b.offset[d] + b.extent[d] <= a.offset[d]) return true;
  }
  return false;
}

// The boxes cover the tensor exactly once. Each box lies inside the tensor (checked by the caller) and
// is not empty, so the volumes summing to the tensor's plus no two boxes overlapping is a tiling.
Status CheckTiling(const ShardedTensor &t, const std::string &file) {
  auto bad = [&](const std::string &what) { return Corrupt(file, "tensor '" + t.name + "': " + what); };
  uint64_t total = 0;
  if (!Volume(t.shape, &total)) return bad("too many elements");
  uint64_t covered = 0;
  for (const ShardBox &box : t.boxes) {
    uint64_t v = 0;
    Volume(box.extent, &v);  // inside the tensor, so it fits
    if (v > total - covered) return bad("boxes cover more than the tensor");
    covered += v;
  }
  if (covered != total) return bad("boxes leave part of the tensor uncovered");
  bool slices = true;  // every extent past the first is whole
  for (const ShardBox &box : t.boxes) {
    for (size_t d = 1; d < t.shape.size(); ++d) slices = slices && box.extent[d] == t.shape[d];
  }
  if (slices && !t.shape.empty()) {
    std::vector<const ShardBox *> sorted;
    for (const ShardBox &box : t.boxes) sorted.push_back(&box);
    std::sort(sorted.begin(), sorted.end(),
              [](const ShardBox *a, const ShardBox *b) { return a->offset[0] < b->offset[0]; });
    for (size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i - 1]->offset[0] + sorted[i - 1]->extent[0] > sorted[i]->offset[0]) return bad("boxes overlap");
    }
    return Status();
  }
  if (t.boxes.size() > kMaxNdBoxes) return bad("more than " + std::to_string(kMaxNdBoxes) + " N-d boxes");
  for (size_t i = 0; i < t.boxes.size(); ++i) {
    for (size_t j = i + 1; j < t.boxes.size(); ++j) {
      if (!Disjoint(t.boxes[i], t.boxes[j])) return bad("boxes overlap");
    }
  }
  return Status();
}

Status ParseTensor(Cursor *in, const std::string &file, uint32_t part_count, ShardedTensor *t) {
  uint32_t name_size = 0, ndim = 0, box_count = 0;
  if (!in->Get(&name_size) || name_size == 0 || !in->GetString(name_size, &t->name)) {
    return Corrupt(file, "bad tensor name");
  }
  auto bad = [&](const std::string &what) { return Corrupt(file, "tensor '" + t->name + "': " + what); };
  if (!in->Get(&t->dtype) || DtypeSize(t->dtype) == 0) return bad("bad dtype");
  if (!in->Get(&ndim) || ndim > static_cast<uint32_t>(kMaxRank) || ndim > in->remaining() / 8) return bad("bad rank");
  t->shape.resize(ndim);
  for (int64_t &extent : t->shape) {
    if (!in->Get(&extent) || extent < 0) return bad("bad extent");
  }
  const size_t box_bytes = kMinBoxBytes + 16 * static_cast<size_t>(ndim);
  if (!in->Get(&box_count) || box_count > in->remaining() / box_bytes) return bad("bad box count");
  t->boxes.resize(box_count);
  for (uint32_t b = 0; b < box_count; ++b) {
    ShardBox &box = t->boxes[b];
    const std::string where = "box " + std::to_string(b) + ": ";
    if (!in->Get(&box.part)) return bad(where + "truncated");
    if (box.part >= part_count)
      return bad(where + "names part " + std::to_string(box.part) + " of " + std::to_string(part_count));
    box.offset.resize(ndim);
    box.extent.resize(ndim);
    for (uint32_t d = 0; d < ndim; ++d) {
      if (!in->Get(&box.offset[d]) || !in->Get(&box.extent[d])) return bad(where + "truncated");
      if (box.offset[d] < 0 || box.extent[d] <= 0 || box.extent[d] > t->shape[d] ||
          box.offset[d] > t->shape[d] - box.extent[d]) {
        return bad(where + "outside the tensor in dimension " + std::to_string(d));
      }
    }
  }
  return CheckTiling(*t, file);
}

}  // namespace

Status CheckShardSpec(const ShardSpec &spec, const std::vector<int64_t> &extent, const std::string &variable) {
  if (extent.empty()) {
    return Status(TW_INVALID_ARGUMENT,
                  "shard '" + variable + "' is a scalar: only tensors of rank >= 1 can be sharded");
  }
  if (spec.global_shape.size() != extent.size() || spec.offset.size() != extent.size()) {
    return Status(TW_INVALID_ARGUMENT,
                  "shard '" + variable + "': global_shape and offset need one entry per dimension");
  }
  for (size_t d = 0; d < extent.size(); ++d) {
    const int64_t global = spec.global_shape[d], offset = spec.offset[d];
    if (global < 0 || offset < 0 || offset > global || extent[d] > global - offset) {
      return Errorf(TW_INVALID_ARGUMENT,
                    "shard '%s' dimension %zu: the box [%lld, %lld + %lld) is not inside the global extent %lld",
                    variable.c_str(), d, static_cast<long long>(offset), static_cast<long long>(offset),
                    static_cast<long long>(extent[d]), static_cast<long long>(global));
    }
  }
  uint64_t elements = 0;
  if (!Volume(spec.global_shape, &elements)) {
    return Status(TW_INVALID_ARGUMENT, "shard '" + variable + "': the global shape has more elements than int64 holds");
  }
  return Status();
}

std::string PartFileName(const std::string &checkpoint_name, uint32_t part, uint32_t part_count) {
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".part-%05u-of-%05u", part, part_count);
  return checkpoint_name + suffix;
}

bool ParsePartFileName(const std::string &name, std::string *checkpoint_name, uint32_t *part) {
  static const char kPart[] = ".part-";
  constexpr size_t kSuffix = 6 + 5 + 4 + 5;  // ".part-" i "-of-" n
  if (name.size() <= kSuffix) return false;
  const size_t at = name.size() - kSuffix;
  if (name.compare(at, 6, kPart) != 0 || name.compare(at + 11, 4, "-of-") != 0) return false;
  for (size_t k : {at + 6, at + 15}) {
    for (size_t c = k; c < k + 5; ++c) {
      if (name[c] < '0' || name[c] > '9') return false;
    }
  }
  if (checkpoint_name != nullptr) *checkpoint_name = name.substr(0, at);
  if (part != nullptr) {
    *part = 0;
    for (size_t c = at + 6; c < at + 11; ++c) *part = *part * 10 + static_cast<uint32_t>(name[c] - '0');
  }
  return true;
}

bool LooksLikeShardIndex(const uint8_t *bytes, uint64_t size) {
  return size >= kHeaderSize + kFooterSize && ParseHeader(bytes, size, "", kHeaderFlagShardIndex).ok();
}

void EncodeShardIndex(const ShardIndex &index, std::string *file_bytes) {
  std::string body;
  AppendOrigin(index.origin, &body);
  Put<uint32_t>(&body, static_cast<uint32_t>(index.parts.size()));
  for (const ShardPart &part : index.parts) {
    Put<uint32_t>(&body, static_cast<uint32_t>(part.file.size()));
    body.append(part.file);
    Put<uint64_t>(&body, part.file_size);
    Put<uint64_t>(&body, part.index_xxh64);
  }
  Put<uint32_t>(&body, static_cast<uint32_t>(index.tensors.size()));
  for (const ShardedTensor &t : index.tensors) {
    Put<uint32_t>(&body, static_cast<uint32_t>(t.name.size()));
    body.append(t.name);
    Put<int32_t>(&body, t.dtype);
    Put<uint32_t>(&body, static_cast<uint32_t>(t.shape.size()));
    for (int64_t extent : t.shape) Put<int64_t>(&body, extent);
    Put<uint32_t>(&body, static_cast<uint32_t>(t.boxes.size()));
    for (const ShardBox &box : t.boxes) {
      Put<uint32_t>(&body, box.part);
      for (size_t d = 0; d < box.offset.size(); ++d) {
        Put<int64_t>(&body, box.offset[d]);
        Put<int64_t>(&body, box.extent[d]);
      }
    }
  }
  file_bytes->clear();
  AppendHeader(file_bytes, kHeaderFlagShardIndex);
  Footer footer;
  footer.index_offset = kHeaderSize;
  footer.index_size = body.size();
  footer.index_xxh64 =
      Xxh64(reinterpret_cast<const uint8_t *>(body.data()), body.size(), IndexChecksumSeed(kFormatVersion));
  file_bytes->append(body);
  AppendFooter(footer, file_bytes);
}

Status ParseShardIndex(const uint8_t *bytes, uint64_t size, const std::string &file, ShardIndex *index) {
  uint32_t version = 0;
  TW_RETURN_IF_ERROR(ParseHeader(bytes, size, file, kHeaderFlagShardIndex, &version));
  Footer footer;
  TW_RETURN_IF_ERROR(ParseFooter(bytes + size - kFooterSize, size, file, &footer));
  if (footer.index_offset != kHeaderSize) return Corrupt(file, "the index does not follow the header");
  const uint8_t *body = bytes + footer.index_offset;
  const size_t body_size = static_cast<size_t>(footer.index_size);
  if (Xxh64(body, body_size, IndexChecksumSeed(version)) != footer.index_xxh64)
    return Corrupt(file, "checksum mismatch");
  Cursor in(body, body_size);
  ShardIndex parsed;
  if (version >= kFirstOriginVersion) TW_RETURN_IF_ERROR(ParseOriginRecord(&in, file, &parsed.origin));
  uint32_t part_count = 0;
  if (!in.Get(&part_count) || part_count == 0 || part_count > kMaxParts ||
      part_count > in.remaining() / kMinPartBytes) {
    return Corrupt(file, "bad part count");
  }
  const std::string base = Basename(file);
  parsed.parts.resize(part_count);
  for (uint32_t p = 0; p < part_count; ++p) {
    ShardPart &part = parsed.parts[p];
    uint32_t name_size = 0;
    if (!in.Get(&name_size) || !in.GetString(name_size, &part.file) || !in.Get(&part.file_size) ||
        !in.Get(&part.index_xxh64)) {
      return Corrupt(file, "part " + std::to_string(p) + ": truncated");
    }
    // Only the names the writer gives: a crafted index cannot point a reader anywhere else.
    if (part.file != PartFileName(base, p, part_count)) {
      return Corrupt(file, "part " + std::to_string(p) + " is named '" + part.file + "', expected '" +
                               PartFileName(base, p, part_count) + "'");
    }
  }
  uint32_t tensor_count = 0;
  if (!in.Get(&tensor_count) || tensor_count > in.remaining() / kMinTensorBytes) {
    return Corrupt(file, "bad tensor count");
  }
  parsed.tensors.resize(tensor_count);
  std::unordered_set<std::string> names;
  for (ShardedTensor &t : parsed.tensors) {
    TW_RETURN_IF_ERROR(ParseTensor(&in, file, part_count, &t));
    if (!names.insert(t.name).second) return Corrupt(file, "tensor '" + t.name + "' appears twice");
  }
  if (in.remaining() != 0) return Corrupt(file, "trailing bytes");
  *index = std::move(parsed);
  return Status();
}

std::vector<const ShardBox *> BoxesIntersecting(const ShardedTensor &tensor, const std::vector<int64_t> &offset,
                                                const std::vector<int64_t> &extent) {
  std::vector<const ShardBox *> hits;
  for (const ShardBox &box : tensor.boxes) {
    bool meets = box.offset.size() == offset.size();
    for (size_t d = 0; meets && d < offset.size(); ++d) {
      meets = box.offset[d] < offset[d] + extent[d] && offset[d] < box.offset[d] + box.extent[d];
    }
    if (meets) hits.push_back(&box);
  }
  return hits;
}

}  // namespace checkpoint
}  // namespace tw
