// The Huffman plane codec (codec 2, huffman.h) on its own: code lengths, round trips of every kind of
// plane, the encoder's bounds, and the decoder against crafted planes — each defect of a table or a
// stream is TW_DATA_LOSS with its reason, and random or mutated planes never read or write out of
// bounds (the buffers are exactly sized, so the sanitizer build catches any access past them).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/codec/huffman.h"
#include "checkpoint/codec/huffman_table.h"
#include "exponent_plane.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

ckpt::HuffmanModel WholePlane(const std::vector<uint8_t> &plane) {
  ckpt::HuffmanModel model;
  for (uint8_t b : plane) ++model.count[b];
  model.whole_plane = true;
  return model;
}

// The writer's kind of model: counts of a few runs of the plane only.
ckpt::HuffmanModel Sampled(const std::vector<uint8_t> &plane) {
  ckpt::HuffmanModel model;
  for (size_t i = 0; i < plane.size(); i += 97) ++model.count[plane[i]];
  return model;
}

// Codes `plane` (capacity: more than any coded plane of it needs), with guard bytes
// after the output and the work area that must stay untouched. Empty when it does not fit.
std::vector<uint8_t> Encode(const std::vector<uint8_t> &plane, const ckpt::HuffmanModel &model,
                            ckpt::Isa isa = ckpt::Isa::kBest) {
  const size_t capacity = 2 * plane.size() + 300;
  std::vector<uint8_t> out(capacity + 64, 0xEE), work(ckpt::HuffmanWorkBytes(plane.size()) + 64, 0xEE);
  const size_t n = ckpt::HuffmanEncode(plane.data(), plane.size(), model, out.data(), capacity, work.data(), isa);
  for (size_t i = capacity; i < out.size(); ++i) assert_int_equal(out[i], 0xEE);
  for (size_t i = ckpt::HuffmanWorkBytes(plane.size()); i < work.size(); ++i) assert_int_equal(work[i], 0xEE);
  out.resize(n);
  return out;
}

// Decodes into an exactly sized buffer (so that ASan sees any write past it) from an exactly sized copy.
tw::Status Decode(const std::vector<uint8_t> &coded, size_t size, std::vector<uint8_t> *plane = nullptr,
                  ckpt::Isa isa = ckpt::Isa::kBest) {
  const std::vector<uint8_t> in(coded);
  std::vector<uint8_t> out(size);
  const tw::Status status = ckpt::HuffmanDecode(in.data(), in.size(), out.data(), out.size(), isa);
  if (plane != nullptr) *plane = out;
  return status;
}

void AssertRoundTrip(const std::vector<uint8_t> &plane, const ckpt::HuffmanModel &model) {
  const std::vector<uint8_t> coded = Encode(plane, model);
  assert_false(coded.empty());
  std::vector<uint8_t> back;
  const tw::Status status = Decode(coded, plane.size(), &back);
  if (!status.ok()) fail_msg("%s", status.message().c_str());
  assert_true(back == plane);
}

void ExpectDataLoss(const std::vector<uint8_t> &coded, size_t size, const char *why) {
  const tw::Status status = Decode(coded, size);
  assert_int_equal(status.code(), TW_DATA_LOSS);
  if (std::strstr(status.message().c_str(), why) == nullptr) fail_msg("'%s' lacks '%s'", status.message().c_str(), why);
}

// Offsets in a coded plane: its table's size and where stream k starts.
size_t TableSize(const std::vector<uint8_t> &coded) {
  ckpt::HuffmanLengths lengths;
  size_t table = 0;
  std::string why;
  assert_true(ckpt::ReadHuffmanTable(coded.data(), coded.size(), &lengths, &table, &why));
  return table;
}
uint32_t StreamSize(const std::vector<uint8_t> &coded, int k) {
  uint32_t size;
  std::memcpy(&size, coded.data() + TableSize(coded) + 4 * k, 4);
  return size;
}
void SetStreamSize(std::vector<uint8_t> *coded, int k, uint32_t size) {
  std::memcpy(coded->data() + TableSize(*coded) + 4 * k, &size, 4);
}

}  // namespace

