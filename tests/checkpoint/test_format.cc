// The file format, codec and reader (white-box): checksums, byte planes, round trips of every dtype
// and shape, and corruption — every bit flip and every truncation is detected, never a crash or a
// wrong tensor.
#include <zstd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/codec/codec.h"
#include "checkpoint/codec/huffman.h"
#include "checkpoint/codec/kept_planes.h"
#include "checkpoint/file/reader.h"
#include "checkpoint/file/writer.h"
#include "checkpoint/format/checksum.h"
#include "checkpoint/format/format.h"
#include "checkpoint/format/xxhash64.h"
#include "checkpoint/open_checkpoint.h"
#include "scratch_dir.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

// A tensor the test owns: metadata plus bytes.
struct Owned {
  std::string name;
  int32_t dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  tw::TensorRef ref() {
    tw_tensor view = TW_TENSOR_INIT;
    view.dtype = dtype;
    view.ndim = static_cast<int32_t>(shape.size());
    view.shape = shape.data();
    view.data = bytes.data();
    return tw::TensorRef(view, name);
  }
};

uint64_t Elements(const std::vector<int64_t> &shape) {
  uint64_t n = 1;
  for (int64_t e : shape) n *= static_cast<uint64_t>(e);
  return n;
}

// Float-like content where the dtype is a float (so exponent planes compress), random bytes otherwise.
Owned MakeTensor(const std::string &name, int32_t dtype, std::vector<int64_t> shape, uint32_t seed) {
  Owned t{name, dtype, std::move(shape), {}};
  const size_t count = Elements(t.shape);
  t.bytes.resize(count * tw::DtypeSize(dtype));
  std::mt19937 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 0.02f);
  for (size_t i = 0; i < count; ++i) {
    uint8_t *e = t.bytes.data() + i * tw::DtypeSize(dtype);
    const float f = gauss(rng);
    const double d = f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    switch (dtype) {
      case TW_FLOAT32: std::memcpy(e, &f, 4); break;
      case TW_FLOAT64: std::memcpy(e, &d, 8); break;
      case TW_BFLOAT16: {
        const uint16_t h = static_cast<uint16_t>(bits >> 16);
        std::memcpy(e, &h, 2);
        break;
      }
      case TW_FLOAT16: {
        const uint16_t h = static_cast<uint16_t>(((bits >> 16) & 0x8000) | (rng() & 0x3fff));
        std::memcpy(e, &h, 2);
        break;
      }
      default:
        for (size_t k = 0; k < tw::DtypeSize(dtype); ++k) e[k] = static_cast<uint8_t>(rng());
        if (dtype == TW_BOOL) e[0] &= 1;
    }
  }
  return t;
}

std::vector<uint8_t> ReadAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Writes `tensors`, reads every one back through ReadInto and compares bytes, names, dtypes and shapes.
void AssertRoundTrip(std::vector<Owned> &tensors, const ckpt::WriteOptions &options) {
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string path = std::string(dir.path) + "/model.ckpt-1";
  std::vector<tw::TensorRef> refs;
  for (Owned &t : tensors) refs.push_back(t.ref());
  const tw::Status written = ckpt::WriteCheckpoint(path, refs, options);
  assert_true(written.ok());

  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
  assert_int_equal(reader->tensors().size(), tensors.size());
  assert_true(reader->Verify().ok());
  std::vector<std::vector<uint8_t>> restored;
  std::vector<ckpt::CheckpointReader::Target> targets;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ckpt::TensorEntry *entry = reader->Find(tensors[i].name);
    assert_non_null(entry);
    assert_int_equal(entry->dtype, tensors[i].dtype);
    assert_true(entry->shape == tensors[i].shape);
    assert_string_equal(reader->tensors()[i].name.c_str(), tensors[i].name.c_str());  // saved order
    restored.emplace_back(tensors[i].bytes.size(), 0xA5);
  }
  for (size_t i = 0; i < tensors.size(); ++i) targets.push_back({reader->Find(tensors[i].name), restored[i].data()});
  assert_true(reader->ReadInto(targets).ok());
  for (size_t i = 0; i < tensors.size(); ++i) assert_true(restored[i] == tensors[i].bytes);
  reader.reset();
  scratch_dir_destroy(&dir);
}

// `tensors` written as a checkpoint in chunks of `chunk_bytes`, as bytes.
std::vector<uint8_t> CheckpointBytes(std::vector<Owned> &tensors, uint64_t chunk_bytes,
                                     ckpt::TieredPlanes tiered_planes = ckpt::TieredPlanes::kWhereFast) {
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string path = std::string(dir.path) + "/small";
  std::vector<tw::TensorRef> refs;
  for (Owned &t : tensors) refs.push_back(t.ref());
  ckpt::WriteOptions options;
  options.chunk_bytes = chunk_bytes;
  options.tiered_planes = tiered_planes;
  assert_true(ckpt::WriteCheckpoint(path, refs, options).ok());
  std::vector<uint8_t> bytes = ReadAll(path);
  scratch_dir_destroy(&dir);
  return bytes;
}

// A small checkpoint of several dtypes for the corruption tests, as bytes.
std::vector<uint8_t> SmallCheckpoint(std::vector<Owned> *tensors) {
  *tensors = {MakeTensor("weights", TW_FLOAT32, {4, 8}, 1), MakeTensor("bias", TW_BFLOAT16, {6}, 2),
              MakeTensor("step", TW_INT64, {}, 3), MakeTensor("mask", TW_BOOL, {5}, 4),
              MakeTensor("empty", TW_FLOAT16, {0, 3}, 5)};
  return CheckpointBytes(*tensors, 64);  // several chunks per tensor
}

// Opens, verifies and reads everything from `bytes`; returns the first failure. Destinations that a
// failed read touched would be a half-written restore: the caller checks they still hold 0xA5.
tw::Status OpenVerifyRead(const std::vector<uint8_t> &bytes, const std::vector<Owned> &tensors, bool *untouched) {
  *untouched = true;
  std::unique_ptr<ckpt::CheckpointReader> reader;
  TW_RETURN_IF_ERROR(ckpt::CheckpointReader::OpenMemory(bytes.data(), bytes.size(), "small", &reader));
  std::vector<std::vector<uint8_t>> restored;
  std::vector<ckpt::CheckpointReader::Target> targets;
  for (const Owned &t : tensors) {
    const ckpt::TensorEntry *entry = reader->Find(t.name);
    if (entry == nullptr || entry->byte_size() != t.bytes.size()) return tw::Status(TW_DATA_LOSS, "metadata changed");
    restored.emplace_back(t.bytes.size(), 0xA5);
  }
  for (size_t i = 0; i < tensors.size(); ++i) targets.push_back({reader->Find(tensors[i].name), restored[i].data()});
  const tw::Status read = reader->ReadInto(targets, 2);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (read.ok()) {
      if (restored[i] != tensors[i].bytes) return tw::Status(TW_INTERNAL, "WRONG TENSOR " + tensors[i].name);
    } else {
      for (uint8_t b : restored[i]) *untouched = *untouched && b == 0xA5;
    }
  }
  TW_RETURN_IF_ERROR(read);
  return reader->Verify(2);
}

