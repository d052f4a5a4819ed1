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

// Four tables, so that a run of one byte value does not serialize on one counter.
void CountBytes(const uint8_t *in, size_t size, uint32_t count[256]) {
  uint32_t c[4][256] = {};
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, in + i, 8);
    ++c[0][w & 0xFF], ++c[1][(w >> 8) & 0xFF], ++c[2][(w >> 16) & 0xFF], ++c[3][(w >> 24) & 0xFF];
    ++c[0][(w >> 32) & 0xFF], ++c[1][(w >> 40) & 0xFF], ++c[2][(w >> 48) & 0xFF], ++c[3][w >> 56];
  }
  for (; i < size; ++i) ++c[0][in[i]];
  for (int s = 0; s < 256; ++s) count[s] = c[0][s] + c[1][s] + c[2][s] + c[3][s];
}

// Up to 64 bits not yet stored; bits 0 … bits-1 of `buffer` are the next ones of the stream.
struct BitWriter {
  uint64_t buffer = 0;
  unsigned bits = 0;
  uint8_t *out = nullptr;
  uint8_t *end = nullptr;  // of this stream

  // entry: code in bits 0–15, its length above. At most 7 bits are pending before a run of
  // kPutsPerFlush codes, so 7 + 5 × 11 bits fit the buffer.
  void Put(uint32_t entry) {
    buffer |= static_cast<uint64_t>(entry & 0xFFFF) << bits;
    bits += entry >> 16;
  }
  // Stores the whole bytes pending with one 8-byte store: needs out + 8 <= end.
  void Flush() {
    std::memcpy(out, &buffer, 8);  // little-endian host (xxhash64.cc asserts it)
    out += bits >> 3;
    buffer >>= bits & ~7u;
    bits &= 7;
  }
  // The same a byte at a time, and the last partial byte (its high bits 0); false past `end`.
  bool Finish() {
    while (bits > 0) {
      if (out == end) return false;
      *out++ = static_cast<uint8_t>(buffer);
      buffer >>= 8;
      bits = bits > 8 ? bits - 8 : 0;
    }
    return true;
  }
};

constexpr int kPutsPerFlush = 5;
static_assert(7 + kPutsPerFlush * kHuffmanMaxBits <= 64, "a flush's codes must fit the bit buffer");

struct Stream {
  const uint8_t *in, *in_end;  // this stream's bytes of the plane
  BitWriter writer;

  bool FastStepFits() const { return in_end - in >= kPutsPerFlush && writer.end - writer.out >= 8; }
  void FastStep(const uint32_t *entry) {
    for (int i = 0; i < kPutsPerFlush; ++i) writer.Put(entry[in[i]]);
    in += kPutsPerFlush;
    writer.Flush();
  }
  // The rest, a code at a time; false if the stream would not end exactly at writer.end.
  bool Finish(const uint32_t *entry) {
    while (in != in_end) {
      writer.Put(entry[*in++]);
      while (writer.bits >= 8) {
        if (writer.out == writer.end) return false;
        *writer.out++ = static_cast<uint8_t>(writer.buffer);
        writer.buffer >>= 8;
        writer.bits -= 8;
      }
    }
    return writer.Finish() && writer.out == writer.end;
  }
};

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
  uint16_t code[256];
  HuffmanCanonicalCodes(lengths, code);
  uint32_t entry[256];
  for (int s = 0; s < 256; ++s) entry[s] = code[s] | static_cast<uint32_t>(lengths.length[s]) << 16;

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
    streams[k].writer.out = at;
    streams[k].writer.end = at += stream_bytes[k];
  }
  // Independent streams: their dependency chains (bit position, output pointer) overlap in the core.
  while (streams[0].FastStepFits() && streams[1].FastStepFits() && streams[2].FastStepFits() &&
         streams[3].FastStepFits()) {
    for (Stream &stream : streams) stream.FastStep(entry);
  }
  for (Stream &stream : streams) {
    while (stream.FastStepFits()) stream.FastStep(entry);
    if (!stream.Finish(entry)) return 0;  // cannot happen: the sizes were counted from these bytes
  }
  return coded;
}

}  // namespace checkpoint
}  // namespace tw