// Package-merge gives complete codes of at most 11 bits for any counts, including ones whose plain
// Huffman code would be far longer (Fibonacci counts), and optimal ones where the limit does not bind.
static void code_lengths_are_complete_and_limited(void **state) {
  (void)state;
  std::mt19937 rng(3);
  for (int trial = 0; trial < 2000; ++trial) {
    uint64_t count[256] = {};
    const int kind = trial % 4;
    const int symbols = 1 + static_cast<int>(rng() % 256);
    for (int i = 0; i < symbols; ++i) {
      const int s = static_cast<int>(rng() % 256);
      count[s] = kind == 0 ? 1 + rng() % 1000 : kind == 1 ? uint64_t{1} << (rng() % 40) : 1 + rng() % 3;
    }
    if (kind == 3) {  // Fibonacci counts: a plain Huffman code would be as deep as there are symbols
      uint64_t a = 1, b = 1;
      for (int s = 0; s < 60; ++s) count[s] = a, std::swap(a, b), b += a;
    }
    const ckpt::HuffmanLengths lengths = ckpt::ChooseHuffmanLengths(count);
    uint32_t kraft = 0;
    for (int s = 0; s < 256; ++s) {
      assert_true(lengths.length[s] <= ckpt::kHuffmanMaxBits);
      if (count[s] != 0) assert_true(lengths.length[s] >= 1);  // every symbol that occurs has a code
      if (lengths.length[s] != 0) kraft += 1u << (ckpt::kHuffmanMaxBits - lengths.length[s]);
    }
    assert_int_equal(kraft, 1u << ckpt::kHuffmanMaxBits);
    // Where a Huffman code (a priority queue of subtrees: cost is the sum of the merged weights) fits
    // the limit, the lengths must cost exactly as much: both are optimal.
    std::priority_queue<std::pair<uint64_t, int>, std::vector<std::pair<uint64_t, int>>, std::greater<>> trees;
    for (int s = 0; s < 256; ++s) {
      if (count[s] != 0) trees.push({count[s], 0});
    }
    uint64_t huffman_cost = 0, cost = 0;
    int huffman_depth = 0;
    while (trees.size() > 1) {
      const auto a = trees.top();
      trees.pop();
      const auto b = trees.top();
      trees.pop();
      huffman_cost += a.first + b.first;
      huffman_depth = std::max(huffman_depth, std::max(a.second, b.second) + 1);
      trees.push({a.first + b.first, std::max(a.second, b.second) + 1});
    }
    for (int s = 0; s < 256; ++s) cost += count[s] * lengths.length[s];
    if (trees.size() == 1 && huffman_depth >= 1 && huffman_depth <= ckpt::kHuffmanMaxBits) {
      assert_int_equal(cost, huffman_cost);
    }
    assert_true(cost >= huffman_cost);
  }
  // Where the limit does not bind, the lengths are Huffman's: counts 1, 1, 2, 4, 8 → 4, 4, 3, 2, 1.
  uint64_t count[256] = {};
  count[10] = 1, count[11] = 1, count[12] = 2, count[13] = 4, count[14] = 8;
  const ckpt::HuffmanLengths lengths = ckpt::ChooseHuffmanLengths(count);
  assert_int_equal(lengths.length[10], 4);
  assert_int_equal(lengths.length[11], 4);
  assert_int_equal(lengths.length[12], 3);
  assert_int_equal(lengths.length[13], 2);
  assert_int_equal(lengths.length[14], 1);
}

// Every size around the stream split and the fast loops' margins, every kind of byte distribution,
// with the plane's own counts and with a sample's.
static void round_trips(void **state) {
  (void)state;
  std::mt19937 rng(5);
  for (size_t size :
       {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 63, 64, 65, 100, 255, 1000, 4095, 4096, 4097, 65536, 100003}) {
    std::vector<uint8_t> constant(size, 0x3F), two(size), uniform(size), skewed = ExponentPlane(size, size);
    for (size_t i = 0; i < size; ++i) {
      two[i] = (rng() & 1) ? 0x00 : 0xFF;
      uniform[i] = static_cast<uint8_t>(rng());
    }
    for (const std::vector<uint8_t> *plane : {&constant, &two, &uniform, &skewed}) {
      AssertRoundTrip(*plane, WholePlane(*plane));
      AssertRoundTrip(*plane, Sampled(*plane));
    }
  }
  // A sample that missed bytes: the values it missed inside each half's range still have codes.
  std::vector<uint8_t> plane = ExponentPlane(200000, 9, 0.02f);
  plane[12345] = 0x01, plane[54321] = 0xFE;  // far outside the sampled values, in each half
  ckpt::HuffmanModel model;
  model.count[plane[0]] = 1;  // a sample of one byte
  AssertRoundTrip(plane, model);
}

