#include "checkpoint/codec/codec.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_literalCompressionMode (an experimental parameter; see below)
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "base/tensor.h"
#include "checkpoint/codec/huffman.h"
#include "checkpoint/codec/plane_choice.h"
#include "checkpoint/codec/tiered.h"
#include "checkpoint/format/checksum.h"

namespace tw {
namespace checkpoint {
namespace {

// Fixed element sizes let the compiler turn the byte gather/scatter into vector shuffles.
template <size_t kSize>
void SplitFixed(const uint8_t *elements, size_t count, uint8_t *planes) {
  for (size_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < kSize; ++k) planes[k * count + i] = elements[i * kSize + k];
  }
}

template <size_t kSize>
void SplitFixed(const uint8_t *__restrict elements, size_t count, uint8_t *const *planes) {
  uint8_t *__restrict plane[kSize];
  for (size_t k = 0; k < kSize; ++k) plane[k] = planes[k];
  for (size_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < kSize; ++k) plane[k][i] = elements[i * kSize + k];
  }
}

// Planes come as pointers: a decoder joins planes stored raw straight from the file.
template <size_t kSize>
void JoinFixed(const uint8_t *const *planes, size_t count, uint8_t *__restrict elements) {
  const uint8_t *__restrict plane[kSize];
  for (size_t k = 0; k < kSize; ++k) plane[k] = planes[k];
  for (size_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < kSize; ++k) elements[i * kSize + k] = plane[k][i];
  }
}

Status RawChecksumMismatch() { return Status(TW_DATA_LOSS, "checksum mismatch after decoding"); }

ZSTD_CCtx *NewCompressor(int level, bool float_planes) {
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  if (cctx == nullptr) throw std::bad_alloc();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  if (float_planes) {
    // A plane of float bytes has almost no repeated strings: its gain is Huffman coding of skewed
    // exponent bytes. A tiny match finder that only takes long matches makes zstd ~2× faster on it
    // and slightly smaller (fewer useless short matches).
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, 6);  // ZSTD_HASHLOG_MIN
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, 7);
    // Nearly all of the time left is Huffman coding of the literals; the match finder's share (~1/5)
    // shrinks to almost nothing when it samples sparsely (targetLength is the fast strategy's
    // acceleration, as negative levels use), at no cost in size on such planes (measured: 0.3391 vs
    // 0.3397 of the plane). A non-zero targetLength would also turn literal compression off (zstd's
    // "auto" mode), so force it on — and if this libzstd refuses that experimental parameter, keep
    // the default sampling rather than store exponent planes uncompressed.
    if (!ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_literalCompressionMode, ZSTD_ps_enable))) {
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_targetLength, 256);
    }
  }
  return cctx;
}

}  // namespace

void SplitBytePlanes(const uint8_t *elements, size_t count, size_t element_size, uint8_t *planes) {
  if (count == 0) return;  // empty tensors may come with NULL buffers, which memcpy must not see
  switch (element_size) {
    case 2: return SplitFixed<2>(elements, count, planes);
    case 4: return SplitFixed<4>(elements, count, planes);
    case 8: return SplitFixed<8>(elements, count, planes);
    default: std::memcpy(planes, elements, count * element_size);
  }
}

void SplitBytePlanes(const uint8_t *elements, size_t count, size_t element_size, uint8_t *const *planes) {
  if (count == 0 || SplitPlanesVector(elements, count, element_size, planes)) return;
  switch (element_size) {
    case 2: return SplitFixed<2>(elements, count, planes);
    case 4: return SplitFixed<4>(elements, count, planes);
    case 8: return SplitFixed<8>(elements, count, planes);
    default: std::memcpy(planes[0], elements, count * element_size);
  }
}

void JoinBytePlanes(const uint8_t *planes, size_t count, size_t element_size, uint8_t *elements) {
  const uint8_t *pointers[kMaxPlanes];
  for (size_t k = 0; k < element_size && k < kMaxPlanes; ++k) pointers[k] = planes + k * count;
  JoinBytePlanes(pointers, count, element_size, elements);
}

