#include "checkpoint/format/format.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "base/tensor.h"
#include "checkpoint/format/wire.h"
#include "checkpoint/format/xxhash64.h"

namespace tw {
namespace checkpoint {
namespace {

constexpr char kHeaderMagic[8] = {'\x89', 'T', 'W', 'C', 'K', 'P', 'T', '\n'};
constexpr char kFooterMagic[8] = {'T', 'W', 'C', 'K', 'E', 'N', 'D', '\n'};

// Smallest encodings, which bound how many entries `remaining` bytes can hold before reserving.
constexpr size_t kMinTensorBytes = 4 + 4 + 4 + 1 + 4;
constexpr size_t kMinChunkBytes = 8 * 4 + 1;

Status Corrupt(const std::string &file, const std::string &what) {
  return Status(TW_DATA_LOSS, "checkpoint " + file + ": " + what);
}

Status ParseTensor(Cursor *in, const std::string &file, uint32_t version, TensorEntry *t) {
  uint32_t name_size = 0, ndim = 0, chunk_count = 0;
  int32_t dtype = 0;
  uint8_t filter = 0;
  if (!in->Get(&name_size) || name_size == 0 || !in->GetString(name_size, &t->name)) {
    return Corrupt(file, "index: bad tensor name");
  }
  auto bad = [&](const std::string &what) { return Corrupt(file, "tensor '" + t->name + "': " + what); };
  if (!in->Get(&dtype) || DtypeSize(dtype) == 0) return bad("bad dtype");
  t->dtype = dtype;
  if (!in->Get(&ndim) || ndim > static_cast<uint32_t>(kMaxRank) || ndim > in->remaining() / 8) {
    return bad("bad rank");
  }
  t->shape.resize(ndim);
  uint64_t elements = 1;
  for (int64_t &extent : t->shape) {
    if (!in->Get(&extent) || extent < 0) return bad("bad extent");
    if (extent != 0 &&
        elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / static_cast<uint64_t>(extent)) {
      return bad("too many elements");
    }
    elements *= static_cast<uint64_t>(extent);
  }
  const uint64_t element_size = DtypeSize(dtype);
  if (elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / element_size) {
    return bad("too many bytes");
  }
  if (!in->Get(&filter) || filter != static_cast<uint8_t>(FilterFor(dtype, version))) return bad("bad filter");
  t->filter = static_cast<Filter>(filter);
  if (!in->Get(&chunk_count) || chunk_count > in->remaining() / kMinChunkBytes) {
    return bad("bad chunk count");
  }
  const int plane_count = PlaneCount(t->filter, dtype);
  t->chunks.resize(chunk_count);
  uint64_t covered = 0;
  for (uint32_t c = 0; c < chunk_count; ++c) {
    Chunk &chunk = t->chunks[c];
    const std::string where = "chunk " + std::to_string(c) + ": ";
    if (!in->Get(&chunk.offset) || !in->Get(&chunk.raw_size) || !in->Get(&chunk.raw_checksum) ||
        !in->Get(&chunk.stored_checksum) || !in->Get(&chunk.plane_count)) {
      return bad(where + "truncated entry");
    }
    if (chunk.raw_size == 0 || chunk.raw_size > kMaxChunkBytes || chunk.raw_size % element_size != 0 ||
        chunk.raw_size > t->byte_size() - covered) {
      return bad(where + "bad raw size");
    }
    covered += chunk.raw_size;
    if (chunk.plane_count != plane_count) return bad(where + "bad plane count");
    const uint64_t plane_raw_size = chunk.raw_size / static_cast<uint64_t>(plane_count);
    for (int p = 0; p < plane_count; ++p) {
      Plane &plane = chunk.planes[p];
      uint8_t codec = 0;
      if (!in->Get(&codec) || !in->Get(&plane.stored_size)) return bad(where + "truncated entry");
      plane.codec = static_cast<Codec>(codec);
      const bool planes = t->filter == Filter::kBytePlanes;
      const bool coded = plane.codec == Codec::kZstd ||
                         (plane.codec == Codec::kHuffman && version >= kFirstHuffmanVersion && planes) ||
                         (plane.codec == Codec::kTiered && version >= kFirstTieredVersion && planes);
      const bool ok = (plane.codec == Codec::kRaw && plane.stored_size == plane_raw_size) ||
                      (coded && plane.stored_size > 0 && plane.stored_size < plane_raw_size);
      if (!ok) return bad(where + "bad plane " + std::to_string(p));
    }
  }
  if (covered != t->byte_size()) return bad("chunks do not cover the tensor");
  return Status();
}

}  // namespace

Status ParseOriginRecord(Cursor *in, const std::string &file, Origin *origin) {
  uint32_t name_size = 0;
  if (!in->Get(&origin->job) || !in->Get(&name_size)) return Corrupt(file, "index: truncated origin");
  if (name_size > kMaxOriginNameBytes || !in->GetString(name_size, &origin->name)) {
    return Corrupt(file, "index: bad origin name");
  }
  return Status();
}

namespace {

Status CheckIndexChecksum(const uint8_t *bytes, const Footer &footer, const std::string &file, uint32_t version) {
  if (Xxh64(bytes, static_cast<size_t>(footer.index_size), IndexChecksumSeed(version)) != footer.index_xxh64) {
    return Corrupt(file, "index checksum mismatch");
  }
  return Status();
}

// Every byte between the header and the index belongs to exactly one chunk.
Status CheckChunksTile(const std::vector<TensorEntry> &tensors, const Footer &footer, const std::string &file) {
  std::vector<std::pair<uint64_t, uint64_t>> extents;  // offset, stored size
  for (const TensorEntry &t : tensors) {
    for (const Chunk &c : t.chunks) extents.emplace_back(c.offset, c.stored_size());
  }
  std::sort(extents.begin(), extents.end());
  uint64_t expected = kHeaderSize;
  for (const auto &extent : extents) {
    if (extent.first != expected || extent.second > footer.index_offset - expected) {
      return Corrupt(file, "index: chunk extents overlap, leave gaps or pass the index");
    }
    expected += extent.second;
  }
  if (expected != footer.index_offset) return Corrupt(file, "index: chunks do not reach the index");
  return Status();
}

}  // namespace

uint64_t Chunk::stored_size() const {
  uint64_t total = 0;
  for (int p = 0; p < plane_count; ++p) total += planes[p].stored_size;
  return total;
}

uint64_t TensorEntry::byte_size() const {
  uint64_t count = 1;
  for (int64_t extent : shape) count *= static_cast<uint64_t>(extent);
  return count * DtypeSize(dtype);
}

Filter FilterFor(int32_t dtype, uint32_t format_version) {
  const bool planes = IsFloatDtype(dtype) || format_version >= kFirstIntegerPlanesVersion;
  return planes && DtypeSize(dtype) > 1 ? Filter::kBytePlanes : Filter::kNone;
}

ChunkHash ChunkHashOf(uint32_t format_version) {
  if (format_version == 1) return ChunkHash::kXxh64;
  return format_version >= kFirstPlaneDigestVersion ? ChunkHash::kXxh3Planes : ChunkHash::kXxh3;
}

int PlaneCount(Filter filter, int32_t dtype) {
  return filter == Filter::kBytePlanes ? static_cast<int>(DtypeSize(dtype)) : 1;
}

void AppendHeader(std::string *out, uint32_t flags) {
  out->append(kHeaderMagic, sizeof(kHeaderMagic));
  Put<uint32_t>(out, kFormatVersion);
  Put<uint32_t>(out, flags);
}

bool IsNoJob(const JobId &job) {
  return std::all_of(job.begin(), job.end(), [](uint8_t b) { return b == 0; });
}

void AppendOrigin(const Origin &origin, std::string *out) {
  out->append(reinterpret_cast<const char *>(origin.job.data()), origin.job.size());
  Put<uint32_t>(out, static_cast<uint32_t>(origin.name.size()));
  out->append(origin.name);
}

void AppendIndex(const Origin &origin, const std::vector<TensorEntry> &tensors, std::string *out) {
  AppendOrigin(origin, out);
  Put<uint32_t>(out, static_cast<uint32_t>(tensors.size()));
  for (const TensorEntry &t : tensors) {
    Put<uint32_t>(out, static_cast<uint32_t>(t.name.size()));
    out->append(t.name);
    Put<int32_t>(out, t.dtype);
    Put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (int64_t extent : t.shape) Put<int64_t>(out, extent);
    Put<uint8_t>(out, static_cast<uint8_t>(t.filter));
    Put<uint32_t>(out, static_cast<uint32_t>(t.chunks.size()));
    for (const Chunk &c : t.chunks) {
      Put<uint64_t>(out, c.offset);
      Put<uint64_t>(out, c.raw_size);
      Put<uint64_t>(out, c.raw_checksum);
      Put<uint64_t>(out, c.stored_checksum);
      Put<uint8_t>(out, c.plane_count);
      for (int p = 0; p < c.plane_count; ++p) {
        Put<uint8_t>(out, static_cast<uint8_t>(c.planes[p].codec));
        Put<uint64_t>(out, c.planes[p].stored_size);
      }
    }
  }
}

void AppendFooter(const Footer &footer, std::string *out) {
  Put<uint64_t>(out, footer.index_offset);
  Put<uint64_t>(out, footer.index_size);
  Put<uint64_t>(out, footer.index_xxh64);
  out->append(kFooterMagic, sizeof(kFooterMagic));
}

#ifndef TW_LEGACY_FORMATS
#error "TW_LEGACY_FORMATS (0 or 1) comes from the build option legacy_formats (src/checkpoint/format/meson.build)"
#endif
bool ReadsLegacyFormats() { return TW_LEGACY_FORMATS != 0; }

Status ParseHeader(const uint8_t *bytes, uint64_t file_size, const std::string &file, uint32_t expected_flags,
                   uint32_t *version_out) {
  if (file_size < kHeaderSize + kFooterSize) {
    return Corrupt(file, "file is " + std::to_string(file_size) + " bytes, too short for a checkpoint");
  }
  if (std::memcmp(bytes, kHeaderMagic, sizeof(kHeaderMagic)) != 0) {
    return Corrupt(file, "not a trainwatch checkpoint (bad magic)");
  }
  uint32_t version = 0, flags = 0;
  std::memcpy(&version, bytes + 8, 4);
  std::memcpy(&flags, bytes + 12, 4);
  if (version >= kOldestFormatVersion && version < kFormatVersion && !ReadsLegacyFormats()) {
    return Status(TW_UNIMPLEMENTED,
                  "checkpoint " + file + " is format version " + std::to_string(version) +
                      ", written before trainwatch 1.0; this trainwatch reads format " +
                      std::to_string(kFormatVersion) +
                      " only (built with -Dlegacy_formats=false): convert it with `trainwatch-ckpt upgrade " + file +
                      " NEW` from a trainwatch built with legacy formats");
  }
  if (version < kOldestFormatVersion || version > kFormatVersion) {
    return Corrupt(file, "format version " + std::to_string(version) + " (this library reads versions " +
                             std::to_string(kOldestFormatVersion) + " to " + std::to_string(kFormatVersion) +
                             "; corrupt, or written by a newer trainwatch)");
  }
  if (flags != expected_flags) {
    if (flags == kHeaderFlagShardIndex)
      return Corrupt(file, "the index of a sharded checkpoint, not a checkpoint file");
    if (expected_flags == kHeaderFlagShardIndex && flags == 0) {
      return Corrupt(file, "a single checkpoint file, not the index of a sharded checkpoint");
    }
    return Corrupt(file, "unknown header flags " + std::to_string(flags));
  }
  if (version_out != nullptr) *version_out = version;
  return Status();
}

Status ParseFooter(const uint8_t *bytes, uint64_t file_size, const std::string &file, Footer *footer) {
  if (std::memcmp(bytes + 24, kFooterMagic, sizeof(kFooterMagic)) != 0) {
    return Corrupt(file, "no footer (truncated, or still being written)");
  }
  Footer f;
  std::memcpy(&f.index_offset, bytes, 8);
  std::memcpy(&f.index_size, bytes + 8, 8);
  std::memcpy(&f.index_xxh64, bytes + 16, 8);
  const uint64_t index_end = file_size - kFooterSize;
  if (f.index_offset < kHeaderSize || f.index_offset > index_end || f.index_size != index_end - f.index_offset) {
    return Corrupt(file, "footer points outside the file");
  }
  *footer = f;
  return Status();
}

Status ParseIndex(const uint8_t *bytes, const Footer &footer, const std::string &file,
                  std::vector<TensorEntry> *tensors, uint32_t version, Origin *origin) {
  const size_t size = static_cast<size_t>(footer.index_size);
  TW_RETURN_IF_ERROR(CheckIndexChecksum(bytes, footer, file, version));
  Cursor in(bytes, size);
  Origin parsed_origin;
  if (version >= kFirstOriginVersion) TW_RETURN_IF_ERROR(ParseOriginRecord(&in, file, &parsed_origin));
  uint32_t count = 0;
  if (!in.Get(&count) || count > in.remaining() / kMinTensorBytes) return Corrupt(file, "index: bad tensor count");
  std::vector<TensorEntry> parsed(count);
  std::unordered_set<std::string> names;
  for (TensorEntry &t : parsed) {
    TW_RETURN_IF_ERROR(ParseTensor(&in, file, version, &t));
    if (!names.insert(t.name).second) return Corrupt(file, "index: tensor '" + t.name + "' appears twice");
  }
  if (in.remaining() != 0) return Corrupt(file, "index: trailing bytes");
  TW_RETURN_IF_ERROR(CheckChunksTile(parsed, footer, file));
  *tensors = std::move(parsed);
  if (origin != nullptr) *origin = std::move(parsed_origin);
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
