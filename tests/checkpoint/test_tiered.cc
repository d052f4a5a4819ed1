// The tiered plane codec (codec 3, tiered.h) on its own: the code choice, round trips of every kind of
// plane through every loop (which must write the same bytes and decode alike), the encoder's bounds,
// and the decoder against crafted planes — each defect TW_DATA_LOSS with its reason — and random or
// mutated planes, which never read or write out of bounds (the buffers are exactly sized, so the
// sanitizer build catches any access past them) and on which every loop agrees.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/codec/tiered.h"
#include "exponent_plane.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;
using ckpt::Isa;

namespace {

std::vector<Isa> Loops() {
  std::vector<Isa> loops = {Isa::kPortable};
  for (Isa loop : {Isa::kAvx512Vbmi, Isa::kBest}) {
    if (ckpt::IsaRuns(loop)) loops.push_back(loop);
  }
  return loops;
}

std::vector<uint32_t> Counts(const std::vector<uint8_t> &plane) {
  std::vector<uint32_t> count(256);
  for (uint8_t b : plane) ++count[b];
  return count;
}

// A code of the given widths over the plane's byte values by count (ChooseTieredCode's order).
ckpt::TieredCode CodeOf(const std::vector<uint8_t> &plane, std::vector<int> widths) {
  const std::vector<uint32_t> count = Counts(plane);
  std::vector<int> order(256);
  for (int v = 0; v < 256; ++v) order[v] = v;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return count[a] > count[b]; });
  ckpt::TieredCode code;
  code.tiers = static_cast<int>(widths.size());
  int rank = 0;
  for (int t = 0; t < code.tiers; ++t) {
    code.width[t] = widths[t];
    for (int c = 0; c < (1 << widths[t]) - 1; ++c) code.symbol[t][c] = static_cast<uint8_t>(order[rank++]);
  }
  return code;
}

size_t HeaderBytes(const ckpt::TieredCode &code) {
  size_t bytes = 1 + 4 * static_cast<size_t>(code.tiers);
  for (int t = 0; t < code.tiers; ++t) bytes += size_t{1} << code.width[t];
  return bytes;
}

// Codes `plane` into a buffer with guard bytes after `capacity` (default: more than any plane needs),
// with a work area of TieredWorkBytes with guard bytes after it; the guard bytes must stay untouched.
// Empty when it does not fit. The portable loop, which counts first, refuses before writing anything.
std::vector<uint8_t> Encode(const std::vector<uint8_t> &plane, const ckpt::TieredCode &code, Isa loop = Isa::kBest,
                            size_t capacity = 0) {
  if (capacity == 0) capacity = 4 * plane.size() + 300;  // 3.25 bytes a byte at most (widths 6, 6, 6)
  std::vector<uint8_t> out(capacity + 64, 0xEE), work(ckpt::TieredWorkBytes(plane.size()) + 64, 0xEE);
  const size_t n = ckpt::TieredEncode(plane.data(), plane.size(), code, out.data(), capacity, work.data(), loop);
  for (size_t i = capacity; i < out.size(); ++i) {
    if (out[i] != 0xEE) fail_msg("loop %d: out[%zu] written, capacity %zu", static_cast<int>(loop), i, capacity);
  }
  for (size_t i = ckpt::TieredWorkBytes(plane.size()); i < work.size(); ++i) {
    if (work[i] != 0xEE)
      fail_msg("loop %d: work[%zu] written, %zu bytes given", static_cast<int>(loop), i,
               ckpt::TieredWorkBytes(plane.size()));
  }
  if (n == 0 && loop == Isa::kPortable) {
    for (size_t i = 0; i < capacity; ++i) assert_int_equal(out[i], 0xEE);
  }
  assert_true(n <= capacity);
  out.resize(n);
  return out;
}

