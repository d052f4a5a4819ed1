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

  // Steps that can run without a check: a step loads 8 bytes at `next` and advances it by at most 7,
  // and writes 4 bytes per lookup at `out`, advancing it by at most 4.
  size_t SafeSteps() const {
    constexpr ptrdiff_t kOut = 4 * kLookupsPerRefill;
    if (end - next < 8 || out_end - out < kOut) return 0;
    return static_cast<size_t>(std::min((end - next - 8) / 7, (out_end - out - kOut) / kOut)) + 1;
  }
  // Refill as in Giesen's "variant 4", then kLookupsPerRefill lookups.
  __attribute__((always_inline)) void Step(const MultiEntry *multi) {
    uint64_t word;
    std::memcpy(&word, next, 8);  // little-endian host
    buffer |= word << bits;
    next += (63 - bits) >> 3;
    bits |= 56;
    for (int i = 0; i < kLookupsPerRefill; ++i) {
      uint64_t e;  // the entry in one load: symbols in bytes 0–3, bits in byte 4, count in byte 5
      std::memcpy(&e, &multi[buffer & kPeekMask], 8);
      const uint32_t symbols = static_cast<uint32_t>(e);
      std::memcpy(out, &symbols, 4);
      out += (e >> 40) & 0xFF;
      const unsigned used = (e >> 32) & 0xFF;
      buffer >>= used;
      bits -= used;
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

static_assert(sizeof(MultiEntry) == 8, "an entry is loaded as one 64-bit word");

// The four streams interleaved, in runs of steps that need no check, then each alone; what is left
// (the last bytes of each stream) is Finish's. Copied to locals, whose address is never taken: the
// stores through `out` (bytes, which may alias anything) would otherwise keep every stream's state
// in memory.
__attribute__((always_inline)) inline void DecodeFast(Stream *streams, const MultiEntry *multi) {
  static_assert(kHuffmanStreams == 4, "one local per stream");
  Stream s0 = streams[0], s1 = streams[1], s2 = streams[2], s3 = streams[3];
  for (;;) {
    size_t steps = std::min(std::min(s0.SafeSteps(), s1.SafeSteps()), std::min(s2.SafeSteps(), s3.SafeSteps()));
    if (steps == 0) break;
    for (; steps > 0; --steps) s0.Step(multi), s1.Step(multi), s2.Step(multi), s3.Step(multi);
  }
  streams[0] = s0, streams[1] = s1, streams[2] = s2, streams[3] = s3;
  for (int k = 0; k < kHuffmanStreams; ++k) {
    Stream s = streams[k];
    for (size_t steps = s.SafeSteps(); steps > 0; steps = s.SafeSteps()) {
      for (; steps > 0; --steps) s.Step(multi);
    }
    streams[k] = s;
  }
}

void DecodeFastPlain(Stream *streams, const MultiEntry *multi) { DecodeFast(streams, multi); }
#if TW_HUFFMAN_BMI2
TW_HUFFMAN_TARGET_BMI2 void DecodeFastBmi2(Stream *streams, const MultiEntry *multi) { DecodeFast(streams, multi); }
#endif

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
    return Status(TW_DATA_LOSS, "stream sizes do not add up (" + std::to_string(listed) + " bytes listed, " +
                                    std::to_string(left) + " stored)");
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
#if TW_HUFFMAN_BMI2
  HuffmanBmi2() ? DecodeFastBmi2(streams, tables.multi) : DecodeFastPlain(streams, tables.multi);
#else
  DecodeFastPlain(streams, tables.multi);
#endif
  for (int k = 0; k < kHuffmanStreams; ++k) TW_RETURN_IF_ERROR(streams[k].Finish(tables.single, k));
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