void JoinBytePlanes(const uint8_t *const *planes, size_t count, size_t element_size, uint8_t *elements,
                    JoinStores stores) {
  if (count == 0 || JoinPlanesVector(planes, count, element_size, elements, stores)) return;
  switch (element_size) {
    case 2: return JoinFixed<2>(planes, count, elements);
    case 4: return JoinFixed<4>(planes, count, elements);
    case 8: return JoinFixed<8>(planes, count, elements);
    default: std::memcpy(elements, planes[0], count * element_size);  // one plane: the elements as they are
  }
}

ChunkCodec::ChunkCodec(int zstd_level) : zstd_level_(zstd_level) {}

ChunkCodec::~ChunkCodec() {
  ZSTD_freeCCtx(cctx_);
  ZSTD_freeCCtx(plane_cctx_);
  ZSTD_freeDCtx(dctx_);
}

ZSTD_DCtx *ChunkCodec::Decompressor() {
  if (dctx_ == nullptr && (dctx_ = ZSTD_createDCtx()) == nullptr) throw std::bad_alloc();
  return dctx_;
}

void ChunkCodec::ReserveDecode(size_t raw_bytes) {
  Decompressor();
  if (raw_bytes > 0) Scratch(raw_bytes);
}

uint8_t *ChunkCodec::Scratch(size_t size) {
  if (size > scratch_size_) {
    scratch_.reset(new uint8_t[size]);
    scratch_size_ = size;
  }
  return scratch_.get();
}

Status ChunkCodec::Encode(const uint8_t *raw, int32_t dtype, Filter filter, Chunk *chunk, uint8_t *stored,
                          size_t *stored_size, TieredPlanes tiered_planes) {
  const size_t raw_size = static_cast<size_t>(chunk->raw_size);
  const int plane_count = PlaneCount(filter, dtype);
  const size_t plane_size = raw_size / static_cast<size_t>(plane_count);
  const bool planes = filter == Filter::kBytePlanes;
  ZSTD_CCtx *&cctx = planes ? plane_cctx_ : cctx_;
  if (cctx == nullptr) cctx = NewCompressor(zstd_level_, planes);

  const ChunkHash hash = ChunkHashOf(kFormatVersion);
  const bool tiered_allowed = TieredPlanesAllowed(tiered_planes);
  static_assert(kFormatVersion >= kFirstPlaneDigestVersion, "the writer hashes planes");
  chunk->plane_count = static_cast<uint8_t>(plane_count);
  // Byte planes are split straight into `stored`, plane p at p·plane_size, so planes stored raw (the
  // mantissa planes: most of the bytes) are never copied again. A plane that compresses is coded into
  // the scratch buffer and its coded bytes copied down to where the stored bytes have reached; raw planes
  // after it move down (memmove) to follow. Writes never pass the end of the plane being handled, so
  // later planes are intact when their turn comes. Unfiltered chunks compress from `raw` directly.
  if (planes) {
    // Split a tile at a time and each tile's planes hashed while in L1 (version 5's raw checksum is over
    // the plane digests): the tensor's bytes come from memory once, for both.
    const size_t element_size = static_cast<size_t>(plane_count);
    const size_t tile = kTileBytes / element_size;  // elements per tile
    Xxh3Stream digest[kMaxPlanes];
    for (size_t at = 0; at < plane_size; at += tile) {
      const size_t count = std::min(tile, plane_size - at);
      uint8_t *to[kMaxPlanes];
      for (size_t k = 0; k < element_size; ++k) to[k] = stored + k * plane_size + at;
      SplitBytePlanes(raw + at * element_size, count, element_size, to);
      for (size_t k = 0; k < element_size; ++k) digest[k].Update(to[k], count);
    }
    uint64_t digests[kMaxPlanes];
    for (size_t k = 0; k < element_size; ++k) digests[k] = digest[k].Digest();
    chunk->raw_checksum = PlaneDigestsChecksum(digests, plane_count);
  } else {
    chunk->raw_checksum = ChunkChecksum(hash, raw, raw_size);
  }
  ChunkChecksumStream coded_planes(hash);  // the stored checksum: coded planes only (checksum.h)
  size_t written = 0;
  for (int p = 0; p < plane_count; ++p) {
    const size_t at = static_cast<size_t>(p) * plane_size;
    const uint8_t *plane = planes ? stored + at : raw + at;
    Plane &entry = chunk->planes[p];
    entry.codec = Codec::kRaw;
    entry.stored_size = plane_size;
    const uint8_t *coded = plane;  // where the plane's stored bytes are
    HuffmanModel model;
    TieredCode tiered;
    const PlaneChoice choice = ChoosePlaneCodec(plane, plane_size, filter, &model, tiered_allowed ? &tiered : nullptr);
    if (choice != PlaneChoice::kRaw) {
      // Capacity one byte short of the plane: a coder fails rather than produce bytes that save
      // nothing, and the plane is then stored raw. Any other zstd failure (out of memory) also falls
      // back to raw, which is always correct. Planes are coded into the scratch buffer, followed by the
      // coder's work area; an unfiltered chunk (zstd only) straight into `stored`.
      uint8_t *out = planes ? Scratch(plane_size + std::max(HuffmanWorkBytes(plane_size), TieredWorkBytes(plane_size)))
                            : stored + written;
      if (choice == PlaneChoice::kTiered) {
        const size_t n = TieredEncode(plane, plane_size, tiered, out, plane_size - 1, out + plane_size);
        if (n != 0) entry.codec = Codec::kTiered, entry.stored_size = n, coded = out;
      } else if (choice == PlaneChoice::kHuffman) {
        const size_t n = HuffmanEncode(plane, plane_size, model, out, plane_size - 1, out + plane_size);
        if (n != 0) entry.codec = Codec::kHuffman, entry.stored_size = n, coded = out;
      } else {
        const size_t n = ZSTD_compress2(cctx, out, plane_size - 1, plane, plane_size);
        if (!ZSTD_isError(n)) entry.codec = Codec::kZstd, entry.stored_size = n, coded = out;
      }
    }
    const size_t size = static_cast<size_t>(entry.stored_size);
    if (entry.codec != Codec::kRaw) coded_planes.Update(coded, size);  // while in cache
    if (stored + written != coded) std::memmove(stored + written, coded, size);
    written += size;
  }
  chunk->stored_checksum = coded_planes.Digest();
  *stored_size = written;
  return Status();
}