// Decodes into an exactly sized buffer (so that ASan sees any write past it) from an exactly sized copy.
tw::Status Decode(const std::vector<uint8_t> &coded, size_t size, Isa loop = Isa::kBest,
                  std::vector<uint8_t> *plane = nullptr) {
  std::unique_ptr<uint8_t[]> in(new uint8_t[coded.size() + (coded.empty() ? 1 : 0)]);
  if (!coded.empty()) std::memcpy(in.get(), coded.data(), coded.size());
  std::unique_ptr<uint8_t[]> out(new uint8_t[size + (size == 0 ? 1 : 0)]);
  const tw::Status status = ckpt::TieredDecode(in.get(), coded.size(), out.get(), size, loop);
  if (plane != nullptr) plane->assign(out.get(), out.get() + size);
  return status;
}

// Every loop encodes `plane` with `code` to the portable loop's bytes, and every loop decodes them back.
std::vector<uint8_t> AssertRoundTrip(const std::vector<uint8_t> &plane, const ckpt::TieredCode &code) {
  const std::vector<uint8_t> expected = Encode(plane, code, Isa::kPortable);
  if (expected.empty()) {
    fail_msg("%zu bytes, T = %d, widths %d %d %d: not coded", plane.size(), code.tiers, code.width[0], code.width[1],
             code.width[2]);
  }
  for (Isa loop : Loops()) {
    if (Encode(plane, code, loop) != expected) {
      fail_msg("loop %d: %zu bytes, T = %d, widths %d %d %d: coded bytes differ", static_cast<int>(loop), plane.size(),
               code.tiers, code.width[0], code.width[1], code.width[2]);
    }
    std::vector<uint8_t> back;
    const tw::Status status = Decode(expected, plane.size(), loop, &back);
    if (!status.ok()) fail_msg("loop %d: %s", static_cast<int>(loop), status.message().c_str());
    if (back != plane) fail_msg("loop %d: %zu bytes decode to other bytes", static_cast<int>(loop), plane.size());
  }
  return expected;
}

void ExpectDataLoss(const std::vector<uint8_t> &coded, size_t size, const char *why) {
  for (Isa loop : Loops()) {
    const tw::Status status = Decode(coded, size, loop);
    if (status.code() != TW_DATA_LOSS) fail_msg("loop %d: '%s' accepted", static_cast<int>(loop), why);
    if (std::strstr(status.message().c_str(), why) == nullptr || status.message().rfind("tiered plane: ", 0) != 0)
      fail_msg("loop %d: '%s' lacks '%s'", static_cast<int>(loop), status.message().c_str(), why);
  }
}

// A coded plane written by hand: tables, counts (count_2 … raw_count), codes per stream and raw bytes,
// packed as the format says; nothing is checked.
std::vector<uint8_t> Craft(const std::vector<int> &widths, const std::vector<std::vector<uint8_t>> &symbols,
                           const std::vector<uint32_t> &counts, const std::vector<std::vector<int>> &codes,
                           const std::vector<uint8_t> &raw) {
  std::vector<uint8_t> out = {static_cast<uint8_t>(widths.size())};
  for (size_t t = 0; t < widths.size(); ++t) {
    out.push_back(static_cast<uint8_t>(widths[t]));
    out.insert(out.end(), symbols[t].begin(), symbols[t].end());
  }
  for (uint32_t c : counts) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(c >> (8 * b)));
  }
  for (size_t t = 0; t < codes.size(); ++t) {
    std::vector<uint8_t> stream((codes[t].size() * widths[t] + 7) / 8);
    size_t bit = 0;
    for (int c : codes[t]) {
      for (int i = 0; i < widths[t]; ++i, ++bit) stream[bit / 8] |= static_cast<uint8_t>((c >> i & 1) << (bit % 8));
    }
    out.insert(out.end(), stream.begin(), stream.end());
  }
  out.insert(out.end(), raw.begin(), raw.end());
  return out;
}

}  // namespace

