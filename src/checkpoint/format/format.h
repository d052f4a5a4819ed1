// The checkpoint file layout (docs/checkpoint-format.md is the specification):
//
//   header   16 bytes: magic "\x89TWCKPT\n", u32 format version (6; 1 to 5 with legacy formats), u32 flags (0)
//   chunks   the stored bytes of every chunk, back to back, in index order
//   index    (from version 6) the file's origin: the job identity and the name it was written under;
//            every tensor's name, dtype, shape, filter (byte planes: floats, and from version 4 integers,
//            wider than a byte) and chunk list (offsets, sizes, codecs, checksums)
//   footer   32 bytes: u64 index offset, u64 index size, u64 XXH64 of the index (seeded with the
//            version from 3 on), magic "TWCKEND\n"
//
// Each plane of a chunk is stored raw, as a zstd frame, (from version 3) Huffman-coded (huffman.h) or
// (from version 5) tiered-coded (tiered.h).
//
// All integers are little-endian. The footer has a fixed size so a reader finds the index from the end
// of the file; the chunks must tile the bytes between header and index exactly, so every byte of a
// valid file is covered by a checksum or a structural check.
#ifndef TRAINWATCH_CHECKPOINT_FORMAT_H
#define TRAINWATCH_CHECKPOINT_FORMAT_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tw {
namespace checkpoint {

constexpr uint32_t kFormatVersion = 6;        // what the writer produces: the format of 1.0
constexpr uint32_t kOldestFormatVersion = 1;  // the oldest a build with legacy formats reads
// Whether this build reads the formats before 1.0, versions [kOldestFormatVersion, kFormatVersion): the
// build option legacy_formats (docs/checkpoint-format.md, "Versioning"). Without it ParseHeader refuses
// them with TW_UNIMPLEMENTED naming the version and `trainwatch-ckpt upgrade`, before any of the rules
// below that only they need (the kFirst*Version constants, ChunkHashOf's older hashes, the unseeded
// index checksum) is reached.
bool ReadsLegacyFormats();
constexpr size_t kHeaderSize = 16;
constexpr size_t kFooterSize = 32;
constexpr int kMaxRank = 1024;                    // dimensions per tensor
constexpr uint64_t kMaxChunkBytes = 64ull << 20;  // raw bytes per chunk: bounds a reader's scratch
constexpr uint64_t kDefaultChunkBytes = 4ull << 20;

// How a chunk's raw bytes are rearranged before compression.
enum class Filter : uint8_t {
  kNone = 0,
  kBytePlanes = 1,  // byte k of every element together: plane k holds the k-th bytes (little-endian)
};

// How one plane (or the whole chunk, without filter) is stored.
enum class Codec : uint8_t {
  kRaw = 0,      // the bytes as they are: the plane did not compress
  kZstd = 1,     // one zstd frame carrying its content size
  kHuffman = 2,  // byte planes only, from version 3: a Huffman-coded plane (huffman.h)
  kTiered = 3,   // byte planes only, from version 5: codes of a few fixed widths (tiered.h)
};
constexpr uint32_t kFirstHuffmanVersion = 3;
constexpr uint32_t kFirstTieredVersion = 5;
constexpr uint32_t kFirstPlaneDigestVersion = 5;    // raw checksums of byte-plane chunks over plane digests
constexpr uint32_t kFirstIntegerPlanesVersion = 4;  // integers wider than a byte split into byte planes
constexpr uint32_t kFirstOriginVersion = 6;         // the index opens with the file's origin

constexpr int kMaxPlanes = 8;  // the widest element (float64)

struct Plane {
  Codec codec = Codec::kRaw;
  uint64_t stored_size = 0;
};

// How the chunk checksums are computed, decided by the file's format version (checksum.h): XXH64 in
// version 1, XXH3-64 from version 2; from version 5 the raw checksum of a byte-plane chunk is XXH3-64 of
// its planes' XXH3-64 digests, so a reader proves planes without joining them. The footer's index
// checksum is XXH64 in every version.
enum class ChunkHash : uint8_t { kXxh64, kXxh3, kXxh3Planes };
ChunkHash ChunkHashOf(uint32_t format_version);
// The seed of the footer's index checksum (XXH64): 0 in versions 1 and 2, the version from 3 on. Files
// of versions 2 and 3 without Huffman planes have the same bytes otherwise, so without it a bit flip
// turning one version into the other would go unnoticed.
inline uint64_t IndexChecksumSeed(uint32_t format_version) { return format_version >= 3 ? format_version : 0; }

struct Chunk {
  uint64_t offset = 0;           // of the stored bytes in the file
  uint64_t raw_size = 0;         // bytes of the tensor this chunk holds; a multiple of the element size
  uint64_t raw_checksum = 0;     // ChunkHash of those raw bytes, or of their planes (after decoding)
  uint64_t stored_checksum = 0;  // ChunkHash of the stored bytes or their frames (checksum.h), before decoding
  uint8_t plane_count = 0;
  std::array<Plane, kMaxPlanes> planes{};