// Planes drawn from a distribution with a given code: `weights` fixes which bytes occur how often.
std::vector<uint8_t> Drawn(size_t size, const std::vector<std::pair<uint8_t, double>> &weights, uint32_t seed) {
  std::vector<double> w;
  for (const auto &p : weights) w.push_back(p.second);
  std::discrete_distribution<size_t> pick(w.begin(), w.end());
  std::mt19937 rng(seed);
  std::vector<uint8_t> plane(size);
  for (uint8_t &b : plane) b = weights[pick(rng)].first;
  return plane;
}

// The decoder's lookups take 12 bits and yield up to six symbols: codes of every length 1 to 11 (each
// entry then mixes long and short codes, and a code may end on the lookup's last bit), lookups that
// would hold more than six symbols (1-bit codes: the sixth is where an entry is cut), five and six
// 2-bit codes per lookup, and every plane size up to 300 and around the fast loop's margins, so
// that the tail of every stream starts at each possible point.
static void decoder_entries_and_tails(void **state) {
  (void)state;
  std::vector<std::pair<uint8_t, double>> every_length;  // counts 2^-1 … 2^-11: lengths 1 … 11
  for (int s = 0; s < 11; ++s) every_length.push_back({static_cast<uint8_t>(0x30 + 7 * s), std::ldexp(1.0, -s)});
  every_length.push_back({0xF0, std::ldexp(1.0, -10)});
  const std::vector<std::vector<std::pair<uint8_t, double>>> distributions = {
      every_length,
      {{0x00, 0.9}, {0xFF, 0.1}},                               // two 1-bit codes: 12 per lookup, cut to 6
      {{0x3C, 0.55}, {0x3D, 0.25}, {0x3E, 0.1}, {0xBC, 0.1}},   // 1, 2, 3, 3 bits: cuts of each length
      {{0x10, 1}, {0x20, 1}, {0x30, 1}, {0x40, 1}},             // 2 bits each: six per lookup
      {{0x10, 2}, {0x20, 1}, {0x30, 1}, {0x40, 1}, {0x50, 1}},  // 2 and 3 bits: five per lookup
  };
  for (size_t d = 0; d < distributions.size(); ++d) {
    const std::vector<uint8_t> large = Drawn(100000, distributions[d], static_cast<uint32_t>(d));
    const ckpt::HuffmanModel model = WholePlane(large);
    // The code the decoder sees, read back from a coded plane.
    const std::vector<uint8_t> coded = Encode(large, model);
    ckpt::HuffmanLengths lengths;
    size_t table = 0;
    std::string why;
    assert_true(ckpt::ReadHuffmanTable(coded.data(), coded.size(), &lengths, &table, &why));
    const auto has = [&](int bits) { return std::count(lengths.length, lengths.length + 256, bits) != 0; };
    if (d == 0) {
      for (int bits = 1; bits <= ckpt::kHuffmanMaxBits; ++bits) assert_true(has(bits));
    }
    if (d == 1 || d == 2) assert_true(has(1));
    if (d == 3) assert_int_equal(std::count(lengths.length, lengths.length + 256, 2), 4);
    AssertRoundTrip(large, model);
    for (size_t size = 1; size <= 300; ++size) {
      const std::vector<uint8_t> plane(large.begin(), large.begin() + static_cast<ptrdiff_t>(size));
      AssertRoundTrip(plane, model);  // the large plane's code: every symbol of it has one
    }
    for (size_t size : {1021, 1024, 1031, 4093, 4099, 8191, 65537}) {
      AssertRoundTrip(std::vector<uint8_t>(large.begin(), large.begin() + static_cast<ptrdiff_t>(size)), model);
    }
  }
}