size_t ChunkCodec::CodedPlaneBytes(const Chunk &chunk) {
  size_t planes = 0;
  for (int p = 0; p < chunk.plane_count; ++p) planes += chunk.planes[p].codec != Codec::kRaw;
  return planes * static_cast<size_t>(chunk.raw_size / chunk.plane_count);
}

// Decodes coded plane p (stored[0, size)) into exactly plane[0, plane_size).
Status ChunkCodec::DecodePlane(Codec codec, const uint8_t *stored, size_t size, uint8_t *plane, size_t plane_size,
                               int p) {
  if (codec == Codec::kTiered) {
    const Status decoded = TieredDecode(stored, size, plane, plane_size);
    return decoded.ok() ? decoded : decoded.WithPrefix("tiered plane " + std::to_string(p) + ": ");
  }
  if (codec == Codec::kHuffman) {
    const Status decoded = HuffmanDecode(stored, size, plane, plane_size);
    return decoded.ok() ? decoded : decoded.WithPrefix("Huffman-coded plane " + std::to_string(p) + ": ");
  }
  ZSTD_DCtx *dctx = Decompressor();
  if (ZSTD_getFrameContentSize(stored, size) != plane_size) {
    return Status(TW_DATA_LOSS, "zstd frame of plane " + std::to_string(p) + " has the wrong content size");
  }
  const size_t n = ZSTD_decompressDCtx(dctx, plane, plane_size, stored, size);
  if (ZSTD_isError(n) || n != plane_size) {
    return Status(TW_DATA_LOSS, "zstd frame of plane " + std::to_string(p) + " does not decode" +
                                    (ZSTD_isError(n) ? std::string(" (") + ZSTD_getErrorName(n) + ")" : ""));
  }
  return Status();
}