// Under a sanitizer, bit flips between the header and the footer are tried at every 8th byte only:
// whichever byte of the chunks or the index a flip hits, the reader takes the same path (a chunk's
// checksum, or the index's, fails before anything there is decoded or parsed), so the other bytes would
// only rerun it under the sanitizer. The header and footer, read before any checksum, keep every byte;
// the release build flips every bit of every byte.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kCheckedByteStride = 8;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr size_t kCheckedByteStride = 8;
#else
constexpr size_t kCheckedByteStride = 1;
#endif
#else
constexpr size_t kCheckedByteStride = 1;
#endif

// The status a damaged file must get: TW_DATA_LOSS; in a build without the formats before 1.0 a header
// whose version field now names one of them is refused first, with TW_UNIMPLEMENTED (format.h).
bool IsDamageStatus(const tw::Status &status, const std::vector<uint8_t> &bytes) {
  if (status.code() == TW_DATA_LOSS) return true;
  uint32_t version = 0;
  if (TW_LEGACY_FORMATS || bytes.size() < ckpt::kHeaderSize) return false;
  std::memcpy(&version, bytes.data() + 8, 4);
  return status.code() == TW_UNIMPLEMENTED && version >= ckpt::kOldestFormatVersion && version < ckpt::kFormatVersion;
}

// Flips every bit of `good` in turn (of the bytes at `positions` when given; those under a checksum at
// kCheckedByteStride): each read fails with TW_DATA_LOSS naming the file (and the tensor, for a flip in
// chunk data), and leaves the destinations untouched.
void AssertEveryBitFlipIsDetected(const std::vector<uint8_t> &good, const std::vector<Owned> &tensors,
                                  std::vector<size_t> positions = {}) {
  bool untouched = true;
  assert_true(OpenVerifyRead(good, tensors, &untouched).ok());
  uint64_t index_offset = 0;
  std::memcpy(&index_offset, good.data() + good.size() - ckpt::kFooterSize, 8);
  if (positions.empty()) {
    for (size_t i = 0; i < good.size(); ++i) positions.push_back(i);
  }
  const auto checksummed = [&](size_t i) { return i >= ckpt::kHeaderSize && i < good.size() - ckpt::kFooterSize; };
  std::vector<size_t> tried;
  for (size_t i : positions) {
    if (!checksummed(i) || i % kCheckedByteStride == 0) tried.push_back(i);
  }
  positions = tried;
  size_t flips = 0;
  for (size_t i : positions) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= static_cast<uint8_t>(1u << bit);
      const tw::Status status = OpenVerifyRead(bad, tensors, &untouched);
      assert_true(IsDamageStatus(status, bad));  // never OK, never a wrong tensor (TW_INTERNAL)
      assert_true(untouched);                    // nothing half-written
      if (i >= ckpt::kHeaderSize && i < index_offset) {
        assert_non_null(std::strstr(status.message().c_str(), "tensor '"));  // names the tensor
      }
      assert_non_null(std::strstr(status.message().c_str(), "small"));  // names the file
      ++flips;
    }
  }
  assert_int_equal(flips, positions.size() * 8);
}

// The tensors of data/v1.ckpt, from integer arithmetic only. The file was written by trainwatch before
// format version 2 (commit 5886c54, WriteOptions::chunk_bytes 512) and is kept as it was: version 1
// files in the field must stay readable. It has zstd and raw planes, unfiltered zstd and raw chunks,
// a scalar and an empty tensor.
std::vector<Owned> Version1Tensors() {
  auto hash = [](uint32_t i) {
    i *= 0x9E3779B1u, i ^= i >> 15, i *= 0x85EBCA77u, i ^= i >> 13;
    return i;
  };
  std::vector<Owned> t;
  auto put = [&t](auto value) {
    const auto *p = reinterpret_cast<const uint8_t *>(&value);
    t.back().bytes.insert(t.back().bytes.end(), p, p + sizeof(value));
  };
  t.push_back({"weights", TW_FLOAT32, {8, 32}, {}});
  for (uint32_t i = 0; i < 256; ++i) {
    const uint32_t h = hash(i);
    put((h & 0x80000000u) | ((120u + (h >> 27) % 4) << 23) | (h & 0x7FFFFFu));
  }
  t.push_back({"bias", TW_BFLOAT16, {300}, {}});
  for (uint32_t i = 0; i < 300; ++i) {
    const uint32_t h = hash(i + 1000);
    put(static_cast<uint16_t>(((h >> 16) & 0x8000u) | ((120u + h % 4) << 7) | ((h >> 8) & 0x7Fu)));
  }
  t.push_back({"step", TW_INT64, {}, {}});
  put(int64_t{123456789});
  t.push_back({"mask", TW_BOOL, {5}, {}});
  for (uint32_t i = 0; i < 5; ++i) put(static_cast<uint8_t>(hash(i) & 1));
  t.push_back({"zeros", TW_INT32, {1000}, std::vector<uint8_t>(4000, 0)});
  t.push_back({"noise", TW_INT32, {64}, {}});
  for (uint32_t i = 0; i < 64; ++i) put(hash(i + 2000));
  t.push_back({"empty", TW_FLOAT16, {0, 3}, {}});
  t.push_back({"f64", TW_FLOAT64, {20}, {}});
  for (uint32_t i = 0; i < 20; ++i) put((uint64_t{0x3F8} << 52) | (uint64_t{hash(i)} << 20));
  return t;
}

const std::string kVersion1File = TW_CHECKPOINT_TEST_DATA "/v1.ckpt";
// The same tensors written by the version-2 writer (commit 41f1b83, chunk_bytes 512), kept as it was.
const std::string kVersion2File = TW_CHECKPOINT_TEST_DATA "/v2.ckpt";
// And by the version-3 writer (commit 92651de, chunk_bytes 512): integers unfiltered, Huffman planes.
const std::string kVersion3File = TW_CHECKPOINT_TEST_DATA "/v3.ckpt";
// And by the version-4 writer (commit fbe0f7e, chunk_bytes 512): integers in byte planes, raw checksums
// of the joined bytes.
const std::string kVersion4File = TW_CHECKPOINT_TEST_DATA "/v4.ckpt";
// And by the version-5 writer (commit aef5edf, chunk_bytes 512, tiered planes allowed everywhere):
// raw checksums of byte-plane chunks over their planes' digests, no origin.
const std::string kVersion5File = TW_CHECKPOINT_TEST_DATA "/v5.ckpt";

// The writer's codec for an exponent plane of trained weights: tiered where this CPU decodes tiered
// planes with AVX-512, else Huffman (plane_choice.h, TieredPlanes::kWhereFast).
ckpt::Codec ExponentCodec() {
  return ckpt::TieredPlanesAllowed(ckpt::TieredPlanes::kWhereFast) ? ckpt::Codec::kTiered : ckpt::Codec::kHuffman;
}

uint32_t VersionOf(const std::vector<uint8_t> &file) {
  uint32_t version = 0;
  assert_true(ckpt::ParseHeader(file.data(), file.size(), "file", 0, &version).ok());
  return version;
}

}  // namespace