// Every encoder loop this CPU runs writes the same bytes as the portable one (the format must not
// change with the CPU), and every decoder loop decodes them, for planes whose codes join into pieces of every size the
// vector loop cuts (short codes: 16 bytes per piece; 8-bit codes: 4; blocks of each mixed), codes of 11 bits, one or
// two symbols, each half of the byte values alone, and every size from 1 to 200 and past the loops'
// blocks; with the plane's own counts and with a sample's (whose missed values the byte ranges add).
static void encoder_loops_write_the_same_bytes(void **state) {
  (void)state;
  std::vector<ckpt::Isa> levels;  // besides kPortable, the reference
  for (ckpt::Isa isa : {ckpt::Isa::kAvx2, ckpt::Isa::kAvx512, ckpt::Isa::kAvx512Vbmi, ckpt::Isa::kBest}) {
    if (ckpt::IsaRuns(isa)) levels.push_back(isa);
  }
  std::mt19937 rng(11);
  const auto plane_of_kind = [&rng](int kind, size_t size) {
    std::vector<uint8_t> plane(size);
    const std::vector<uint8_t> skewed = ExponentPlane(size, static_cast<uint32_t>(rng()), kind == 1 ? 1e-4f : 0.02f);
    for (size_t i = 0; i < size; ++i) {
      const uint32_t r = static_cast<uint32_t>(rng());
      switch (kind) {
        case 0:
        case 1: plane[i] = skewed[i]; break;                                          // exponent bytes
        case 2: plane[i] = static_cast<uint8_t>(r); break;                            // all 256, 8 bits each
        case 3: plane[i] = static_cast<uint8_t>(__builtin_ctz(r | 1u << 31)); break;  // 1 … 11-bit codes
        case 4: plane[i] = 0x41; break;                                               // one symbol
        case 5: plane[i] = (r & 1) ? 0x07 : 0xF3; break;                              // two
        case 6: plane[i] = static_cast<uint8_t>(0x80 | (r % 100)); break;             // the high half only
        case 7: plane[i] = static_cast<uint8_t>(r % 3 == 0 ? r % 128 : 0x3F); break;  // the low half only
        default: plane[i] = (i / 64 % 3 == 0) ? static_cast<uint8_t>(r) : skewed[i];  // blocks of each
      }
    }
    return plane;
  };
  std::vector<size_t> sizes;
  for (size_t size = 1; size <= 200; ++size) sizes.push_back(size);
  for (size_t size : {255, 256, 257, 1000, 4097, 65537, 262147, (1 << 20) + 13}) sizes.push_back(size);
  for (size_t size : sizes) {
    for (int kind = 0; kind < 9; ++kind) {
      if (size > 100000 && kind > 3 && kind != 8) continue;  // the large sizes: the kinds that cut differently
      const std::vector<uint8_t> plane = plane_of_kind(kind, size);
      for (const ckpt::HuffmanModel &model : {WholePlane(plane), Sampled(plane)}) {
        const std::vector<uint8_t> expected = Encode(plane, model, ckpt::Isa::kPortable);
        assert_false(expected.empty());
        for (ckpt::Isa isa : levels) {
          if (Encode(plane, model, isa) != expected)
            fail_msg("level %s: plane of kind %d, %zu bytes, differs", ckpt::IsaName(isa), kind, size);
        }
        std::vector<uint8_t> back;
        const tw::Status status = Decode(expected, plane.size(), &back, ckpt::Isa::kPortable);
        if (!status.ok()) fail_msg("%s", status.message().c_str());
        assert_true(back == plane);
        for (ckpt::Isa isa : levels) {  // the decoder's loops: plain shifts and BMI2's
          back.assign(plane.size(), 0);
          assert_true(Decode(expected, plane.size(), &back, isa).ok());
          assert_true(back == plane);
        }
      }
    }
  }
}

// The coded size is what the caller allows or nothing, and exponent planes shrink to about a third.
static void encoder_respects_capacity(void **state) {
  (void)state;
  const std::vector<uint8_t> plane = ExponentPlane(1 << 20, 1);
  std::vector<uint8_t> out(plane.size()), work(ckpt::HuffmanWorkBytes(plane.size()));
  const size_t n =
      ckpt::HuffmanEncode(plane.data(), plane.size(), Sampled(plane), out.data(), plane.size(), work.data());
  assert_true(n > plane.size() / 4 && n < plane.size() * 36 / 100);  // ~2.7 bits per byte
  assert_int_equal(ckpt::HuffmanEncode(plane.data(), plane.size(), Sampled(plane), out.data(), n - 1, work.data()), 0);
  assert_int_equal(ckpt::HuffmanEncode(plane.data(), plane.size(), Sampled(plane), out.data(), n, work.data()), n);
  std::vector<uint8_t> uniform(4096);
  std::mt19937 rng(2);
  for (uint8_t &b : uniform) b = static_cast<uint8_t>(rng());
  // Noise does not shrink: nothing within the plane's size.
  assert_int_equal(ckpt::HuffmanEncode(uniform.data(), uniform.size(), WholePlane(uniform), out.data(),
                                       uniform.size() - 1, work.data()),
                   0);
}