// The choice on distributions whose best code is known (worked out by hand and by a brute-force script):
// the widths, the symbols by count (ties by value), the estimate, and the same answer every time.
static void code_choice_on_known_distributions(void **state) {
  (void)state;
  uint32_t count[256] = {};
  double bits = -1;
  count[7] = 1000;  // one value: one 1-bit code
  ckpt::TieredCode code = ckpt::ChooseTieredCode(count, &bits);
  assert_int_equal(code.tiers, 1);
  assert_int_equal(code.width[0], 1);
  assert_int_equal(code.symbol[0][0], 7);
  assert_true(bits == 1.0);

  std::memset(count, 0, sizeof count);
  count[30] = count[10] = count[20] = 1000;  // three equal values: 2 bits, by value; (1,1,1) ties but costs header
  code = ckpt::ChooseTieredCode(count, &bits);
  assert_int_equal(code.tiers, 1);
  assert_int_equal(code.width[0], 2);
  assert_int_equal(code.symbol[0][0], 10);
  assert_int_equal(code.symbol[0][1], 20);
  assert_int_equal(code.symbol[0][2], 30);
  assert_true(bits == 2.0);

  std::memset(count, 0, sizeof count);
  for (int v : {9, 1, 200, 77, 3}) count[v] = 1000;  // five equal values: 2 + 2/5 + 1/5 bits
  code = ckpt::ChooseTieredCode(count, &bits);
  assert_int_equal(code.tiers, 3);
  assert_int_equal(code.width[0], 2);
  assert_int_equal(code.width[1], 1);
  assert_int_equal(code.width[2], 1);
  const uint8_t five[5] = {1, 3, 9, 77, 200};
  assert_memory_equal(code.symbol[0], five, 3);
  assert_int_equal(code.symbol[1][0], 77);
  assert_int_equal(code.symbol[2][0], 200);
  assert_true(std::fabs(bits - 2.6) < 1e-12);

  std::memset(count, 0, sizeof count);
  for (int r = 0; r < 20; ++r) count[0x3F - r] = 1u << (20 - r);  // geometric: widths 1, 2, 2
  code = ckpt::ChooseTieredCode(count, &bits);
  assert_int_equal(code.tiers, 3);
  assert_int_equal(code.width[0], 1);
  assert_int_equal(code.width[1], 2);
  assert_int_equal(code.width[2], 2);
  assert_int_equal(code.symbol[0][0], 0x3F);
  assert_int_equal(code.symbol[1][0], 0x3E);
  assert_int_equal(code.symbol[2][2], 0x3F - 6);
  assert_true(std::fabs(bits - (4587678.0 - 23 * 8) / 2097150) < 1e-12);  // (bits − header) / bytes

  std::memset(count, 0, sizeof count);
  for (int v = 0; v < 200; ++v) count[v] = 100;  // 200 equal values: nothing beats one 1-bit tier
  code = ckpt::ChooseTieredCode(count, &bits);
  assert_int_equal(code.tiers, 1);
  assert_int_equal(code.width[0], 1);
  assert_true(std::fabs(bits - 8.96) < 1e-12);

  std::memset(count, 0, sizeof count);  // no counts at all: the smallest header
  code = ckpt::ChooseTieredCode(count, &bits);
  assert_int_equal(code.tiers, 1);
  assert_int_equal(code.width[0], 1);
  assert_true(bits == 0.0);

  // bfloat16 exponent planes: about 2.75 bits, three tiers; the estimate from the whole plane's counts
  // is the coded size within the header and each stream's last byte; the same code every time.
  for (float sigma : {0.02f, 1e-3f, 1.0f}) {
    const std::vector<uint8_t> plane = ExponentPlane(1 << 18, 5, sigma);
    const std::vector<uint32_t> counts = Counts(plane);
    code = ckpt::ChooseTieredCode(counts.data(), &bits);
    assert_int_equal(code.tiers, 3);
    assert_true(bits > 2.5 && bits < 3.0);
    const ckpt::TieredCode again = ckpt::ChooseTieredCode(counts.data());
    assert_int_equal(again.tiers, code.tiers);
    assert_memory_equal(again.width, code.width, sizeof code.width);
    assert_memory_equal(again.symbol, code.symbol, sizeof code.symbol);
    const std::vector<uint8_t> coded = AssertRoundTrip(plane, code);
    const double estimate = bits * static_cast<double>(plane.size()) / 8 + static_cast<double>(HeaderBytes(code));
    assert_true(static_cast<double>(coded.size()) >= estimate - 1e-6);
    assert_true(static_cast<double>(coded.size()) <= estimate + code.tiers);
  }
}