static void xxh64_matches_reference_values(void **state) {
  (void)state;
  assert_true(ckpt::Xxh64("", 0) == 0xEF46DB3751D8E999ULL);
  assert_true(ckpt::Xxh64("abc", 3) == 0x44BC2CF5AD770999ULL);
  // zstd's frame checksum is the low 32 bits of XXH64(content, 0): an independent implementation to
  // compare with at every length class (tail of 0–31 bytes, one and many 32-byte stripes).
  std::vector<uint8_t> data(5000);
  std::mt19937 rng(7);
  for (uint8_t &b : data) b = static_cast<uint8_t>(rng());
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::vector<uint8_t> frame(ZSTD_compressBound(data.size()));
  for (size_t size : {0, 1, 3, 4, 7, 8, 15, 31, 32, 33, 63, 64, 100, 1000, 4999}) {
    const size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), data.data(), size);
    assert_false(ZSTD_isError(n));
    uint32_t zstd_checksum;
    std::memcpy(&zstd_checksum, frame.data() + n - 4, 4);
    assert_int_equal(zstd_checksum, static_cast<uint32_t>(ckpt::Xxh64(data.data(), size)));
  }
  ZSTD_freeCCtx(cctx);
}

// The reader hashes decoded chunks in tiles: any split into pieces must give the one-shot hash.
static void xxh64_stream_matches_one_shot(void **state) {
  (void)state;
  std::vector<uint8_t> data(5000);
  std::mt19937 rng(11);
  for (uint8_t &b : data) b = static_cast<uint8_t>(rng());
  for (size_t size : {0, 5, 31, 32, 33, 100, 4999}) {
    for (size_t piece : {1, 7, 32, 33, 4096}) {
      ckpt::Xxh64Stream stream;
      for (size_t at = 0; at < size; at += piece) stream.Update(data.data() + at, std::min(piece, size - at));
      assert_true(stream.Digest() == ckpt::Xxh64(data.data(), size));
    }
  }
  ckpt::Xxh64Stream seeded(42);
  seeded.Update("abc", 3);
  assert_true(seeded.Digest() == ckpt::Xxh64("abc", 3, 42));
}

static void byte_planes_split_and_join(void **state) {
  (void)state;
  for (size_t element_size : {1, 2, 4, 8}) {
    for (size_t count : {0, 1, 3, 1000}) {
      std::vector<uint8_t> elements(count * element_size), planes(elements.size()), back(elements.size());
      for (size_t i = 0; i < elements.size(); ++i) elements[i] = static_cast<uint8_t>(i * 7 + 3);
      ckpt::SplitBytePlanes(elements.data(), count, element_size, planes.data());
      for (size_t i = 0; i < count; ++i) {
        for (size_t k = 0; k < element_size; ++k) {
          assert_int_equal(planes[k * count + i], elements[i * element_size + k]);
        }
      }
      ckpt::JoinBytePlanes(planes.data(), count, element_size, back.data());
      assert_true(back == elements);
    }
  }
}

static void round_trip_every_dtype_and_shape(void **state) {
  (void)state;
  std::vector<int64_t> many_dims(40, 1);
  many_dims[3] = 2;
  many_dims[39] = 3;
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {3, 0, 2}, {7}, {2, 3, 5}, many_dims, {1001}};
  std::vector<Owned> tensors;
  uint32_t seed = 0;
  for (int32_t dtype = TW_BOOL; dtype <= TW_FLOAT8_E5M2; ++dtype) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      tensors.push_back(
          MakeTensor(std::string(tw::DtypeName(dtype)) + "/" + std::to_string(s), dtype, shapes[s], ++seed));
    }
  }
  ckpt::WriteOptions options;
  options.chunk_bytes = 256;  // the {1001} tensors span several chunks, the last one partial
  AssertRoundTrip(tensors, options);
  AssertRoundTrip(tensors, ckpt::WriteOptions());  // one chunk each
}

static void round_trip_tensor_larger_than_a_chunk(void **state) {
  (void)state;
  // 5 MiB of float32 and of bfloat16: two 4 MiB-default chunks each, decoded on two threads.
  std::vector<Owned> tensors = {MakeTensor("w32", TW_FLOAT32, {5, 1 << 18}, 11),
                                MakeTensor("w16", TW_BFLOAT16, {5 << 19}, 12),
                                MakeTensor("ids", TW_INT32, {3, 1 << 19}, 13)};
  ckpt::WriteOptions options;
  options.threads = 2;
  AssertRoundTrip(tensors, options);
}

// A restore keeps the zstd planes its checking pass decoded for its writing pass, within a budget:
// chunks kept, chunks decoded again and a mix of both read the same bytes.
static void kept_planes_within_any_budget_read_the_same_bytes(void **state) {
  (void)state;
  std::vector<Owned> tensors = {MakeTensor("w32", TW_FLOAT32, {3, 1000}, 21),
                                MakeTensor("w16", TW_BFLOAT16, {5000}, 22),
                                Owned{"zeros", TW_INT32, {2000}, std::vector<uint8_t>(8000, 0)}};
  const std::vector<uint8_t> file = CheckpointBytes(tensors, 2048);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "kept", &reader).ok());
  size_t zstd_bytes = 0;
  for (const ckpt::TensorEntry &t : reader->tensors()) {
    for (const ckpt::Chunk &c : t.chunks) zstd_bytes += ckpt::ChunkCodec::CodedPlaneBytes(c);
  }
  assert_int_equal(zstd_bytes, 3000 + 5000 + 8000);  // exponent planes of w32 and w16; all of zeros
  for (size_t budget : {size_t{0}, size_t{1000}, zstd_bytes / 2, zstd_bytes, ckpt::KeptPlanes::kDefaultBudget}) {
    for (int threads : {1, 2}) {
      std::vector<std::vector<uint8_t>> restored;
      std::vector<ckpt::CheckpointReader::Target> targets;
      for (const Owned &t : tensors) restored.emplace_back(t.bytes.size(), 0xA5);
      for (size_t i = 0; i < tensors.size(); ++i)
        targets.push_back({reader->Find(tensors[i].name), restored[i].data()});
      assert_true(reader->ReadInto(targets, threads, budget).ok());
      for (size_t i = 0; i < tensors.size(); ++i) assert_true(restored[i] == tensors[i].bytes);
    }
  }
  // One tensor into two buffers in one read: its chunks are kept once and both buffers filled.
  std::vector<uint8_t> first(tensors[0].bytes.size()), second(tensors[0].bytes.size());
  assert_true(reader->ReadInto({{reader->Find("w32"), first.data()}, {reader->Find("w32"), second.data()}}, 2).ok());
  assert_true(first == tensors[0].bytes && second == tensors[0].bytes);
  const ckpt::Chunk chunks[3];
  ckpt::KeptPlanes kept(100);
  assert_non_null(kept.Reserve(&chunks[0], 60));
  assert_null(kept.Reserve(&chunks[1], 50));  // over the budget: decoded again
  assert_null(kept.Reserve(&chunks[0], 10));  // already kept
  assert_non_null(kept.Reserve(&chunks[2], 40));
  assert_non_null(kept.Find(&chunks[0]));
  assert_null(kept.Find(&chunks[1]));
  assert_non_null(kept.Find(&chunks[2]));
}