// Coded planes (zstd or Huffman) decode into `coded_out` (the k-th coded plane at k·plane_size) when
// given, else into the scratch buffer (plane p at p·plane_size) or, for a chunk of one zstd plane,
// straight into `raw`; with `kept`, they were decoded (and proven) before and are used from there. Raw
// planes are used where they lie in `stored`. Every coded plane must decode to exactly its plane's
// size. Sets planes[p] to where plane p's bytes are.
Status ChunkCodec::Planes(const uint8_t *stored, const Chunk &chunk, size_t plane_size, uint8_t *raw,
                          const uint8_t **planes, uint8_t *coded_out, const uint8_t *kept) {
  size_t coded_planes = 0;
  for (int p = 0; p < chunk.plane_count; ++p) {
    const Plane &entry = chunk.planes[p];
    const size_t size = static_cast<size_t>(entry.stored_size);
    if (entry.codec == Codec::kRaw) {
      planes[p] = stored;
    } else if (kept != nullptr) {
      planes[p] = kept + coded_planes++ * plane_size;
    } else {
      uint8_t *plane = coded_out != nullptr ? coded_out + coded_planes++ * plane_size
                       : chunk.plane_count == 1 && raw != nullptr
                           ? raw
                           : Scratch(static_cast<size_t>(chunk.raw_size)) + static_cast<size_t>(p) * plane_size;
      TW_RETURN_IF_ERROR(DecodePlane(entry.codec, stored, size, plane, plane_size, p));
      planes[p] = plane;
    }
    stored += size;
  }
  return Status();
}

Status ChunkCodec::Decode(const uint8_t *stored, const Chunk &chunk, int32_t dtype, Filter filter, ChunkHash hash,
                          uint8_t *raw, RawCheck check, const uint8_t *kept, JoinStores stores) {
  const size_t raw_size = static_cast<size_t>(chunk.raw_size);
  const size_t plane_size = raw_size / static_cast<size_t>(PlaneCount(filter, dtype));
  const uint8_t *planes[kMaxPlanes];
  TW_RETURN_IF_ERROR(Planes(stored, chunk, plane_size, raw, planes, nullptr, kept));
  // Version 5 proves the planes before they are joined; older versions hash the joined bytes.
  const bool digests = filter == Filter::kBytePlanes && hash == ChunkHash::kXxh3Planes;
  if (check == RawCheck::kVerify && digests && RawChecksum(hash, planes, chunk, plane_size) != chunk.raw_checksum) {
    return RawChecksumMismatch();
  }
  if (filter == Filter::kBytePlanes) {
    JoinBytePlanes(planes, plane_size, static_cast<size_t>(chunk.plane_count), raw, stores);
  } else if (planes[0] != raw) {
    std::memcpy(raw, planes[0], raw_size);
  }
  if (check == RawCheck::kVerify && !digests && ChunkChecksum(hash, raw, raw_size) != chunk.raw_checksum) {
    return RawChecksumMismatch();
  }
  return Status();
}

Status ChunkCodec::Check(const uint8_t *stored, const Chunk &chunk, int32_t dtype, Filter filter, ChunkHash hash,
                         uint8_t *keep) {
  const size_t plane_size = static_cast<size_t>(chunk.raw_size) / static_cast<size_t>(PlaneCount(filter, dtype));
  const uint8_t *planes[kMaxPlanes];
  TW_RETURN_IF_ERROR(Planes(stored, chunk, plane_size, nullptr, planes, keep, nullptr));
  if (RawChecksum(hash, planes, chunk, plane_size) != chunk.raw_checksum) return RawChecksumMismatch();
  return Status();
}

uint64_t ChunkCodec::RawChecksum(ChunkHash hash, const uint8_t *const *planes, const Chunk &chunk, size_t plane_size) {
  const int plane_count = chunk.plane_count;
  if (plane_count == 1) return ChunkChecksum(hash, planes[0], plane_size);  // an unfiltered chunk is its plane
  if (hash == ChunkHash::kXxh3Planes) {
    uint64_t digests[kMaxPlanes];
    for (int p = 0; p < plane_count; ++p) digests[p] = Xxh3(planes[p], plane_size);
    return PlaneDigestsChecksum(digests, plane_count);
  }
  // Joined a tile at a time into a buffer that stays in L1 and hashed as it goes: the whole chunk
  // joined first would stream megabytes through memory twice for bytes that are then thrown away.
  const size_t element_size = static_cast<size_t>(plane_count);
  const size_t tile = kTileBytes / element_size;  // elements per tile
  ChunkChecksumStream stream(hash);
  for (size_t at = 0; at < plane_size; at += tile) {
    const size_t count = std::min(tile, plane_size - at);
    const uint8_t *from[kMaxPlanes];
    for (size_t k = 0; k < element_size; ++k) from[k] = planes[k] + at;
    JoinBytePlanes(from, count, element_size, tile_);
    stream.Update(tile_, count * element_size);
  }
  return stream.Digest();
}

}  // namespace checkpoint
}  // namespace tw