// Round trips through every loop, byte-identical to the portable encoder: every size from 1 to 200 and
// past the 64-byte steps, one to three tiers of every width, planes with no escapes, with raw bytes
// only, with all 256 values, of one value.
static void round_trips_of_every_loop(void **state) {
  (void)state;
  std::mt19937 rng(7);
  const auto plane_of_kind = [&rng](int kind, size_t size) {
    std::vector<uint8_t> plane = ExponentPlane(size, static_cast<uint32_t>(rng()), kind == 1 ? 1e-4f : 0.02f);
    for (size_t i = 0; i < size; ++i) {
      const uint32_t r = static_cast<uint32_t>(rng());
      if (kind == 2) plane[i] = static_cast<uint8_t>(r);                            // all 256 values
      if (kind == 3) plane[i] = 0x41;                                               // one value
      if (kind == 4) plane[i] = static_cast<uint8_t>(__builtin_ctz(r | 1u << 31));  // geometric
      if (kind == 5 && i / 64 % 3 == 0) plane[i] = static_cast<uint8_t>(r);         // blocks of noise
    }
    return plane;
  };
  std::vector<size_t> sizes;
  for (size_t size = 1; size <= 200; ++size) sizes.push_back(size);
  for (size_t size : {255, 256, 257, 1000, 4097, 65536, 65537, 200000}) sizes.push_back(size);
  const std::vector<std::vector<int>> fixed = {{1}, {6}, {3, 5}, {2, 2, 3}, {6, 6, 6}, {1, 1, 1}, {4, 3}};
  for (size_t size : sizes) {
    for (int kind = 0; kind < 6; ++kind) {
      const std::vector<uint8_t> plane = plane_of_kind(kind, size);
      AssertRoundTrip(plane, ckpt::ChooseTieredCode(Counts(plane).data()));
      for (const std::vector<int> &widths : fixed) AssertRoundTrip(plane, CodeOf(plane, widths));
    }
  }
  // Every width in every tier, on two sizes.
  for (size_t size : {size_t{131}, size_t{4099}}) {
    const std::vector<uint8_t> plane = plane_of_kind(2, size);
    for (int a = 1; a <= 6; ++a) {
      AssertRoundTrip(plane, CodeOf(plane, {a}));
      for (int b = 1; b <= 6; ++b) {
        AssertRoundTrip(plane, CodeOf(plane, {a, b}));
        for (int c = 1; c <= 6; ++c) AssertRoundTrip(plane, CodeOf(plane, {a, b, c}));
      }
    }
  }
  // No escapes: the plane's values all in tier 1. Raw bytes only: tiers of values the plane lacks.
  for (size_t size : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{5000}}) {
    std::vector<uint8_t> plane(size);
    for (uint8_t &b : plane) b = static_cast<uint8_t>(rng() % 7);
    const std::vector<uint8_t> coded = AssertRoundTrip(plane, CodeOf(plane, {3, 2}));
    assert_int_equal(coded.size(), 1 + 8 + 4 + 8 + (3 * size + 7) / 8);  // stream 2 and raw bytes empty
    ckpt::TieredCode absent;
    absent.tiers = 2, absent.width[0] = 2, absent.width[1] = 1;
    absent.symbol[0][0] = 200, absent.symbol[0][1] = 201, absent.symbol[0][2] = 202, absent.symbol[1][0] = 203;
    const std::vector<uint8_t> raw = AssertRoundTrip(plane, absent);
    assert_int_equal(raw.size(), 1 + 4 + 2 + 8 + (2 * size + 7) / 8 + (size + 7) / 8 + size);
  }
}