// Each defect of a coded plane of `size` bytes is refused with its reason.
static void ExpectCraftedPlanesRefused(size_t size) {
  const std::vector<uint8_t> plane = ExponentPlane(size, 4);
  const std::vector<uint8_t> good = Encode(plane, WholePlane(plane));
  assert_true(Decode(good, plane.size()).ok());
  const size_t table = TableSize(good);

  ExpectDataLoss(std::vector<uint8_t>(good.begin(), good.begin() + 20), plane.size(), "truncated code table");
  ExpectDataLoss(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<ptrdiff_t>(table) - 1), plane.size(),
                 "truncated code table");
  ExpectDataLoss(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<ptrdiff_t>(table) + 11), plane.size(),
                 "truncated stream sizes");
  {  // a code longer than 11 bits
    std::vector<uint8_t> bad = good;
    bad[ckpt::kHuffmanBitmapBytes] = static_cast<uint8_t>((bad[ckpt::kHuffmanBitmapBytes] & 0xF0) | 12);
    ExpectDataLoss(bad, plane.size(), "code length 12");
  }
  {  // a listed symbol without a length
    std::vector<uint8_t> bad = good;
    bad[ckpt::kHuffmanBitmapBytes] &= 0xF0;
    ExpectDataLoss(bad, plane.size(), "code length 0");
  }
  // The length nibble of the first listed symbol whose code is neither 1 bit nor the longest.
  size_t nibble = 0;
  const auto length = [&](size_t i) { return good[ckpt::kHuffmanBitmapBytes + i / 2] >> (4 * (i % 2)) & 0xF; };
  while (length(nibble) <= 1 || length(nibble) >= ckpt::kHuffmanMaxBits) ++nibble;
  const auto with_length = [&](int bits) {
    std::vector<uint8_t> bad = good;
    uint8_t &byte = bad[ckpt::kHuffmanBitmapBytes + nibble / 2];
    byte = static_cast<uint8_t>((byte & ~(0xF << (4 * (nibble % 2)))) | bits << (4 * (nibble % 2)));
    return bad;
  };
  ExpectDataLoss(with_length(length(nibble) - 1), plane.size(), "oversubscribed");   // one code shorter
  ExpectDataLoss(with_length(length(nibble) + 1), plane.size(), "incomplete code");  // one code longer
  {  // a single symbol of length 1: incomplete
    std::vector<uint8_t> bad(ckpt::kHuffmanBitmapBytes + 1 + 12, 0);
    bad[0] = 1, bad[ckpt::kHuffmanBitmapBytes] = 1;
    ExpectDataLoss(bad, 10, "incomplete code");
  }
  {  // an odd number of symbols leaves a padding nibble, which must be 0
    std::vector<uint8_t> bad(ckpt::kHuffmanBitmapBytes + 2 + 12, 0);
    bad[0] = 0x07;                              // symbols 0, 1, 2
    bad[ckpt::kHuffmanBitmapBytes] = 0x21;      // lengths 1, 2
    bad[ckpt::kHuffmanBitmapBytes + 1] = 0x52;  // length 2, then padding 5
    ExpectDataLoss(bad, 10, "padding in the code table");
  }
  {  // streams listed as longer than the plane holds
    std::vector<uint8_t> bad = good;
    SetStreamSize(&bad, 0, static_cast<uint32_t>(good.size()));
    ExpectDataLoss(bad, plane.size(), "stream sizes do not add up");
    SetStreamSize(&bad, 0, 0xFFFFFFFFu);
    SetStreamSize(&bad, 1, 0xFFFFFFFFu);
    SetStreamSize(&bad, 2, 0xFFFFFFFFu);
    ExpectDataLoss(bad, plane.size(), "stream sizes do not add up");
  }
  {  // a byte moved from stream 0 to stream 1: 0 ends early, 1 has a byte left over
    std::vector<uint8_t> bad = good;
    SetStreamSize(&bad, 0, StreamSize(good, 0) - 1);
    SetStreamSize(&bad, 1, StreamSize(good, 1) + 1);
    ExpectDataLoss(bad, plane.size(), "stream 0 ends before its bytes are decoded");
  }
  {  // stream 3 (the rest) one byte longer, or cut short
    std::vector<uint8_t> longer = good;
    longer.push_back(0);
    ExpectDataLoss(longer, plane.size(), "stream 3 has bytes left over");
    ExpectDataLoss(std::vector<uint8_t>(good.begin(), good.end() - 1), plane.size(), "stream 3 ends before");
  }
  {  // the unused high bits of a stream's last byte must be 0: four 1-bit codes, one per stream
    const std::vector<uint8_t> tiny = {0, 1, 0, 1};
    std::vector<uint8_t> bad = Encode(tiny, WholePlane(tiny));
    assert_int_equal(StreamSize(bad, 0), 1);
    bad[TableSize(bad) + 12] |= 0x80;
    ExpectDataLoss(bad, tiny.size(), "stream 0 has non-zero padding bits");
  }
  // A plane of another size: some stream runs short or has bits left.
  for (size_t size : {plane.size() - 1, plane.size() + 1, plane.size() + 100, plane.size() / 2}) {
    assert_int_equal(Decode(good, size).code(), TW_DATA_LOSS);
  }
}

