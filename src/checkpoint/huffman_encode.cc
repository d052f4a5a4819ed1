// The encoder of huffman.h. Each stream's exact size is known before a bit is written (per-stream
// histograms), so the four streams are written interleaved straight to their final places, with 8-byte
// stores that never cross into the next stream.
#include <algorithm>
#include <cstring>
#include <limits>

#include "checkpoint/huffman.h"
#include "checkpoint/huffman_table.h"

namespace tw {
namespace checkpoint {
namespace {

// Eight tables, so that runs of one byte value do not serialize on one counter.
void CountBytes(const uint8_t *in, size_t size, uint32_t count[256]) {
  uint32_t c[8][256] = {};
  size_t i = 0;
  for (; i + 16 <= size; i += 16) {
    uint64_t a, b;
    std::memcpy(&a, in + i, 8);
    std::memcpy(&b, in + i + 8, 8);
    for (int k = 0; k < 8; ++k) ++c[k][(a >> (8 * k)) & 0xFF];
    for (int k = 0; k < 8; ++k) ++c[k][(b >> (8 * k)) & 0xFF];
  }
  for (; i < size; ++i) ++c[0][in[i]];
  for (int s = 0; s < 256; ++s) {
    uint32_t total = 0;
    for (int k = 0; k < 8; ++k) total += c[k][s];
    count[s] = total;
  }
}

struct Code {
  uint32_t bits[256];   // the code, bit-reversed (huffman_table.h)
  uint8_t length[256];  // 0 for a symbol without a code
};

constexpr int kPutsPerFlush = 5;  // at most 7 bits pending before a run of puts: 7 + 5 × 11 <= 64
static_assert(7 + kPutsPerFlush * kHuffmanMaxBits <= 64, "a flush's codes must fit the bit buffer");

// One stream: bits 0 … bits-1 of `buffer` are the next ones not yet stored.
struct Stream {
  const uint8_t *in, *in_end;  // this stream's bytes of the plane
  uint64_t buffer = 0;
  unsigned bits = 0;
  uint8_t *out, *out_end;  // this stream's bytes of the coded plane

  bool FastStepFits() const { return in_end - in >= kPutsPerFlush && out_end - out >= 8; }
  // kPutsPerFlush codes, then the whole bytes pending stored with one 8-byte store (in bounds:
  // FastStepFits; the bytes past the last whole one are stored again by the next step).
  __attribute__((always_inline)) void FastStep(const Code &code) {
    for (int i = 0; i < kPutsPerFlush; ++i) {
      buffer |= static_cast<uint64_t>(code.bits[in[i]]) << bits;
      bits += code.length[in[i]];
    }
    in += kPutsPerFlush;
    std::memcpy(out, &buffer, 8);  // little-endian host (xxhash64.cc asserts it)
    out += bits >> 3;
    buffer >>= bits & ~7u;
    bits &= 7;
  }
  // The rest, a code and a byte at a time, and the last partial byte (its high bits 0). False if the
  // stream would not end exactly at out_end.
  bool Finish(const Code &code) {
    for (;;) {
      while (bits >= 8) {
        if (out == out_end) return false;
        *out++ = static_cast<uint8_t>(buffer);
        buffer >>= 8;
        bits -= 8;
      }
      if (in == in_end) break;
      buffer |= static_cast<uint64_t>(code.bits[*in]) << bits;
      bits += code.length[*in++];
    }
    if (bits > 0) {
      if (out == out_end) return false;
      *out++ = static_cast<uint8_t>(buffer);
    }
    return out == out_end;
  }
};

// Independent streams: their dependency chains (bit count, output pointer) overlap in the core. The
// streams are copied to locals, whose address is never taken: the stores through `out` (bytes, which
// may alias anything) would otherwise make the compiler keep every stream's state in memory.
__attribute__((always_inline)) inline bool EncodeStreams(Stream *streams, const Code &code) {
  static_assert(kHuffmanStreams == 4, "one local per stream");
  Stream s0 = streams[0], s1 = streams[1], s2 = streams[2], s3 = streams[3];
  while (s0.FastStepFits() && s1.FastStepFits() && s2.FastStepFits() && s3.FastStepFits()) {
    s0.FastStep(code), s1.FastStep(code), s2.FastStep(code), s3.FastStep(code);
  }
  streams[0] = s0, streams[1] = s1, streams[2] = s2, streams[3] = s3;
  for (int k = 0; k < kHuffmanStreams; ++k) {
    Stream s = streams[k];
    while (s.FastStepFits()) s.FastStep(code);
    if (!s.Finish(code)) return false;
  }
  return true;
}

bool EncodeStreamsPlain(Stream *streams, const Code &code) { return EncodeStreams(streams, code); }
#if TW_HUFFMAN_BMI2
TW_HUFFMAN_TARGET_BMI2 bool EncodeStreamsBmi2(Stream *streams, const Code &code) { return EncodeStreams(streams, code); }
#endif

}  // namespace

size_t HuffmanEncode(const uint8_t *in, size_t size, uint8_t *out, size_t capacity) {
  if (size == 0) return 0;
  const size_t segment = (size + kHuffmanStreams - 1) / kHuffmanStreams;
  uint32_t counts[kHuffmanStreams][256];
  uint64_t total[256] = {};
  for (int k = 0; k < kHuffmanStreams; ++k) {
    const size_t begin = std::min(size, k * segment), end = std::min(size, begin + segment);
    CountBytes(in + begin, end - begin, counts[k]);
    for (int s = 0; s < 256; ++s) total[s] += counts[k][s];
  }
  const HuffmanLengths lengths = ChooseHuffmanLengths(total);
  Code code;
  uint16_t canonical[256];
  HuffmanCanonicalCodes(lengths, canonical);
  for (int s = 0; s < 256; ++s) code.bits[s] = canonical[s], code.length[s] = lengths.length[s];

  const size_t table = HuffmanTableSize(lengths);
  size_t stream_bytes[kHuffmanStreams], coded = table + 4 * (kHuffmanStreams - 1);
  for (int k = 0; k < kHuffmanStreams; ++k) {
    uint64_t bits = 0;
    for (int s = 0; s < 256; ++s) bits += static_cast<uint64_t>(counts[k][s]) * lengths.length[s];
    stream_bytes[k] = static_cast<size_t>((bits + 7) / 8);
    if (stream_bytes[k] > std::numeric_limits<uint32_t>::max()) return 0;
    coded += stream_bytes[k];
  }
  if (coded > capacity) return 0;

  WriteHuffmanTable(lengths, out);
  uint8_t *at = out + table;
  for (int k = 0; k < kHuffmanStreams - 1; ++k) {
    const uint32_t bytes = static_cast<uint32_t>(stream_bytes[k]);
    std::memcpy(at, &bytes, 4);
    at += 4;
  }
  Stream streams[kHuffmanStreams];
  for (int k = 0; k < kHuffmanStreams; ++k) {
    const size_t begin = std::min(size, k * segment);
    streams[k].in = in + begin;
    streams[k].in_end = in + std::min(size, begin + segment);
    streams[k].out = at;
    streams[k].out_end = at += stream_bytes[k];
  }
#if TW_HUFFMAN_BMI2
  const bool encoded = HuffmanBmi2() ? EncodeStreamsBmi2(streams, code) : EncodeStreamsPlain(streams, code);
#else
  const bool encoded = EncodeStreamsPlain(streams, code);
#endif
  return encoded ? coded : 0;  // not encoded cannot happen: the sizes were counted from these bytes
}

}  // namespace checkpoint
}  // namespace tw