// The coded size is what the caller allows or nothing, never a byte past the capacity (Encode's guard
// bytes); exponent planes shrink to about 2.75 bits a byte, noise does not shrink.
static void encoder_respects_capacity(void **state) {
  (void)state;
  const std::vector<uint8_t> plane = ExponentPlane(1 << 16, 1);
  for (Isa loop : Loops()) {
    const ckpt::TieredCode code = ckpt::ChooseTieredCode(Counts(plane).data());
    const size_t n = Encode(plane, code, loop).size();
    assert_true(n > plane.size() * 30 / 100 && n < plane.size() * 36 / 100);
    assert_int_equal(Encode(plane, code, loop, n).size(), n);
    for (size_t capacity : {n - 1, n / 2, size_t{20}, size_t{1}})
      assert_true(Encode(plane, code, loop, capacity).empty());
    std::vector<uint8_t> noise(4096);
    std::mt19937 rng(2);
    for (uint8_t &b : noise) b = static_cast<uint8_t>(rng());
    assert_true(Encode(noise, ckpt::ChooseTieredCode(Counts(noise).data()), loop, noise.size() - 1).empty());
    // A code a reader would refuse is refused.
    ckpt::TieredCode bad = code;
    bad.symbol[1][0] = bad.symbol[0][0];
    assert_true(Encode(plane, bad, loop).empty());
    bad = code, bad.width[0] = 7;
    assert_true(Encode(plane, bad, loop).empty());
    bad = code, bad.tiers = 0;
    assert_true(Encode(plane, bad, loop).empty());
    uint8_t out[64];
    assert_int_equal(ckpt::TieredEncode(plane.data(), 0, code, out, sizeof out, nullptr, loop), 0);
  }
  // Every capacity around the coded size, by every loop: below it nothing, at or above it the portable
  // loop's bytes; planes whose tier 1 alone fits or does not, whose later streams or raw bytes are most
  // of the plane (widths 1, 1, 1 on noise: the work area's regions full), of one to three tiers.
  std::mt19937 rng(3);
  for (size_t size : {size_t{1}, size_t{63}, size_t{64}, size_t{130}, size_t{1000}}) {
    for (int kind = 0; kind < 2; ++kind) {
      std::vector<uint8_t> plane = ExponentPlane(size, static_cast<uint32_t>(rng()));
      if (kind == 1) {
        for (uint8_t &b : plane) b = static_cast<uint8_t>(rng());
      }
      for (const std::vector<int> &widths : std::vector<std::vector<int>>{{2}, {1, 1}, {2, 2, 3}, {1, 1, 1}}) {
        const ckpt::TieredCode code = CodeOf(plane, widths);
        const std::vector<uint8_t> expected = Encode(plane, code, Isa::kPortable);
        const size_t n = expected.size();
        for (Isa loop : Loops()) {
          for (size_t capacity = n > 80 ? n - 80 : 1; capacity <= n + 2; ++capacity) {
            const std::vector<uint8_t> coded = Encode(plane, code, loop, capacity);
            if (capacity < n ? !coded.empty() : coded != expected)
              fail_msg("loop %d: %zu bytes, %zu tiers, capacity %zu of %zu: coded %zu", static_cast<int>(loop), size,
                       widths.size(), capacity, n, coded.size());
          }
        }
      }
    }
  }
}