  uint64_t stored_size() const;
};

// A tensor as the index describes it. Chunks hold consecutive byte ranges of the row-major data.
struct TensorEntry {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  Filter filter = Filter::kNone;
  std::vector<Chunk> chunks;

  uint64_t byte_size() const;  // element count × element size
};

// Who wrote a file (from version 6; docs/checkpoint-format.md, "Origin"): the job identity of the
// directory it was saved into (job_identity.h) and its own basename then. Both are inside the
// checksummed index, so a saver proves a file its own without trusting its name (own_checkpoints.h):
// a copy under another name, or a file another job wrote, is not. A file of an older version, and one
// written outside a saver (no job: all zero), has no origin and is never proven a job's.
constexpr size_t kJobIdBytes = 16;
using JobId = std::array<uint8_t, kJobIdBytes>;
bool IsNoJob(const JobId &job);  // all zero
constexpr uint32_t kMaxOriginNameBytes = 4096;
struct Origin {
  JobId job{};
  std::string name;
};
// The origin record, as it opens the index of a file of version 6 on (and a sharded index's body), and
// its parser (TW_DATA_LOSS naming `file` when truncated or its name is too long).
void AppendOrigin(const Origin &origin, std::string *out);
class Cursor;
Status ParseOriginRecord(Cursor *in, const std::string &file, Origin *origin);

struct Footer {
  uint64_t index_offset = 0;
  uint64_t index_size = 0;
  uint64_t index_xxh64 = 0;
};

// The filter of a dtype in files of `format_version`: byte planes for floats wider than one byte, and
// from version 4 for integers wider than one byte too; none for the others.
Filter FilterFor(int32_t dtype, uint32_t format_version = kFormatVersion);
// Planes a chunk is split into under `filter`.
int PlaneCount(Filter filter, int32_t dtype);

// Header flags: 0 for a checkpoint file; kHeaderFlagShardIndex for the index of a sharded checkpoint
// (shard_index.h), which shares the framing.
constexpr uint32_t kHeaderFlagShardIndex = 1;

void AppendHeader(std::string *out, uint32_t flags = 0);
void AppendIndex(const Origin &origin, const std::vector<TensorEntry> &tensors, std::string *out);
void AppendFooter(const Footer &footer, std::string *out);

// Parsers check everything they can without the chunk bytes and return TW_DATA_LOSS with a message
// naming `file` (and the tensor, when one is at fault). ParseHeader accepts every version a reader
// reads and sets *version (when given) to the file's; a version before 1.0's in a build without legacy
// formats is TW_UNIMPLEMENTED ("checkpoint <file> is format version 5, written before trainwatch 1.0
// …: convert it with `trainwatch-ckpt upgrade <file> NEW` …"): the file is not damaged.
Status ParseHeader(const uint8_t *bytes, uint64_t file_size, const std::string &file, uint32_t expected_flags = 0,
                   uint32_t *version = nullptr);
Status ParseFooter(const uint8_t *bytes, uint64_t file_size, const std::string &file, Footer *footer);
// `bytes` is the index the footer points at. Checks its checksum, every tensor's metadata (valid dtype,
// unique non-empty names, sizes that add up, codecs that the file's format `version` has) and that the
// chunks tile [kHeaderSize, index_offset). *origin (may be NULL) receives the file's origin (none before
// version 6).
Status ParseIndex(const uint8_t *bytes, const Footer &footer, const std::string &file,
                  std::vector<TensorEntry> *tensors, uint32_t version = kFormatVersion, Origin *origin = nullptr);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_FORMAT_H