// Reads `tensors` from `file` through ReadInto into fresh buffers (0xA5); the status, and whether
// every buffer holds its tensor (or, on failure, still only 0xA5).
tw::Status ReadAllInto(const std::vector<uint8_t> &file, const std::vector<Owned> &tensors, int threads) {
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "reuse", &reader).ok());
  std::vector<std::vector<uint8_t>> restored;
  std::vector<ckpt::CheckpointReader::Target> targets;
  for (const Owned &t : tensors) restored.emplace_back(t.bytes.size(), 0xA5);
  for (size_t i = 0; i < tensors.size(); ++i) targets.push_back({reader->Find(tensors[i].name), restored[i].data()});
  const tw::Status status = reader->ReadInto(targets, threads);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (status.ok()) {
      assert_true(restored[i] == tensors[i].bytes);
    } else {
      assert_true(restored[i] == std::vector<uint8_t>(tensors[i].bytes.size(), 0xA5));
    }
  }
  return status;
}

// The kept planes' memory is reused from read to read (kept_planes.h): reads of different sizes, one
// after the other, each get their own bytes, and a read that fits in what an earlier one left maps
// nothing new. Chunks of 1 MiB: their planes fill a huge-page slab and their joins into the
// destinations use streamed stores.
static void kept_planes_memory_is_reused_across_reads_of_different_sizes(void **state) {
  (void)state;
  std::vector<Owned> big = {MakeTensor("w", TW_FLOAT32, {3 << 20}, 31), MakeTensor("h", TW_BFLOAT16, {3 << 19}, 32)};
  std::vector<Owned> small = {MakeTensor("w", TW_FLOAT32, {1000}, 33), MakeTensor("h", TW_BFLOAT16, {70000}, 34)};
  std::vector<Owned> noise = {MakeTensor("ids", TW_INT32, {1 << 20}, 35)};  // no plane compresses: nothing kept
  const std::vector<uint8_t> big_file = CheckpointBytes(big, 1 << 20), small_file = CheckpointBytes(small, 1 << 20);
  const std::vector<uint8_t> noise_file = CheckpointBytes(noise, 1 << 20);
  for (int threads : {1, 2}) {
    assert_true(ReadAllInto(big_file, big, threads).ok());
    const size_t spare = ckpt::KeptPlanes::SpareBytes();
    assert_true(spare >= (3u << 20) + (3u << 19));  // the exponent planes of w and h, kept for the next read
    assert_true(spare <= ckpt::KeptPlanes::kSpareBytes);
    assert_true(ReadAllInto(small_file, small, threads).ok());
    assert_int_equal(ckpt::KeptPlanes::SpareBytes(), spare);  // it took the big read's slab and gave it back
    assert_true(ReadAllInto(big_file, big, threads).ok());
    assert_int_equal(ckpt::KeptPlanes::SpareBytes(), spare);
    assert_true(ReadAllInto(noise_file, noise, threads).ok());
    assert_int_equal(ckpt::KeptPlanes::SpareBytes(), spare);  // a read that keeps nothing leaves them be
  }
}

// With the reused memory holding the very planes a chunk would decode to (a good read of the same
// tensors just before), a chunk that does not prove still fails the read before any buffer is written:
// a coded plane that does not decode, and raw bytes that do not match the raw checksum.
static void a_corrupt_chunk_fails_with_reused_kept_planes(void **state) {
  (void)state;
  std::vector<Owned> tensors = {MakeTensor("w", TW_FLOAT32, {1 << 20}, 41),
                                MakeTensor("h", TW_BFLOAT16, {1 << 20}, 42)};
  const std::vector<uint8_t> good = CheckpointBytes(tensors, 1 << 20);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(good.data(), good.size(), "good", &reader).ok());
  const ckpt::Chunk &last = reader->Find("h")->chunks.back();
  assert_int_equal(last.planes[0].codec, ckpt::Codec::kRaw);  // the low bytes of bfloat16: noise
  assert_int_equal(last.planes[1].codec, ExponentCodec());    // sign and exponent: coded, kept
  std::vector<uint8_t> bad_frame = good, bad_raw = good;
  const uint64_t frame = last.offset + last.planes[0].stored_size;
  for (uint64_t i = frame + 8; i < frame + last.planes[1].stored_size; i += 97) bad_frame[i] ^= 0x5a;
  bad_raw[last.offset + 12345] ^= 1;  // the stored checksum covers only coded planes: the raw checksum must catch it
  for (int threads : {1, 2}) {
    for (const std::vector<uint8_t> *bad : {&bad_frame, &bad_raw}) {
      assert_true(ReadAllInto(good, tensors, threads).ok());
      const tw::Status status = ReadAllInto(*bad, tensors, threads);
      assert_int_equal(status.code(), TW_DATA_LOSS);
      assert_non_null(std::strstr(status.message().c_str(), "tensor 'h' chunk 1 of 2"));
    }
  }
}

static void planes_that_do_not_compress_are_stored_raw(void **state) {
  (void)state;
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  std::vector<Owned> tensors = {MakeTensor("gauss", TW_FLOAT32, {1 << 16}, 1),
                                MakeTensor("noise", TW_INT32, {1 << 16}, 2),
                                Owned{"zeros", TW_INT32, {1 << 16}, std::vector<uint8_t>(4 << 16, 0)}};
  std::vector<tw::TensorRef> refs;
  for (Owned &t : tensors) refs.push_back(t.ref());
  const std::string path = std::string(dir.path) + "/ckpt";
  assert_true(ckpt::WriteCheckpoint(path, refs).ok());
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
  const ckpt::Chunk &gauss = reader->Find("gauss")->chunks.at(0);
  assert_int_equal(reader->Find("gauss")->filter, ckpt::Filter::kBytePlanes);
  assert_int_equal(gauss.plane_count, 4);
  assert_int_equal(gauss.planes[0].codec, ckpt::Codec::kRaw);  // low mantissa byte: noise
  assert_int_equal(gauss.planes[3].codec, ExponentCodec());    // sign + exponent: tiered- or Huffman-coded
  assert_true(gauss.planes[3].stored_size < (1u << 16) / 2);
  const ckpt::Chunk &noise = reader->Find("noise")->chunks.at(0);
  assert_int_equal(reader->Find("noise")->filter, ckpt::Filter::kBytePlanes);  // integers too, from version 4
  for (int p = 0; p < 4; ++p) {
    assert_int_equal(noise.planes[p].codec, ckpt::Codec::kRaw);
    assert_int_equal(noise.planes[p].stored_size, 1u << 16);
  }
  const ckpt::Chunk &zeros = reader->Find("zeros")->chunks.at(0);
  for (int p = 0; p < 4; ++p) assert_int_equal(zeros.planes[p].codec, ckpt::Codec::kZstd);
  // The frame carries its content size (pledged size), so a reader can check it before decoding.
  const std::vector<uint8_t> bytes = ReadAll(path);
  assert_int_equal(ZSTD_getFrameContentSize(bytes.data() + zeros.offset, zeros.planes[0].stored_size), 1u << 16);
  reader.reset();
  scratch_dir_destroy(&dir);
}

static void every_bit_flip_is_detected(void **state) {
  (void)state;
  std::vector<Owned> tensors;
  const std::vector<uint8_t> good = SmallCheckpoint(&tensors);
  AssertEveryBitFlipIsDetected(good, tensors);
}