// Each defect of a coded plane is refused, by every loop, with its reason.
static void crafted_planes_are_data_loss_with_a_reason(void **state) {
  (void)state;
  // A good plane first: 5 bytes A B A C raw(0x99): tier 1 (2 bits) A B C, tier 2 (1 bit) D.
  const std::vector<std::vector<uint8_t>> tables = {{0xA, 0xB, 0xC}, {0xD}};
  const std::vector<uint8_t> good = Craft({2, 1}, tables, {2, 1}, {{0, 1, 3, 0, 3}, {0, 1}}, {0x99});
  std::vector<uint8_t> back;
  assert_true(Decode(good, 5, Isa::kPortable, &back).ok());
  assert_true(back == (std::vector<uint8_t>{0xA, 0xB, 0xD, 0xA, 0x99}));
  for (Isa loop : Loops()) assert_true(Decode(good, 5, loop).ok());

  ExpectDataLoss({}, 5, "truncated header");
  for (size_t cut = 1; cut < 1 + 4 + 2 + 8; ++cut)
    ExpectDataLoss({good.begin(), good.begin() + cut}, 5, "truncated header");
  std::vector<uint8_t> bad = good;
  bad[0] = 0;
  ExpectDataLoss(bad, 5, "T = 0 is not 1 to 3");
  bad[0] = 4;
  ExpectDataLoss(bad, 5, "T = 4 is not 1 to 3");
  bad = good, bad[1] = 0;
  ExpectDataLoss(bad, 5, "tier 1 width 0 is not 1 to 6");
  bad = good, bad[5] = 7;
  ExpectDataLoss(bad, 5, "tier 2 width 7 is not 1 to 6");
  bad = good, bad[6] = 0xB;
  ExpectDataLoss(bad, 5, "symbol 11 repeated");
  bad = good, bad[3] = 0xA;
  ExpectDataLoss(bad, 5, "symbol 10 repeated");
  // Sizes: a byte more or less, the plane's size off, counts that ask for more bytes.
  bad = good, bad.push_back(0);
  ExpectDataLoss(bad, 5, "sizes do not add up");
  ExpectDataLoss({good.begin(), good.end() - 1}, 5, "sizes do not add up");
  for (size_t size : {1, 3, 4, 9, 100, 1 << 20}) {
    for (Isa loop : Loops()) assert_int_equal(Decode(good, size, loop).code(), TW_DATA_LOSS);
  }
  // n is implied, not stored: where the padding bits have room for whole codes, they read as code 0
  // (here: up to three more 0xA: stream 1's 10 bits leave 6) for a plane up to 3 bytes longer. The
  // container knows n (the chunk's elements), and its checksum covers the plane.
  for (Isa loop : Loops()) {
    for (size_t size : {6, 7, 8}) assert_true(Decode(good, size, loop).ok());
  }
  ExpectDataLoss(good, 100, "sizes do not add up");
  ExpectDataLoss(good, 0, "no plane of 0 bytes");
  ExpectDataLoss(Craft({2, 1}, tables, {2, 2}, {{0, 1, 3, 0, 3}, {0, 1}}, {0x99}), 5, "sizes do not add up");
  // Counts that add up but do not match the escapes.
  ExpectDataLoss(Craft({2, 1}, tables, {6, 1}, {{0, 1, 3, 0, 3}, {0, 1, 1, 1, 1, 1}}, {0x99}), 5,
                 "tier 2's count exceeds tier 1's codes");
  ExpectDataLoss(Craft({2, 1}, tables, {1, 1}, {{0, 1, 3, 0, 3}, {1}}, {0x99}), 5,
                 "tier 1 has more escapes than tier 2's count");
  ExpectDataLoss(Craft({2, 1}, tables, {3, 1}, {{0, 1, 3, 0, 3}, {0, 1, 0}}, {0x99}), 5,
                 "tier 1 has 2 escapes, tier 2's count is 3");
  ExpectDataLoss(Craft({2, 1}, tables, {2, 0}, {{0, 1, 3, 0, 3}, {0, 1}}, {}), 5,
                 "tier 2 has more escapes than raw_count");
  ExpectDataLoss(Craft({2, 1}, tables, {2, 2}, {{0, 1, 3, 0, 3}, {0, 1}}, {0x99, 0x98}), 5,
                 "tier 2 has 1 escapes, raw_count is 2");
  ExpectDataLoss(Craft({2}, {{0xA, 0xB, 0xC}}, {0}, {{0, 1, 3, 0, 2}}, {}), 5,
                 "tier 1 has more escapes than raw_count");
  ExpectDataLoss(Craft({2}, {{0xA, 0xB, 0xC}}, {1}, {{0, 1, 2, 0, 2}}, {0x42}), 5,
                 "tier 1 has 0 escapes, raw_count is 1");
  // Escapes past the first 64-byte step, where the vector loop checks them.
  {
    std::vector<int> codes(150, 0);
    codes[70] = codes[149] = 3;
    ExpectDataLoss(Craft({2}, {{0xA, 0xB, 0xC}}, {1}, {codes}, {0x42}), 150, "tier 1 has more escapes than raw_count");
    codes[149] = 0;
    assert_true(Decode(Craft({2}, {{0xA, 0xB, 0xC}}, {1}, {codes}, {0x42}), 150).ok());
  }
  // And in the vector loop's groups of 8 steps (512 bytes), in each tier.
  {
    std::vector<int> codes(1000, 0), second(3, 0);
    codes[70] = codes[300] = codes[450] = 3;  // all in the first group
    ExpectDataLoss(Craft({2}, {{0xA, 0xB, 0xC}}, {2}, {codes}, {0x42, 0x43}), 1000,
                   "tier 1 has more escapes than raw_count");
    ExpectDataLoss(Craft({2, 1}, tables, {2, 1}, {codes, {0, 1}}, {0x42}), 1000,
                   "tier 1 has more escapes than tier 2's count");
    second[0] = second[2] = 1;
    ExpectDataLoss(Craft({2, 1}, tables, {3, 1}, {codes, second}, {0x42}), 1000,
                   "tier 2 has more escapes than raw_count");
    second[2] = 0;
    std::vector<uint8_t> back1000;
    assert_true(Decode(Craft({2, 1}, tables, {3, 1}, {codes, second}, {0x42}), 1000, Isa::kBest, &back1000).ok());
    assert_int_equal(back1000[70], 0x42);
    assert_int_equal(back1000[300], 0xD);
    assert_int_equal(back1000[999], 0xA);
  }
  // Padding: the unused bits of each stream's last byte.
  bad = good;
  bad[1 + 4 + 2 + 8 + 1] |= 0x80;  // stream 1: 10 bits, the top bits of its second byte
  ExpectDataLoss(bad, 5, "stream 1 has non-zero padding bits");
  bad = good;
  bad[1 + 4 + 2 + 8 + 2] |= 0x04;  // stream 2: 2 bits
  ExpectDataLoss(bad, 5, "stream 2 has non-zero padding bits");
  // A padding bit that would read as an escape in the last, partial step.
  {
    std::vector<int> codes(65, 0);
    std::vector<uint8_t> coded = Craft({2}, {{0xA, 0xB, 0xC}}, {0}, {codes}, {});
    coded.back() |= 0xFC;
    ExpectDataLoss(coded, 65, "stream 1 has non-zero padding bits");
  }
}

