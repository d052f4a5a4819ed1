// The encoder of huffman.h: the code from the model, then the four streams written interleaved into
// areas of `work` (a stream's size is known only once it is written), then copied behind the table.
#include <algorithm>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "checkpoint/huffman.h"
#include "checkpoint/huffman_table.h"

namespace tw {
namespace checkpoint {
namespace {

// The smallest and largest byte value of each half, 0x00–0x7F and 0x80–0xFF (min > max: none).
struct Ranges {
  uint8_t low_min = 0xFF, low_max = 0, high_min = 0xFF, high_max = 0;
  void Add(uint8_t b) {
    if (b < 0x80) {
      low_min = std::min(low_min, b), low_max = std::max(low_max, b);
    } else {
      high_min = std::min(high_min, b), high_max = std::max(high_max, b);
    }
  }
};

Ranges ByteRanges(const uint8_t *in, size_t size) {
  Ranges r;
  size_t i = 0;
#ifdef __SSE2__
  // 16 bytes at a time: each half's bytes, the other half's replaced by a value that changes nothing.
  __m128i low_min = _mm_set1_epi8(-1), low_max = _mm_setzero_si128(), high_min = low_min, high_max = low_max;
  for (; i + 16 <= size; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i));
    const __m128i high = _mm_cmplt_epi8(v, _mm_setzero_si128());  // 0xFF where b >= 0x80
    low_min = _mm_min_epu8(low_min, _mm_or_si128(v, high));
    low_max = _mm_max_epu8(low_max, _mm_andnot_si128(high, v));
    high_min = _mm_min_epu8(high_min, _mm_or_si128(v, _mm_xor_si128(high, _mm_set1_epi8(-1))));
    high_max = _mm_max_epu8(high_max, _mm_and_si128(v, high));
  }
  alignas(16) uint8_t lanes[4][16];
  _mm_store_si128(reinterpret_cast<__m128i *>(lanes[0]), low_min);
  _mm_store_si128(reinterpret_cast<__m128i *>(lanes[1]), low_max);
  _mm_store_si128(reinterpret_cast<__m128i *>(lanes[2]), high_min);
  _mm_store_si128(reinterpret_cast<__m128i *>(lanes[3]), high_max);
  for (int k = 0; k < 16; ++k) {
    // A lane that saw no byte of a half holds 0xFF (min) or 0 (max): only a value seen can move them.
    if (lanes[0][k] <= lanes[1][k]) r.Add(lanes[0][k]), r.Add(lanes[1][k]);
    if (lanes[2][k] <= lanes[3][k]) r.Add(lanes[2][k]), r.Add(lanes[3][k]);
  }
#endif
  for (; i < size; ++i) r.Add(in[i]);
  return r;
}

// What the code is built from: the model's counts (doubled when sampled), and weight 1 for a byte value
// the sample missed inside a half's range, which may occur in the plane.
void CodeWeights(const uint8_t *in, size_t size, const HuffmanModel &model, uint64_t weight[256]) {
  for (int s = 0; s < 256; ++s) weight[s] = static_cast<uint64_t>(model.count[s]) * (model.whole_plane ? 1 : 2);
  if (model.whole_plane) return;
  const Ranges r = ByteRanges(in, size);
  for (int s = r.low_min; s <= r.low_max; ++s) weight[s] += weight[s] == 0;
  for (int s = r.high_min; s <= r.high_max; ++s) weight[s] += weight[s] == 0;
}

// Two bytes are coded with one lookup: pair[a | b << 8] holds the codes of a then b (bits 0–21) and
// their total length (bits 27–31). Only the pairs of byte values that have a code are filled — the
// only ones a plane holds (CodeWeights gives every byte of it a code) — so a few thousand entries of
// the 64 Ki are written per plane and touched while coding.
struct Code {
  uint32_t bits[256];   // the code, bit-reversed (huffman_table.h)
  uint8_t length[256];  // 0 for a byte value without a code
  uint32_t *pair;       // kPairEntries, in the caller's work area
};
constexpr size_t kPairEntries = 1 << 16;
constexpr uint32_t kPairCodeMask = (1u << 22) - 1;
constexpr int kPairLengthShift = 27;

void FillPairs(Code *code) {
  uint8_t coded[256];
  int n = 0;
  for (int s = 0; s < 256; ++s) {
    if (code->length[s] != 0) coded[n++] = static_cast<uint8_t>(s);
  }
  for (int i = 0; i < n; ++i) {
    const uint8_t a = coded[i];
    for (int j = 0; j < n; ++j) {
      const uint8_t b = coded[j];
      code->pair[a | b << 8] = (code->bits[a] | code->bits[b] << code->length[a]) |
                               static_cast<uint32_t>(code->length[a] + code->length[b]) << kPairLengthShift;
    }
  }
}

constexpr int kBytesPerFlush = 4;  // two pairs: at most 7 bits pending + 2 × 22 <= 64
static_assert(7 + kBytesPerFlush * kHuffmanMaxBits <= 64, "a flush's codes must fit the bit buffer");

// One stream: bits 0 … bits-1 of `buffer` are the next ones not yet stored. Its area of the work
// buffer holds the longest stream its bytes can give (kHuffmanMaxBits each), so the loop over whole
// steps checks nothing.
struct Stream {
  const uint8_t *in, *in_end;  // this stream's bytes of the plane
  uint64_t buffer = 0;
  unsigned bits = 0;
  uint8_t *out;