// The tail the coded-plane file tests share: `tensors` read back from `file`, and a flip of any bit at
// `positions`, of the file's header, index and footer, and of 100 random places is detected.
static void ExpectReadsBackAndFlipsAreDetected(const std::vector<uint8_t> &file, std::vector<Owned> &tensors,
                                               ckpt::CheckpointReader *reader, std::vector<size_t> *positions) {
  uint64_t index_offset = 0;
  std::memcpy(&index_offset, file.data() + file.size() - ckpt::kFooterSize, 8);
  for (size_t i = 0; i < ckpt::kHeaderSize; ++i) positions->push_back(i);
  for (size_t i = static_cast<size_t>(index_offset); i < file.size(); ++i) positions->push_back(i);
  std::mt19937 rng(8);
  for (int i = 0; i < 100; ++i) positions->push_back(rng() % file.size());
  std::vector<uint8_t> restored(tensors[0].bytes.size());
  assert_true(reader->ReadInto({{reader->Find(tensors[0].name), restored.data()}}, 2).ok());
  assert_true(restored == tensors[0].bytes);
  AssertEveryBitFlipIsDetected(file, tensors, *positions);
}

// The formats before 1.0, read only by a build with legacy formats (test_legacy_formats.cc has the
// cases of a build without them).
#if TW_LEGACY_FORMATS
// A checked-in file of an older format version (the tensors of Version1Tensors) opens, verifies and
// reads back every tensor, through the reader and through LoadVariable. Returns its bytes.
static std::vector<uint8_t> ExpectOldFileReads(const std::string &path, uint32_t version,
                                               const std::vector<Owned> &tensors, size_t size = 2998) {
  const std::vector<uint8_t> file = ReadAll(path);
  assert_int_equal(file.size(), size);
  assert_int_equal(VersionOf(file), version);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(path, &reader).ok());
  assert_true(reader->Verify().ok());
  assert_int_equal(reader->tensors().size(), tensors.size());
  for (const Owned &t : tensors) {
    std::vector<uint8_t> restored(t.bytes.size(), 0xA5);
    assert_true(reader->ReadInto({{reader->Find(t.name), restored.data()}}).ok());
    assert_true(restored == t.bytes);
  }
  Owned weights = tensors[0];
  std::fill(weights.bytes.begin(), weights.bytes.end(), 0);
  assert_true(ckpt::LoadVariable(path, weights.ref()).ok());
  assert_true(weights.bytes == tensors[0].bytes);
  return file;
}

// Files of format version 1 (XXH64 chunk checksums) load and verify, through a mapped file and from
// memory, and every bit flip in one is still detected.
static void version_1_files_still_load_and_verify(void **state) {
  (void)state;
  const std::vector<Owned> tensors = Version1Tensors();
  const std::vector<uint8_t> file = ExpectOldFileReads(kVersion1File, 1, tensors);
  AssertEveryBitFlipIsDetected(file, tensors);
}

// Files of format version 2 (XXH3 checksums, zstd and raw planes only, an unseeded index checksum)
// load and verify, and a bit flip is detected in every bit of its header (one turns its version into
// 3), index and footer and of every 4th byte of its chunks (version 3's test below flips every bit of
// chunks under the same checksums).
static void version_2_files_still_load_and_verify(void **state) {
  (void)state;
  const std::vector<Owned> tensors = Version1Tensors();
  const std::vector<uint8_t> file = ExpectOldFileReads(kVersion2File, 2, tensors);
  uint64_t index_offset = 0;
  std::memcpy(&index_offset, file.data() + file.size() - ckpt::kFooterSize, 8);
  std::vector<size_t> positions;
  for (size_t i = 0; i < file.size(); ++i) {
    if (i < ckpt::kHeaderSize || i >= index_offset || i % 4 == 0) positions.push_back(i);
  }
  AssertEveryBitFlipIsDetected(file, tensors, positions);
}

// Files of format version 3 (integers in one plane) load and verify, and every bit flip is detected.
static void version_3_files_still_load_and_verify(void **state) {
  (void)state;
  const std::vector<Owned> tensors = Version1Tensors();
  const std::vector<uint8_t> file = ExpectOldFileReads(kVersion3File, 3, tensors);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "v3", &reader).ok());
  assert_int_equal(reader->Find("noise")->filter, ckpt::Filter::kNone);
  assert_int_equal(reader->Find("weights")->filter, ckpt::Filter::kBytePlanes);
  AssertEveryBitFlipIsDetected(file, tensors);
}

// Files of format version 4 (integers in byte planes, raw checksums of the joined bytes) load and
// verify, and every bit flip is detected.
static void version_4_files_still_load_and_verify(void **state) {
  (void)state;
  const std::vector<Owned> tensors = Version1Tensors();
  const std::vector<uint8_t> file = ExpectOldFileReads(kVersion4File, 4, tensors, 3633);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "v4", &reader).ok());
  assert_int_equal(reader->Find("noise")->filter, ckpt::Filter::kBytePlanes);
  AssertEveryBitFlipIsDetected(file, tensors);
}

// Files of format version 5 (raw checksums over plane digests, no origin record) load and verify, have
// no origin (so no saver ever finds one by name as its own, C19), and every bit flip is detected.
static void version_5_files_still_load_and_verify(void **state) {
  (void)state;
  const std::vector<Owned> tensors = Version1Tensors();
  const std::vector<uint8_t> file = ExpectOldFileReads(kVersion5File, 5, tensors, 3633);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "v5", &reader).ok());
  assert_true(ckpt::IsNoJob(reader->origin().job));
  assert_true(reader->origin().name.empty());
  AssertEveryBitFlipIsDetected(file, tensors);
}

#endif  // TW_LEGACY_FORMATS

// From version 6 the index opens with the file's origin (C19): the job identity the writer was given
// and the file's basename. A file written outside a saver records no job. Every bit flip inside the
// origin record is detected (the index checksum covers it).
static void the_origin_is_recorded_and_its_bit_flips_are_detected(void **state) {
  (void)state;
  std::vector<Owned> tensors = Version1Tensors();
  std::vector<tw::TensorRef> refs;
  for (Owned &t : tensors) refs.push_back(t.ref());
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string path = std::string(dir.path) + "/model.ckpt-7";
  ckpt::WriteOptions options;
  options.chunk_bytes = 512;
  for (size_t i = 0; i < ckpt::kJobIdBytes; ++i) options.job[i] = static_cast<uint8_t>(0xA0 + i);
  assert_true(ckpt::WriteCheckpoint(path, refs, options).ok());
  const std::vector<uint8_t> file = ReadAll(path);
  assert_true(ckpt::WriteCheckpoint(path, refs).ok());  // outside a saver: no job
  const std::vector<uint8_t> no_job = ReadAll(path);
  scratch_dir_destroy(&dir);
  assert_int_equal(VersionOf(file), 6);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(no_job.data(), no_job.size(), "small", &reader).ok());
  assert_true(ckpt::IsNoJob(reader->origin().job));
  assert_string_equal(reader->origin().name.c_str(), "model.ckpt-7");
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "small", &reader).ok());
  assert_true(reader->origin().job == options.job);
  assert_string_equal(reader->origin().name.c_str(), "model.ckpt-7");
  ckpt::Footer footer;
  assert_true(ckpt::ParseFooter(file.data() + file.size() - ckpt::kFooterSize, file.size(), "f", &footer).ok());
  // The record: 16 bytes of job, a u32 name size, the name, at the start of the index.
  std::string record;
  ckpt::AppendOrigin(reader->origin(), &record);
  assert_int_equal(record.size(), ckpt::kJobIdBytes + 4 + std::strlen("model.ckpt-7"));
  assert_int_equal(std::memcmp(file.data() + footer.index_offset, record.data(), record.size()), 0);
  std::vector<size_t> positions;
  for (size_t i = 0; i < record.size(); ++i) positions.push_back(footer.index_offset + i);
  AssertEveryBitFlipIsDetected(file, tensors, positions);
}

