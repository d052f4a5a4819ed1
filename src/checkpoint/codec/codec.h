// Turns a chunk of raw tensor bytes into stored bytes and back: the byte-plane filter for floats, then
// per plane tiered coding (tiered.h), Huffman coding (huffman.h) or zstd (plane_choice.h says which),
// with planes that do not compress stored raw.
#ifndef TRAINWATCH_CHECKPOINT_CODEC_H
#define TRAINWATCH_CHECKPOINT_CODEC_H

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "checkpoint/codec/plane_choice.h"
#include "checkpoint/codec/plane_join.h"
#include "checkpoint/format/format.h"

typedef struct ZSTD_CCtx_s ZSTD_CCtx;
typedef struct ZSTD_DCtx_s ZSTD_DCtx;

namespace tw {
namespace checkpoint {

// Moves byte k of each of `count` elements of `element_size` bytes to planes[k·count …], and back.
void SplitBytePlanes(const uint8_t *elements, size_t count, size_t element_size, uint8_t *planes);
void JoinBytePlanes(const uint8_t *planes, size_t count, size_t element_size, uint8_t *elements);
// The same with plane k at planes[k] (element_size pointers). Joins of 2- and 4-byte elements run the
// vector kernels of plane_join.h, with `stores` (non-temporal for a restore's destination).
void SplitBytePlanes(const uint8_t *elements, size_t count, size_t element_size, uint8_t *const *planes);
void JoinBytePlanes(const uint8_t *const *planes, size_t count, size_t element_size, uint8_t *elements,
                    JoinStores stores = JoinStores::kCached);

// Whether Decode checks the raw checksum: kTrusted only for a chunk whose stored bytes a Check has
// already proven (the write pass of an all-or-nothing read).
enum class RawCheck { kVerify, kTrusted };

// One per thread: zstd contexts and a plane buffer, reused from chunk to chunk.
class ChunkCodec {
 public:
  explicit ChunkCodec(int zstd_level = 1);
  ~ChunkCodec();
  int zstd_level() const { return zstd_level_; }
  ChunkCodec(const ChunkCodec &) = delete;
  ChunkCodec &operator=(const ChunkCodec &) = delete;

  // Encodes raw[0, chunk->raw_size) of a tensor of `dtype` under `filter` for a file of kFormatVersion:
  // fills chunk's planes and checksums and writes the stored bytes to `stored`, which must hold
  // chunk->raw_size bytes (a chunk never grows: a plane that would is stored raw). Sets *stored_size.
  // `tiered_planes`: where planes may be tiered-coded (plane_choice.h).
  Status Encode(const uint8_t *raw, int32_t dtype, Filter filter, Chunk *chunk, uint8_t *stored, size_t *stored_size,
                TieredPlanes tiered_planes = TieredPlanes::kWhereFast);

  // Decodes the stored bytes of `chunk` (stored_size() bytes, already checksummed) into
  // raw[0, chunk.raw_size) and (kVerify) checks the raw checksum, a `hash` (the file's). TW_DATA_LOSS
  // with a short reason on failure; raw may then be partly written.
  // `kept`: the chunk's coded planes as a Check with `keep` decoded them (then only raw planes are read
  // from `stored`), instead of decoding them again. `stores`: how planes are joined into `raw`.
  Status Decode(const uint8_t *stored, const Chunk &chunk, int32_t dtype, Filter filter, ChunkHash hash, uint8_t *raw,
                RawCheck check = RawCheck::kVerify, const uint8_t *kept = nullptr,
                JoinStores stores = JoinStores::kCached);
  // Proves that the stored bytes decode (every coded plane, to its plane's exact size) and match the raw
  // checksum, writing only the codec's own scratch: Decode's checks without a destination. With `keep`
  // (CodedPlaneBytes(chunk) bytes), the decoded coded planes are left there for Decode.
  Status Check(const uint8_t *stored, const Chunk &chunk, int32_t dtype, Filter filter, ChunkHash hash,
               uint8_t *keep = nullptr);
  // Allocates now what Decode needs for chunks of up to `raw_bytes` raw bytes (the zstd context and the
  // plane scratch), so that Decode of such a chunk allocates nothing. Throws std::bad_alloc.
  void ReserveDecode(size_t raw_bytes);
  // Bytes of `chunk`'s coded (zstd, Huffman and tiered) planes once decoded.
  static size_t CodedPlaneBytes(const Chunk &chunk);

 private:
  // Raw bytes are split (Encode) or, in files before version 5, joined (Check) and hashed a tile at a
  // time, so that the hash reads them from L1 instead of streaming the chunk through memory once more.
  static constexpr size_t kTileBytes = 16 << 10;

  uint8_t *Scratch(size_t size);
  ZSTD_DCtx *Decompressor();  // created on first use; throws std::bad_alloc
  // The raw checksum of a chunk whose planes lie at planes[p] (versions before 5 join them into tile_).
  uint64_t RawChecksum(ChunkHash hash, const uint8_t *const *planes, const Chunk &chunk, size_t plane_size);
  Status DecodePlane(Codec codec, const uint8_t *stored, size_t size, uint8_t *plane, size_t plane_size, int p);
  Status Planes(const uint8_t *stored, const Chunk &chunk, size_t plane_size, uint8_t *raw, const uint8_t **planes,
                uint8_t *coded_out, const uint8_t *kept);

  int zstd_level_;
  ZSTD_CCtx *cctx_ = nullptr;        // for unfiltered chunks
  ZSTD_CCtx *plane_cctx_ = nullptr;  // for byte planes of floats
  ZSTD_DCtx *dctx_ = nullptr;
  std::unique_ptr<uint8_t[]> scratch_;  // decompressed planes
  size_t scratch_size_ = 0;
  alignas(64) uint8_t tile_[kTileBytes];  // joined raw bytes of files before version 5, a tile at a time
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_CODEC_H