  // kBytesPerFlush bytes' codes, a pair at a time, then the whole bytes pending stored with one 8-byte
  // store (the bytes past the last whole one are stored again by the next step).
  __attribute__((always_inline)) void Step(const uint32_t *pair) {
    for (int i = 0; i < kBytesPerFlush; i += 2) {
      uint16_t two;
      std::memcpy(&two, in + i, 2);  // little-endian: in[i] in the low byte
      const uint32_t e = pair[two];
      buffer |= static_cast<uint64_t>(e & kPairCodeMask) << bits;
      bits += e >> kPairLengthShift;
    }
    in += kBytesPerFlush;
    std::memcpy(out, &buffer, 8);  // little-endian host (xxhash64.cc asserts it)
    out += bits >> 3;
    buffer >>= bits & ~7u;
    bits &= 7;
  }
  // The rest, a code and a byte at a time, and the last partial byte (its high bits 0).
  void Finish(const Code &code) {
    for (;;) {
      for (; bits >= 8; bits -= 8, buffer >>= 8) *out++ = static_cast<uint8_t>(buffer);
      if (in == in_end) break;
      buffer |= static_cast<uint64_t>(code.bits[*in]) << bits;
      bits += code.length[*in++];
    }
    if (bits > 0) *out++ = static_cast<uint8_t>(buffer);
  }
};

// Two streams at a time: their dependency chains (bit count, output pointer) overlap in the core, and
// the state of two fits the registers (four would spill). Copied to locals, whose address is never
// taken: the stores through `out` (bytes, which may alias anything) would otherwise keep the streams'
// state in memory.
__attribute__((always_inline)) inline void EncodeStreams(Stream *streams, const Code &code) {
  for (int k = 0; k < kHuffmanStreams; k += 2) {
    Stream a = streams[k], b = streams[k + 1];
    const size_t steps = static_cast<size_t>(std::min(a.in_end - a.in, b.in_end - b.in)) / kBytesPerFlush;
    for (size_t i = 0; i < steps; ++i) a.Step(code.pair), b.Step(code.pair);
    a.Finish(code), b.Finish(code);
    streams[k] = a, streams[k + 1] = b;
  }
}

void EncodeStreamsPlain(Stream *streams, const Code &code) { EncodeStreams(streams, code); }
#if TW_HUFFMAN_BMI2
TW_HUFFMAN_TARGET_BMI2 void EncodeStreamsBmi2(Stream *streams, const Code &code) { EncodeStreams(streams, code); }
#endif

}  // namespace

size_t HuffmanEncode(const uint8_t *in, size_t size, const HuffmanModel &model, uint8_t *out, size_t capacity,
                     uint8_t *work) {
  if (size == 0) return 0;
  uint64_t weight[256];
  CodeWeights(in, size, model, weight);
  const HuffmanLengths lengths = ChooseHuffmanLengths(weight);
  Code code;
  uint16_t canonical[256];
  HuffmanCanonicalCodes(lengths, canonical);
  for (int s = 0; s < 256; ++s) code.bits[s] = canonical[s], code.length[s] = lengths.length[s];
  work += (64 - reinterpret_cast<uintptr_t>(work) % 64) % 64;  // HuffmanWorkBytes leaves room for this
  code.pair = reinterpret_cast<uint32_t *>(work);
  work += kPairEntries * sizeof(uint32_t);
  FillPairs(&code);

  // Stream k into work[k·area, (k+1)·area).
  const size_t segment = (size + kHuffmanStreams - 1) / kHuffmanStreams, area = MaxStreamBytes(segment);
  Stream streams[kHuffmanStreams];
  for (int k = 0; k < kHuffmanStreams; ++k) {
    const size_t begin = std::min(size, k * segment);
    streams[k].in = in + begin;
    streams[k].in_end = in + std::min(size, begin + segment);
    streams[k].out = work + k * area;
  }
#if TW_HUFFMAN_BMI2
  HuffmanBmi2() ? EncodeStreamsBmi2(streams, code) : EncodeStreamsPlain(streams, code);
#else
  EncodeStreamsPlain(streams, code);
#endif

  const size_t table = HuffmanTableSize(lengths);
  size_t coded = table + 4 * (kHuffmanStreams - 1);
  for (int k = 0; k < kHuffmanStreams; ++k) coded += static_cast<size_t>(streams[k].out - (work + k * area));
  if (coded > capacity) return 0;
  WriteHuffmanTable(lengths, out);
  uint8_t *at = out + table + 4 * (kHuffmanStreams - 1);
  for (int k = 0; k < kHuffmanStreams; ++k) {
    const size_t bytes = static_cast<size_t>(streams[k].out - (work + k * area));
    if (k < kHuffmanStreams - 1) {
      const uint32_t listed = static_cast<uint32_t>(bytes);  // < area: a plane is at most 64 MiB
      std::memcpy(out + table + 4 * k, &listed, 4);
    }
    std::memcpy(at, work + k * area, bytes);
    at += bytes;
  }
  return coded;
}

}  // namespace checkpoint
}  // namespace tw