// The XXH3-64 of each of a chunk's planes, as version 5's raw checksum combines them.
static uint64_t PlaneDigests(const Owned &t, uint64_t begin, const ckpt::Chunk &chunk) {
  const size_t element = static_cast<size_t>(chunk.plane_count), count = chunk.raw_size / element;
  uint64_t digests[ckpt::kMaxPlanes];
  for (size_t p = 0; p < element; ++p) {
    std::vector<uint8_t> plane(count);
    for (size_t i = 0; i < count; ++i) plane[i] = t.bytes[begin + i * element + p];
    digests[p] = ckpt::Xxh3(plane.data(), count);
  }
  uint8_t bytes[8 * ckpt::kMaxPlanes];
  for (size_t i = 0; i < 8 * element; ++i) bytes[i] = static_cast<uint8_t>(digests[i / 8] >> (8 * (i % 8)));
  return ckpt::Xxh3(bytes, 8 * element);
}

// New files are version 6 (version 5's chunks and checksums, and an origin): every chunk checksum is XXH3-64; the raw
// checksum of an unfiltered chunk is of its raw bytes, of a byte-plane chunk of its planes' digests (so a reader proves
// planes without joining them); the stored checksum of the stored coded planes (zstd frames, Huffman- and tiered-coded
// planes; the raw planes are covered by the raw checksum). Every bit flip is still detected — in coded
// planes, in raw planes, anywhere.
static void new_files_are_version_6_with_xxh3_checksums(void **state) {
  (void)state;
  std::vector<Owned> tensors = Version1Tensors();
  const std::vector<uint8_t> file = CheckpointBytes(tensors, 512);  // as data/v1.ckpt was written
  assert_int_equal(VersionOf(file), 6);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "small", &reader).ok());
  size_t chunks = 0, zstd_planes = 0;
  for (const Owned &t : tensors) {
    uint64_t begin = 0;
    const ckpt::TensorEntry *entry = reader->Find(t.name);
    for (const ckpt::Chunk &chunk : entry->chunks) {
      assert_true(chunk.raw_checksum == (entry->filter == ckpt::Filter::kBytePlanes
                                             ? PlaneDigests(t, begin, chunk)
                                             : ckpt::Xxh3(t.bytes.data() + begin, chunk.raw_size)));
      std::vector<uint8_t> frames;
      uint64_t at = chunk.offset;
      for (int p = 0; p < chunk.plane_count; ++p) {
        if (chunk.planes[p].codec != ckpt::Codec::kRaw) {
          frames.insert(frames.end(), file.begin() + static_cast<ptrdiff_t>(at),
                        file.begin() + static_cast<ptrdiff_t>(at + chunk.planes[p].stored_size));
          ++zstd_planes;
        }
        at += chunk.planes[p].stored_size;
      }
      assert_true(chunk.stored_checksum == ckpt::Xxh3(frames.data(), frames.size()));
      begin += chunk.raw_size;
      ++chunks;
    }
  }
  assert_int_equal(chunks, 16);       // as in data/v1.ckpt
  assert_int_equal(zstd_planes, 35);  // weights 2, bias 1, zeros 32 (four planes a chunk): zstd or Huffman
  AssertEveryBitFlipIsDetected(file, tensors);
  // Versions this library does not read are refused, naming the version.
  for (uint32_t version : {0u, 7u, 0x01000000u}) {
    std::vector<uint8_t> other = file;
    std::memcpy(other.data() + 8, &version, 4);
    const tw::Status status = ckpt::CheckpointReader::OpenMemory(other.data(), other.size(), "small", &reader);
    assert_int_equal(status.code(), TW_DATA_LOSS);
    assert_non_null(std::strstr(status.message().c_str(), ("format version " + std::to_string(version)).c_str()));
  }
}

// A file whose bfloat16 exponent plane is Huffman-coded (codec 2, the writer's choice for sampled
// planes of 64 KiB and more before version 5, and where a tiered code would be too large): it reads
// back, and a bit flip is detected anywhere in the coded plane's table and stream sizes, at the ends of
// every stream, in the header, index and footer, and at 100 random places (every bit of a 90 KB file
// would take many minutes under the sanitizers).
static void huffman_planes_round_trip_and_every_bit_flip_is_detected(void **state) {
  (void)state;
  std::vector<Owned> tensors = {MakeTensor("w", TW_BFLOAT16, {1 << 16}, 31), MakeTensor("step", TW_INT64, {}, 32)};
  const std::vector<uint8_t> file =
      CheckpointBytes(tensors, 128 << 10, ckpt::TieredPlanes::kNever);  // one chunk: planes of 64 KiB
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "small", &reader).ok());
  std::vector<size_t> positions;
  size_t huffman = 0;
  for (const ckpt::Chunk &c : reader->Find("w")->chunks) {
    assert_int_equal(c.planes[0].codec, ckpt::Codec::kRaw);
    assert_int_equal(c.planes[1].codec, ckpt::Codec::kHuffman);
    assert_true(c.planes[1].stored_size < c.raw_size / 2 * 36 / 100);  // ~2.7 bits per exponent byte
    const size_t plane = static_cast<size_t>(c.offset + c.planes[0].stored_size);
    ckpt::HuffmanLengths lengths;
    size_t table = 0;
    std::string why;
    assert_true(ckpt::ReadHuffmanTable(file.data() + plane, c.planes[1].stored_size, &lengths, &table, &why));
    size_t at = plane + table + 12;
    for (size_t i = plane; i < at; ++i) positions.push_back(i);
    for (int k = 0; k < ckpt::kHuffmanStreams; ++k) {
      uint32_t size = 0;
      if (k < 3) {
        std::memcpy(&size, file.data() + plane + table + 4 * k, 4);
      } else {
        size = static_cast<uint32_t>(plane + c.planes[1].stored_size - at);
      }
      positions.push_back(at), positions.push_back(at + size - 1);
      at += size;
    }
    ++huffman;
  }
  assert_int_equal(huffman, 1);
  ExpectReadsBackAndFlipsAreDetected(file, tensors, reader.get(), &positions);
}

