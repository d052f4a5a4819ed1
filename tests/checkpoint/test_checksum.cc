// The chunk checksums (white-box): XXH3-64 — every SIMD loop this CPU runs, one-shot and streamed —
// against libxxhash's own build of it, and the hash each format version uses (format.h).
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <xxhash.h>  // the reference: the library's separately compiled XXH3_64bits and XXH64

#include "checkpoint/format/checksum.h"
#include "checkpoint/format/format.h"
#include "checkpoint/format/xxh3.h"
#include "checkpoint/format/xxhash64.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

constexpr ckpt::Isa kLevels[] = {ckpt::Isa::kBest, ckpt::Isa::kPortable, ckpt::Isa::kAvx2, ckpt::Isa::kAvx512,
                                 ckpt::Isa::kAvx512Vbmi};

std::vector<uint8_t> RandomBytes(size_t size, uint32_t seed) {
  std::vector<uint8_t> data(size);
  std::mt19937 rng(seed);
  for (uint8_t &b : data) b = static_cast<uint8_t>(rng());
  return data;
}

// Every length class of XXH3: 0, 1–3, 4–8, 9–16, 17–128, 129–240, then stripes (64 bytes), blocks
// (1 KiB) and a partial last stripe, up to a chunk-sized input.
const std::vector<size_t> &Sizes() {
  static const std::vector<size_t> sizes = {0,   1,   3,   4,    8,    9,    16,   17,    128,    129,           240,
                                            241, 255, 256, 1023, 1024, 1025, 4095, 16384, 100000, (1u << 20) + 7};
  return sizes;
}

}  // namespace

static void xxh3_matches_libxxhash_with_every_loop(void **state) {
  (void)state;
  assert_true(ckpt::Xxh3("", 0) == 0x2D06800538D394C2ULL);  // XXH3_64bits of no input (xxHash's tests)
  const std::vector<uint8_t> data = RandomBytes((1u << 20) + 64, 5);
  int levels = 0;
  for (ckpt::Isa isa : kLevels) {
    if (!ckpt::IsaRuns(isa)) continue;
    ++levels;
    for (size_t size : Sizes()) {
      for (size_t misalign : {0, 1, 7}) {  // the loops load unaligned
        const uint8_t *at = data.data() + misalign;
        if (ckpt::Xxh3(at, size, isa) != XXH3_64bits(at, size)) {
          fail_msg("level %s, %zu bytes at +%zu", ckpt::IsaName(isa), size, misalign);
        }
      }
    }
  }
  assert_true(levels >= 2);  // the best one and the portable one (SSE2 on x86-64) at least
}

// The writer hashes the tiles it splits and a reader the tiles it joins: any split into pieces must
// give the one-shot hash.
static void xxh3_stream_matches_one_shot(void **state) {
  (void)state;
  const std::vector<uint8_t> data = RandomBytes(70000, 11);
  for (ckpt::Isa isa : kLevels) {
    if (!ckpt::IsaRuns(isa)) continue;
    for (size_t size : {0, 5, 240, 241, 1024, 1025, 69999}) {
      for (size_t piece : {1, 63, 64, 256, 4096, 16384}) {
        ckpt::Xxh3Stream stream(isa);
        for (size_t at = 0; at < size; at += piece) stream.Update(data.data() + at, std::min(piece, size - at));
        if (stream.Digest() != XXH3_64bits(data.data(), size)) {
          fail_msg("level %s, %zu bytes in pieces of %zu", ckpt::IsaName(isa), size, piece);
        }
      }
    }
  }
}

// XXH64 (the index checksum, and version 1's chunk checksum) is libxxhash's: the same as the library's
// separately compiled XXH64, one-shot and in pieces, with and without a seed.
static void xxh64_matches_libxxhash(void **state) {
  (void)state;
  const std::vector<uint8_t> data = RandomBytes(70000, 13);
  for (uint64_t seed : {uint64_t{0}, uint64_t{5}, ~uint64_t{0}}) {
    for (size_t size : {0, 1, 3, 4, 7, 8, 31, 32, 33, 100, 1024, 69999}) {
      assert_true(ckpt::Xxh64(data.data(), size, seed) == XXH64(data.data(), size, seed));
      for (size_t piece : {1, 7, 32, 33, 4096}) {
        ckpt::Xxh64Stream stream(seed);
        for (size_t at = 0; at < size; at += piece) stream.Update(data.data() + at, std::min(piece, size - at));
        if (stream.Digest() != XXH64(data.data(), size, seed)) fail_msg("%zu bytes in pieces of %zu", size, piece);
      }
    }
  }
}

static void chunk_checksums_follow_the_format_version(void **state) {
  (void)state;
  assert_int_equal(ckpt::ChunkHashOf(1), ckpt::ChunkHash::kXxh64);
  assert_int_equal(ckpt::ChunkHashOf(2), ckpt::ChunkHash::kXxh3);
  assert_int_equal(ckpt::ChunkHashOf(4), ckpt::ChunkHash::kXxh3);
  assert_int_equal(ckpt::ChunkHashOf(5), ckpt::ChunkHash::kXxh3Planes);
  assert_int_equal(ckpt::ChunkHashOf(ckpt::kFormatVersion), ckpt::ChunkHash::kXxh3Planes);
  const std::vector<uint8_t> data = RandomBytes(5000, 3);
  for (size_t size : {0, 31, 32, 4999}) {
    assert_true(ckpt::ChunkChecksum(ckpt::ChunkHash::kXxh64, data.data(), size) == ckpt::Xxh64(data.data(), size));
    assert_true(ckpt::ChunkChecksum(ckpt::ChunkHash::kXxh3, data.data(), size) == XXH3_64bits(data.data(), size));
    // Version 5 hashes whole bytes (an unfiltered chunk, the stored planes) with XXH3 too.
    assert_true(ckpt::ChunkChecksum(ckpt::ChunkHash::kXxh3Planes, data.data(), size) == XXH3_64bits(data.data(), size));
    for (ckpt::ChunkHash hash : {ckpt::ChunkHash::kXxh64, ckpt::ChunkHash::kXxh3, ckpt::ChunkHash::kXxh3Planes}) {
      ckpt::ChunkChecksumStream stream(hash);
      for (size_t at = 0; at < size; at += 1000) stream.Update(data.data() + at, std::min<size_t>(1000, size - at));
      assert_true(stream.Digest() == ckpt::ChunkChecksum(hash, data.data(), size));
    }
  }
  assert_true(ckpt::Xxh3(data.data(), 100) != ckpt::Xxh64(data.data(), 100));  // the versions differ
  // Version 5's raw checksum of a byte-plane chunk: XXH3 of the planes' digests, 8 bytes each, little-endian.
  const uint64_t digests[2] = {0x0123456789ABCDEFull, 0xFEDCBA9876543210ull};
  const uint8_t bytes[16] = {0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01,
                             0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};
  assert_true(ckpt::PlaneDigestsChecksum(digests, 2) == XXH3_64bits(bytes, 16));
  assert_true(ckpt::PlaneDigestsChecksum(digests, 1) == XXH3_64bits(bytes, 8));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(xxh3_matches_libxxhash_with_every_loop),
      cmocka_unit_test(xxh3_stream_matches_one_shot),
      cmocka_unit_test(xxh64_matches_libxxhash),
      cmocka_unit_test(chunk_checksums_follow_the_format_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
