// The decoder of huffman.h. Table-driven, as zstd's HUF decoders: one lookup of the next
// kHuffmanMaxBits bits yields up to four whole symbols (the short codes of an exponent plane average
// under 3 bits), and the four streams are decoded interleaved. The fast loop runs only while a step
// can neither read past its stream nor write past its part of the plane; the last bytes of each
// stream are decoded a symbol at a time with every read checked, and every stream must then end on
// exactly its last byte.
#include <algorithm>
#include <cstring>
#include <string>

#include "checkpoint/huffman.h"
#include "checkpoint/huffman_table.h"

namespace tw {
namespace checkpoint {
namespace {

constexpr uint32_t kTableSize = 1u << kHuffmanMaxBits;
constexpr uint64_t kPeekMask = kTableSize - 1;

struct SingleEntry {
  uint8_t symbol;
  uint8_t bits;
};

// Up to four symbols whose codes all lie in the kHuffmanMaxBits bits looked up (at least one does).
struct MultiEntry {
  uint8_t symbols[4];
  uint8_t bits;   // of all `count` codes
  uint8_t count;  // 1 … 4
  uint8_t unused[2];
};

struct Tables {
  SingleEntry single[kTableSize];
  MultiEntry multi[kTableSize];

  // `lengths` is a complete code (ReadHuffmanTable checked it): every entry is filled exactly once.
  explicit Tables(const HuffmanLengths &lengths) {
    uint16_t code[256];
    HuffmanCanonicalCodes(lengths, code);
    for (int s = 0; s < 256; ++s) {
      const uint8_t bits = lengths.length[s];
      if (bits == 0) continue;
      for (uint32_t i = code[s]; i < kTableSize; i += 1u << bits) single[i] = {static_cast<uint8_t>(s), bits};
    }
    for (uint32_t i = 0; i < kTableSize; ++i) {
      MultiEntry &e = multi[i];
      e = MultiEntry{};
      uint32_t rest = i, left = kHuffmanMaxBits;
      while (e.count < 4) {
        // The bits above `left` read as 0 here; a code no longer than `left` does not depend on them.
        const SingleEntry &next = single[rest];
        if (next.bits > left) break;
        e.symbols[e.count++] = next.symbol;
        e.bits = static_cast<uint8_t>(e.bits + next.bits);
        rest >>= next.bits;
        left -= next.bits;
      }
    }
  }
};

constexpr int kLookupsPerRefill = 5;  // a refill leaves >= 56 bits; four lookups take <= 44 of them
static_assert(56 - (kLookupsPerRefill - 1) * kHuffmanMaxBits >= kHuffmanMaxBits, "the last lookup needs its bits");

// One stream: bits are taken LSB-first; `buffer` holds `bits` valid bits (fast path: and some of the
// bytes after them, which the next refill ORs in again unchanged).
struct Stream {
  const uint8_t *begin, *end;  // the stream's bytes
  const uint8_t *next;         // the first byte not yet counted in `bits`
  uint64_t buffer = 0;
  unsigned bits = 0;
  uint8_t *out, *out_end;  // this stream's part of the plane

  bool FastStepFits() const { return end - next >= 8 && out_end - out >= 4 * kLookupsPerRefill; }
  // Refill as in Giesen's "variant 4" (the load is in bounds: FastStepFits), then kLookupsPerRefill lookups.
  void FastStep(const MultiEntry *multi) {
    uint64_t word;
    std::memcpy(&word, next, 8);  // little-endian host
    buffer |= word << bits;
    next += (63 - bits) >> 3;
    bits |= 56;
    for (int i = 0; i < kLookupsPerRefill; ++i) {
      const MultiEntry &e = multi[buffer & kPeekMask];
      std::memcpy(out, e.symbols, 4);  // in bounds: FastStepFits
      out += e.count;
      buffer >>= e.bits;
      bits -= e.bits;
    }
  }

  // The rest, a symbol at a time; past the stream's end the bits read as 0 and are counted, so that a
  // stream too short is seen at the end. Then checks that the codes end in the stream's last byte and
  // that its unused bits are 0.
  Status Finish(const SingleEntry *single, int k) {
    if (bits < 64) buffer &= (uint64_t{1} << bits) - 1;  // drop the bytes the fast path read ahead
    const size_t size = static_cast<size_t>(end - begin);
    size_t at = static_cast<size_t>(next - begin);  // may pass `size`: virtual zero bytes
    while (out != out_end) {
      while (bits <= 56) {
        buffer |= static_cast<uint64_t>(at < size ? begin[at] : 0) << bits;
        bits += 8;
        ++at;
      }
      const SingleEntry &e = single[buffer & kPeekMask];
      *out++ = e.symbol;
      buffer >>= e.bits;
      bits -= e.bits;
    }
    const size_t used = at * 8 - bits;  // bits the codes took
    const std::string stream = "stream " + std::to_string(k) + " ";
    if (used > size * 8) return Status(TW_DATA_LOSS, stream + "ends before its bytes are decoded");
    if (size * 8 - used >= 8) return Status(TW_DATA_LOSS, stream + "has bytes left over");
    if (used % 8 != 0 && (begin[size - 1] >> (used % 8)) != 0) {
      return Status(TW_DATA_LOSS, stream + "has non-zero padding bits");
    }
    return Status();
  }
};

}  // namespace

Status HuffmanDecode(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size) {
  HuffmanLengths lengths;
  size_t table = 0;
  std::string why;
  if (!ReadHuffmanTable(in, in_size, &lengths, &table, &why)) return Status(TW_DATA_LOSS, why);
  constexpr size_t kSizesBytes = 4 * (kHuffmanStreams - 1);
  if (in_size - table < kSizesBytes) return Status(TW_DATA_LOSS, "truncated stream sizes");
  const uint8_t *at = in + table + kSizesBytes;
  const uint64_t left = in_size - table - kSizesBytes;
  uint64_t stream_size[kHuffmanStreams];
  for (int k = 0; k < kHuffmanStreams - 1; ++k) {
    uint32_t bytes;
    std::memcpy(&bytes, in + table + 4 * k, 4);
    stream_size[k] = bytes;
  }
  const uint64_t listed = stream_size[0] + stream_size[1] + stream_size[2];
  if (listed > left) {
    return Status(TW_DATA_LOSS, "stream sizes do not add up (" + std::to_string(listed) +
                                    " bytes listed, " + std::to_string(left) + " stored)");
  }
  stream_size[kHuffmanStreams - 1] = left - listed;

  const Tables tables(lengths);
  const size_t segment = (out_size + kHuffmanStreams - 1) / kHuffmanStreams;
  Stream streams[kHuffmanStreams];
  for (int k = 0; k < kHuffmanStreams; ++k) {
    Stream &s = streams[k];
    s.begin = s.next = at;
    s.end = at += stream_size[k];
    const size_t begin = std::min(out_size, k * segment);
    s.out = out + begin;
    s.out_end = out + std::min(out_size, begin + segment);
  }
  while (streams[0].FastStepFits() && streams[1].FastStepFits() && streams[2].FastStepFits() &&
         streams[3].FastStepFits()) {
    for (Stream &s : streams) s.FastStep(tables.multi);
  }
  for (int k = 0; k < kHuffmanStreams; ++k) {
    Stream &s = streams[k];
    while (s.FastStepFits()) s.FastStep(tables.multi);
    TW_RETURN_IF_ERROR(s.Finish(tables.single, k));
  }
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