// Both decoders: a symbol at a time (planes under 8 KiB) and table-driven.
static void crafted_planes_are_data_loss_with_a_reason(void **state) {
  (void)state;
  for (size_t size : {5000, 50000}) ExpectCraftedPlanesRefused(size);
}

// Random bytes, and valid planes with random edits, bit flips and cuts, decode to OK or TW_DATA_LOSS
// and never touch memory outside the exactly sized buffers (under ASan in the sanitizer build).
static void random_and_mutated_planes_never_crash(void **state) {
  (void)state;
  std::mt19937 rng(17);
  std::vector<std::vector<uint8_t>> planes;
  for (size_t size : {1, 9, 64, 777, 5000, 70000}) {
    planes.push_back(ExponentPlane(size, static_cast<uint32_t>(size)));
    std::vector<uint8_t> uniform(size);
    for (uint8_t &b : uniform) b = static_cast<uint8_t>(rng() % 40);
    planes.push_back(uniform);
  }
  for (const std::vector<uint8_t> &plane : planes) {
    const std::vector<uint8_t> good = Encode(plane, WholePlane(plane));
    assert_false(good.empty());
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<uint8_t> bad = good;
      switch (trial % 4) {
        case 0:
          for (int e = 1 + static_cast<int>(rng() % 4); e > 0; --e)
            bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
          break;
        case 1: bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 2: bad.resize(rng() % bad.size()); break;
        default:  // a random table over valid streams' bytes
          for (size_t i = 0; i < ckpt::kHuffmanBitmapBytes + 8 && i < bad.size(); ++i)
            bad[i] = static_cast<uint8_t>(rng());
      }
      std::vector<uint8_t> back;
      const tw::Status status = Decode(bad, plane.size(), &back);
      assert_true(status.ok() || status.code() == TW_DATA_LOSS);
      if (status.ok() && bad == good) assert_true(back == plane);
    }
  }
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bytes(rng() % 300);
    for (uint8_t &b : bytes) b = static_cast<uint8_t>(rng());
    if (trial % 2 == 0 && bytes.size() >= 46) {  // a valid complete code over random streams
      std::fill(bytes.begin(), bytes.begin() + 32, 0);
      bytes[0] = 0x0F;                     // symbols 0–3
      bytes[32] = 0x22, bytes[33] = 0x22;  // all 2 bits long
      for (int k = 0; k < 3; ++k)
        bytes[34 + 4 * k] = static_cast<uint8_t>(rng() % 64), bytes[35 + 4 * k] = 0, bytes[36 + 4 * k] = 0,
                       bytes[37 + 4 * k] = 0;
    }
    const tw::Status status = Decode(bytes, 1 + rng() % 500);
    assert_true(status.ok() || status.code() == TW_DATA_LOSS);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(code_lengths_are_complete_and_limited),
      cmocka_unit_test(round_trips),
      cmocka_unit_test(decoder_entries_and_tails),
      cmocka_unit_test(encoder_loops_write_the_same_bytes),
      cmocka_unit_test(encoder_respects_capacity),
      cmocka_unit_test(crafted_planes_are_data_loss_with_a_reason),
      cmocka_unit_test(random_and_mutated_planes_never_crash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