// The same file with the exponent plane tiered-coded (codec 3, version 5; the writer's default where the
// CPU decodes them with AVX-512), a few percent larger than Huffman's; a bit flip is detected anywhere in its header
// (widths, symbols, counts), at the ends of every stream and of the raw bytes, in the file's header, index and footer,
// and at 100 random places.
static void tiered_planes_round_trip_and_every_bit_flip_is_detected(void **state) {
  (void)state;
  std::vector<Owned> tensors = {MakeTensor("w", TW_BFLOAT16, {1 << 16}, 31), MakeTensor("step", TW_INT64, {}, 32)};
  const std::vector<uint8_t> file = CheckpointBytes(tensors, 128 << 10, ckpt::TieredPlanes::kAlways);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "small", &reader).ok());
  std::vector<size_t> positions;
  const ckpt::Chunk &c = reader->Find("w")->chunks.at(0);
  assert_int_equal(c.planes[0].codec, ckpt::Codec::kRaw);
  assert_int_equal(c.planes[1].codec, ckpt::Codec::kTiered);
  assert_true(c.planes[1].stored_size < c.raw_size / 2 * 38 / 100);  // ~2.8 bits per exponent byte
  const size_t plane = static_cast<size_t>(c.offset + c.planes[0].stored_size);
  const uint8_t *coded = file.data() + plane;
  const int tiers = coded[0];
  assert_true(tiers >= 1 && tiers <= 3);
  size_t header = 1;
  int width[3] = {};
  for (int t = 0; t < tiers; ++t) width[t] = coded[header], header += 1 + ((1u << width[t]) - 1);
  uint64_t count[4] = {uint64_t{1} << 16};  // tier 1 codes every byte of the plane
  for (int t = 0; t < tiers; ++t) {
    uint32_t n = 0;
    std::memcpy(&n, coded + header + 4 * t, 4);
    count[t + 1] = n;
  }
  header += 4 * static_cast<size_t>(tiers);
  for (size_t i = 0; i < header; ++i) positions.push_back(plane + i);
  size_t at = plane + header;
  for (int t = 0; t <= tiers; ++t) {  // the tiers' streams, then the raw bytes
    const size_t size = t < tiers ? (count[t] * static_cast<uint64_t>(width[t]) + 7) / 8 : count[t];
    if (size != 0) positions.push_back(at), positions.push_back(at + size - 1);
    at += size;
  }
  assert_int_equal(at, plane + c.planes[1].stored_size);  // the parts tile the plane
  ExpectReadsBackAndFlipsAreDetected(file, tensors, reader.get(), &positions);
}

// A codec claimed by a file of a version before the codec's: the index of a file the writer gives
// `codec` (under `tiered_planes`) is refused when it says it is of `version` (its index checksum
// reseeded to match).
static void ExpectCodecRefusedInVersion(ckpt::Codec codec, ckpt::TieredPlanes tiered_planes, uint32_t version) {
  std::vector<Owned> tensors = {MakeTensor("w", TW_BFLOAT16, {1 << 16}, 31)};
  std::vector<uint8_t> file = CheckpointBytes(tensors, 128 << 10, tiered_planes);
  ckpt::Footer footer;
  assert_true(ckpt::ParseFooter(file.data() + file.size() - ckpt::kFooterSize, file.size(), "f", &footer).ok());
  std::vector<ckpt::TensorEntry> entries;
  ckpt::Origin origin;
  assert_true(
      ckpt::ParseIndex(file.data() + footer.index_offset, footer, "f", &entries, ckpt::kFormatVersion, &origin).ok());
  assert_int_equal(entries[0].chunks[0].planes[1].codec, codec);
  // The same index without its origin record (older versions have none), under the older version's seed.
  std::string record;
  ckpt::AppendOrigin(origin, &record);
  const uint8_t *older_index = file.data() + footer.index_offset + record.size();
  ckpt::Footer as_older = footer;
  as_older.index_size -= record.size();
  as_older.index_xxh64 = ckpt::Xxh64(older_index, as_older.index_size, ckpt::IndexChecksumSeed(version));
  const tw::Status status = ckpt::ParseIndex(older_index, as_older, "f", &entries, version);
  assert_int_equal(status.code(), TW_DATA_LOSS);
  assert_non_null(std::strstr(status.message().c_str(), "bad plane 1"));
}

// Codec 3 exists from version 5 on: a version-4 file that claims it is refused by the index parser.
static void tiered_planes_are_refused_in_version_4_files(void **state) {
  (void)state;
  ExpectCodecRefusedInVersion(ckpt::Codec::kTiered, ckpt::TieredPlanes::kAlways, 4);
}

// Codec 2 exists from version 3 on: a version-2 file that claims it is refused by the index parser.
static void huffman_planes_are_refused_in_version_2_files(void **state) {
  (void)state;
  ExpectCodecRefusedInVersion(ckpt::Codec::kHuffman, ckpt::TieredPlanes::kNever, 2);
}

// Zeros and constants compress as before codec 2: zstd codes their runs far below Huffman's 1 bit per
// byte, and the writer keeps them with zstd (float planes, unfiltered chunks).
// Small planes (a model's biases and norms) are not sampled: their bytes are counted, and a plane whose
// entropy and code table leave Huffman coding nothing to save goes to zstd alone (mantissa noise: then
// stored raw). zstd's smaller table still shrinks an exponent plane too short for Huffman's.
static void small_planes_skip_huffman_where_it_cannot_shrink_them(void **state) {
  (void)state;
  std::vector<Owned> tensors = {MakeTensor("bias", TW_FLOAT32, {256}, 7), MakeTensor("norm", TW_BFLOAT16, {64}, 8),
                                MakeTensor("layer", TW_FLOAT32, {4096}, 9)};
  const std::vector<uint8_t> file = CheckpointBytes(tensors, ckpt::kDefaultChunkBytes);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "small", &reader).ok());
  const ckpt::Chunk &bias = reader->Find("bias")->chunks.at(0);
  const ckpt::Chunk &norm = reader->Find("norm")->chunks.at(0);
  assert_int_equal(bias.plane_count, 4);
  assert_int_equal(bias.planes[0].codec, ckpt::Codec::kRaw);  // low mantissa byte: noise
  assert_int_equal(bias.planes[1].codec, ckpt::Codec::kRaw);
  assert_int_not_equal(bias.planes[3].codec, ckpt::Codec::kRaw);  // sign + exponent: the smaller coding
  assert_int_equal(reader->Find("layer")->chunks.at(0).planes[3].codec, ExponentCodec());
  assert_int_equal(norm.plane_count, 2);
  assert_int_equal(norm.planes[1].codec, ckpt::Codec::kZstd);  // 64 exponent bytes: Huffman's table alone is 32
  assert_true(norm.planes[1].stored_size < 64);
  for (const Owned &t : tensors) {
    std::vector<uint8_t> restored(t.bytes.size());
    assert_true(reader->ReadInto({{reader->Find(t.name), restored.data()}}).ok());
    assert_true(restored == t.bytes);
  }
}