// Random bytes, random headers over random streams, and good planes with bits flipped, bytes changed or
// cut: never an access out of bounds (ASan), only TW_OK or TW_DATA_LOSS, and every loop agrees on which
// and, when they succeed, on the bytes.
static void random_and_mutated_planes_never_crash(void **state) {
  (void)state;
  std::mt19937 rng(9);
  const std::vector<Isa> loops = Loops();
  const auto agree = [&](const std::vector<uint8_t> &coded, size_t size) {
    std::vector<uint8_t> first, back;
    const tw::Status expected = Decode(coded, size, Isa::kPortable, &first);
    assert_true(expected.ok() || expected.code() == TW_DATA_LOSS);
    for (Isa loop : loops) {
      const tw::Status status = Decode(coded, size, loop, &back);
      if (status.ok() != expected.ok())
        fail_msg("loop %d: '%s' against the portable loop's '%s'", static_cast<int>(loop), status.message().c_str(),
                 expected.message().c_str());
      assert_int_equal(status.code(), expected.code());
      if (status.ok()) assert_true(back == first);
    }
    return expected.ok();
  };
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bytes(rng() % 300);
    for (uint8_t &b : bytes) b = static_cast<uint8_t>(rng());
    agree(bytes, 1 + rng() % 1000);
  }
  // Valid headers and sizes over random streams: the loops' own checks.
  int decoded = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t size = 1 + rng() % 700;
    const int tiers = 1 + static_cast<int>(rng() % 3);
    std::vector<int> widths;
    std::vector<std::vector<uint8_t>> symbols;
    int value = 0;
    for (int t = 0; t < tiers; ++t) {
      widths.push_back(1 + static_cast<int>(rng() % 3));
      symbols.emplace_back();
      for (int c = 0; c < (1 << widths[t]) - 1; ++c) symbols[t].push_back(static_cast<uint8_t>(value++));
    }
    std::vector<uint32_t> counts = {static_cast<uint32_t>(size)};
    for (int t = 0; t < tiers; ++t) {
      const uint32_t escape_share = 1 + static_cast<uint32_t>(rng() % 8);  // escapes 1/1 … 1/8 of the codes
      const int64_t next = int64_t{counts.back() / escape_share} + static_cast<int64_t>(rng() % 3) - 1;
      counts.push_back(static_cast<uint32_t>(std::max<int64_t>(0, std::min<int64_t>(next, counts.back()))));
    }
    std::vector<std::vector<int>> codes(tiers);
    for (int t = 0; t < tiers; ++t) {
      // Mostly the right number of escapes at random places, sometimes fewer or more.
      codes[t].assign(counts[t], 0);
      for (int &c : codes[t]) c = static_cast<int>(rng() % ((1u << widths[t]) - 1));
      const int64_t escapes = int64_t{counts[t + 1]} + (rng() % 4 == 0 ? static_cast<int64_t>(rng() % 3) - 1 : 0);
      for (int64_t e = 0; e < escapes && counts[t] > 0; ++e) codes[t][rng() % counts[t]] = (1 << widths[t]) - 1;
    }
    std::vector<uint8_t> raw(counts.back());
    for (uint8_t &b : raw) b = static_cast<uint8_t>(rng());
    counts.erase(counts.begin());
    decoded += agree(Craft(widths, symbols, counts, codes, raw), size);
  }
  assert_true(decoded > 100);  // the trials do reach the end of the loops
  // Good planes mutated.
  for (int trial = 0; trial < 400; ++trial) {
    const size_t size = 1 + rng() % 3000;
    const std::vector<uint8_t> plane = ExponentPlane(size, static_cast<uint32_t>(rng()), trial % 2 ? 0.02f : 3.0f);
    std::vector<uint8_t> coded = Encode(plane, ckpt::ChooseTieredCode(Counts(plane).data()), Isa::kPortable);
    assert_true(agree(coded, size));
    for (int m = 0; m < 20; ++m) {
      std::vector<uint8_t> bad = coded;
      switch (m % 4) {
        case 0: bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: bad[rng() % bad.size()] = static_cast<uint8_t>(rng()); break;
        case 2: bad.resize(rng() % bad.size()); break;
        default: bad[HeaderBytes(ckpt::TieredCode()) + rng() % (bad.size() - 1)] ^= 0xFF; break;
      }
      agree(bad, m % 5 == 0 ? size + rng() % 3 - 1 : size);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(code_choice_on_known_distributions),
      cmocka_unit_test(round_trips_of_every_loop),
      cmocka_unit_test(encoder_respects_capacity),
      cmocka_unit_test(crafted_planes_are_data_loss_with_a_reason),
      cmocka_unit_test(random_and_mutated_planes_never_crash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