// From version 4, integers wider than a byte are split into byte planes as floats are: token ids or
// counts leave their high bytes zero, which zstd codes to nearly nothing, and their noisy low bytes
// raw, instead of zstd's slow matching of the whole elements (4× less CPU for int64 ids).
static void integers_wider_than_a_byte_are_split_into_planes(void **state) {
  (void)state;
  Owned ids{"ids", TW_INT64, {1 << 16}, {}};
  std::mt19937 rng(11);
  for (int i = 0; i < (1 << 16); ++i) {
    const int64_t id = static_cast<int64_t>(rng() % 50000);
    const auto *p = reinterpret_cast<const uint8_t *>(&id);
    ids.bytes.insert(ids.bytes.end(), p, p + 8);
  }
  std::vector<Owned> tensors = {ids, Owned{"flags", TW_UINT8, {1000}, std::vector<uint8_t>(1000, 1)}};
  const std::vector<uint8_t> file = CheckpointBytes(tensors, ckpt::kDefaultChunkBytes);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "ids", &reader).ok());
  const ckpt::TensorEntry &entry = *reader->Find("ids");
  assert_int_equal(entry.filter, ckpt::Filter::kBytePlanes);
  const ckpt::Chunk &chunk = entry.chunks.at(0);
  assert_int_equal(chunk.plane_count, 8);
  assert_int_equal(chunk.planes[0].codec, ckpt::Codec::kRaw);  // the low byte: noise
  for (int p = 2; p < 8; ++p) {                                // ids < 50000 leave bytes 2 to 7 zero
    assert_int_equal(chunk.planes[p].codec, ckpt::Codec::kZstd);
    assert_true(chunk.planes[p].stored_size < 64);
  }
  assert_int_equal(reader->Find("flags")->filter, ckpt::Filter::kNone);  // one-byte elements: one plane
  for (const Owned &t : tensors) {
    std::vector<uint8_t> restored(t.bytes.size(), 0xA5);
    assert_true(reader->ReadInto({{reader->Find(t.name), restored.data()}}).ok());
    assert_true(restored == t.bytes);
  }
}

static void zeros_and_constants_stay_with_zstd(void **state) {
  (void)state;
  std::vector<Owned> tensors;
  for (int32_t dtype : {TW_FLOAT32, TW_BFLOAT16, TW_FLOAT64, TW_INT32}) {
    Owned zeros{std::string("zeros/") + tw::DtypeName(dtype), dtype, {1 << 18}, {}};
    zeros.bytes.assign((size_t{1} << 18) * tw::DtypeSize(dtype), 0);
    Owned constant{std::string("constant/") + tw::DtypeName(dtype), dtype, {1 << 18}, {}};
    for (size_t i = 0; i < (size_t{1} << 18); ++i) {
      const uint8_t one[8] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F};  // 1.0 as float64
      const size_t size = tw::DtypeSize(dtype);
      constant.bytes.insert(constant.bytes.end(), one + 8 - size, one + 8);  // 1.0 in float32 and bfloat16 too
    }
    tensors.push_back(std::move(zeros));
    tensors.push_back(std::move(constant));
  }
  const std::vector<uint8_t> file = CheckpointBytes(tensors, ckpt::kDefaultChunkBytes);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::OpenMemory(file.data(), file.size(), "small", &reader).ok());
  for (const Owned &t : tensors) {
    for (const ckpt::Chunk &c : reader->Find(t.name)->chunks) {
      for (int p = 0; p < c.plane_count; ++p) {
        assert_int_equal(c.planes[p].codec, ckpt::Codec::kZstd);
        // The same frame zstd made of this plane before codec 2 existed: the writer's zstd path is unchanged.
        assert_true(c.planes[p].stored_size < 200);
      }
    }
  }
  std::vector<uint8_t> restored(tensors[1].bytes.size());
  assert_true(reader->ReadInto({{reader->Find(tensors[1].name), restored.data()}}).ok());
  assert_true(restored == tensors[1].bytes);
}

static void every_truncation_is_detected(void **state) {
  (void)state;
  std::vector<Owned> tensors;
  const std::vector<uint8_t> good = SmallCheckpoint(&tensors);
  scratch_dir dir;
  assert_int_equal(scratch_dir_create(&dir), 0);
  const std::string path = std::string(dir.path) + "/truncated";
  for (size_t size = 0; size < good.size(); ++size) {
    const std::vector<uint8_t> prefix(good.begin(), good.begin() + static_cast<ptrdiff_t>(size));
    bool untouched = true;
    assert_int_equal(OpenVerifyRead(prefix, tensors, &untouched).code(), TW_DATA_LOSS);
    WriteAll(path, prefix);  // the same through a real file and mmap
    std::unique_ptr<ckpt::CheckpointReader> reader;
    assert_int_equal(ckpt::CheckpointReader::Open(path, &reader).code(), TW_DATA_LOSS);
  }
  scratch_dir_destroy(&dir);
}

static void random_bytes_never_crash(void **state) {
  (void)state;
  std::vector<Owned> tensors;
  const std::vector<uint8_t> good = SmallCheckpoint(&tensors);
  std::mt19937 rng(99);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bad = good;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
    bool untouched = true;
    const tw::Status status = OpenVerifyRead(bad, tensors, &untouched);
    assert_true(status.ok() || IsDamageStatus(status, bad));
    if (status.ok()) assert_true(bad == good);  // an edit that changed nothing
  }
}

static void missing_file_is_not_found(void **state) {
  (void)state;
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_int_equal(ckpt::CheckpointReader::Open("/nonexistent/dir/model.ckpt-1", &reader).code(), TW_NOT_FOUND);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(xxh64_matches_reference_values),
    cmocka_unit_test(xxh64_stream_matches_one_shot),
    cmocka_unit_test(byte_planes_split_and_join),
    cmocka_unit_test(round_trip_every_dtype_and_shape),
    cmocka_unit_test(round_trip_tensor_larger_than_a_chunk),
    cmocka_unit_test(kept_planes_within_any_budget_read_the_same_bytes),
    cmocka_unit_test(kept_planes_memory_is_reused_across_reads_of_different_sizes),
    cmocka_unit_test(a_corrupt_chunk_fails_with_reused_kept_planes),
    cmocka_unit_test(planes_that_do_not_compress_are_stored_raw),
    cmocka_unit_test(integers_wider_than_a_byte_are_split_into_planes),
    cmocka_unit_test(small_planes_skip_huffman_where_it_cannot_shrink_them),
    cmocka_unit_test(every_bit_flip_is_detected),
#if TW_LEGACY_FORMATS
    cmocka_unit_test(version_1_files_still_load_and_verify),
    cmocka_unit_test(version_2_files_still_load_and_verify),
    cmocka_unit_test(version_3_files_still_load_and_verify),
    cmocka_unit_test(version_4_files_still_load_and_verify),
    cmocka_unit_test(version_5_files_still_load_and_verify),
#endif
    cmocka_unit_test(new_files_are_version_6_with_xxh3_checksums),
    cmocka_unit_test(the_origin_is_recorded_and_its_bit_flips_are_detected),
    cmocka_unit_test(huffman_planes_round_trip_and_every_bit_flip_is_detected),
    cmocka_unit_test(huffman_planes_are_refused_in_version_2_files),
    cmocka_unit_test(tiered_planes_round_trip_and_every_bit_flip_is_detected),
    cmocka_unit_test(tiered_planes_are_refused_in_version_4_files),
    cmocka_unit_test(zeros_and_constants_stay_with_zstd),
    cmocka_unit_test(every_truncation_is_detected),
    cmocka_unit_test(random_bytes_never_crash),
    cmocka_unit_test(missing_file_is_not_found),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
