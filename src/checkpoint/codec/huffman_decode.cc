// The decoder of huffman.h. Table-driven, as zstd's HUF decoders: one lookup of the next 12 bits
// yields up to six whole symbols (the short codes of an exponent plane average under 3 bits: ~4.1
// symbols per lookup), and the four streams are decoded interleaved. The fast loop runs only while a
// step can neither read past its stream nor write past its part of the plane; the last bytes of each
// stream (and planes under 8 KiB whole) are decoded a symbol at a time with every read checked, and
// every stream must then end on exactly its last byte.
#include <algorithm>
#include <cstring>
#include <string>

#include "checkpoint/codec/huffman.h"
#include "checkpoint/codec/huffman_table.h"

namespace tw {
namespace checkpoint {
namespace {

// One bit more than the longest code: ~15% more symbols per lookup on exponent planes (4.09 against
// 3.54 with 11 bits and four symbols), and the 4096 8-byte entries (32 KiB) still fit in L1.
constexpr int kPeekBits = kHuffmanMaxBits + 1;
constexpr uint32_t kTableSize = 1u << kPeekBits;
constexpr uint64_t kPeekMask = kTableSize - 1;
constexpr int kMaxSymbols = 6;
// Smaller planes (a model's small variables) are decoded a symbol at a time: the full table takes
// ~16 µs to build, longer than such a plane takes to decode without it.
constexpr size_t kSymbolAtATimeBytes = 8 << 10;

// An entry decodes the next kPeekBits bits into up to kMaxSymbols whole symbols (at least one: every
// code fits), laid out so that the fast loop spends one instruction on each use: byte 0 is the bits
// they take, so the entry itself is the shift count (shifts take it modulo 64) and adds up in the
// stream's bit count; byte 1 their count; bytes 2-7 the symbols, which a rotation by 16 bits brings
// to the bottom for one 8-byte store.
struct Tables {
  uint64_t entry[kTableSize];
  uint8_t length[256];  // of each symbol's code, for the symbol-at-a-time tail
  uint64_t mask;        // of the bits that index `entry`

  // `lengths` is a complete code (ReadHuffmanTable checked it): every entry gets at least one symbol.
  __attribute__((always_inline)) void Build(const HuffmanLengths &lengths) {
    std::memcpy(length, lengths.length, sizeof length);
    mask = kPeekMask;
    uint32_t first[1u << kHuffmanMaxBits];
    FirstSymbols(lengths, kHuffmanMaxBits, first);
    // By width, narrowest first: the entry of the w bits v is v's first symbol followed by the entry
    // of the w - l bits after its code, or none when the code is longer than w (the bits above w are
    // not there). narrow[2^w + v] holds widths 0 to 11, as far as a first code leaves them over.
    uint32_t shortest = kHuffmanMaxBits;
    for (uint8_t bits : lengths.length) shortest = bits != 0 && bits < shortest ? bits : shortest;
    uint64_t narrow[kTableSize];
    narrow[1] = 0;
    // Without 1-bit codes no entry reaches kMaxSymbols (6 × 2 bits), and none needs cutting.
    shortest == 1 ? Fill<true>(first, shortest, narrow) : Fill<false>(first, shortest, narrow);
  }

  // Entries of one symbol each, only as many as the longest code needs: all that a symbol-at-a-time
  // decoder uses, for a fraction of Build's time.
  void BuildSingle(const HuffmanLengths &lengths) {
    std::memcpy(length, lengths.length, sizeof length);
    uint32_t longest = 1;
    for (uint8_t bits : lengths.length) longest = bits > longest ? bits : longest;
    mask = (uint64_t{1} << longest) - 1;
    FirstSymbols(lengths, longest, entry);
  }

  // to[v] for every v < 2^width: the entry of the one symbol whose code begins the bits v (LSB-first).
  template <typename Entry>
  __attribute__((always_inline)) static void FirstSymbols(const HuffmanLengths &lengths, uint32_t width, Entry *to) {
    uint16_t code[256];
    HuffmanCanonicalCodes(lengths, code);
    for (uint32_t s = 0; s < 256; ++s) {
      const uint32_t bits = lengths.length[s];
      if (bits == 0) continue;
      for (uint32_t v = code[s]; v < (1u << width); v += 1u << bits) to[v] = bits | 1u << 8 | s << 16;
    }
  }

  template <bool kMayCut>
  __attribute__((always_inline)) void Fill(const uint32_t *first, uint32_t shortest, uint64_t *narrow) {
    for (uint32_t w = 1; w <= kPeekBits; w = w == kPeekBits - shortest ? kPeekBits : w + 1) {
      uint64_t *to = w == kPeekBits ? entry : narrow + (1u << w);
      for (uint32_t v = 0; v < (1u << w); ++v) {
        const uint32_t f = first[v & ((1u << kHuffmanMaxBits) - 1)], bits = f & 0xFF;
        to[v] = bits > w ? 0 : Prepend<kMayCut>(f, narrow[(1u << (w - bits)) + (v >> bits)]);
      }
    }
  }

  // The entry `first` (one symbol) followed by the symbols of `rest`, the last dropped if they were
  // already kMaxSymbols: the shift pushes it out, and its bits and its count are taken back.
  template <bool kMayCut>
  __attribute__((always_inline)) uint64_t Prepend(uint64_t first, uint64_t rest) const {
    uint64_t sum = (rest & 0xFFFF) + (first & 0xFFFF);  // bits and counts: no carry (<= 12, <= 7)
    if (kMayCut && (rest >> 8 & 0xFF) == kMaxSymbols) sum -= length[rest >> 56] + (1u << 8);
    return (rest << 8 & 0xFFFFFFFFFF000000) | (first & 0xFF0000) | sum;
  }
};

constexpr int kLookupsPerRefill = 4;  // a refill leaves >= 57 bits; three lookups take <= 36 of them
static_assert(57 - (kLookupsPerRefill - 1) * kPeekBits >= kPeekBits, "the last lookup needs its bits");

// A stream read a symbol at a time with every byte checked: past the stream's end its bits read as 0
// and are counted, so that a stream too short is seen at the end.
struct SymbolReader {
  const uint8_t *begin;
  size_t size, at;  // `at` may pass `size`: virtual zero bytes
  uint64_t buffer = 0;
  unsigned bits = 0;

  // From the stream's byte at `at`, of which `skip` bits are decoded.
  SymbolReader(const uint8_t *stream, size_t stream_size, size_t next, uint64_t skip)
      : begin(stream), size(stream_size), at(next) {
    Refill();
    buffer >>= skip, bits -= static_cast<unsigned>(skip);
  }
  __attribute__((always_inline)) void Refill() {
    for (; bits <= 56; bits += 8, ++at) buffer |= static_cast<uint64_t>(at < size ? begin[at] : 0) << bits;
  }
  __attribute__((always_inline)) uint8_t Next(const Tables &tables) {
    Refill();
    const uint8_t symbol = static_cast<uint8_t>(tables.entry[buffer & tables.mask] >> 16);
    buffer >>= tables.length[symbol];
    bits -= tables.length[symbol];
    return symbol;
  }
};

// One stream. The fast loop keeps no bit buffer from step to step: each step loads the 8 bytes at
// `next` afresh and drops the `skip` bits already decoded, and the lookups add their whole entries to
// `skip`: its byte 0 (at most 7 + 4 × 12) then counts the bits they took and its byte 1 (at most
// 4 × 6) the symbols they stored, which places each store. Only three values per stream live across
// steps, so the four streams' state nearly fits in the registers (it went through the stack every
// step with a buffer carried along).
struct Stream {
  const uint8_t *begin, *end;  // the stream's bytes
  const uint8_t *next;         // the byte holding the next bit
  uint64_t skip = 0;           // its bits already decoded (0 to 7 between steps)
  uint8_t *out, *out_end;      // this stream's part of the plane

  // Steps that can run without a check: a step loads 8 bytes at `next` and advances it by at most 6
  // ((7 + 48) / 8); its lookups store 8 bytes at `out` each and advance it by at most kMaxSymbols.
  size_t SafeSteps() const {
    constexpr ptrdiff_t kAdvance = kMaxSymbols * kLookupsPerRefill, kReach = kAdvance - kMaxSymbols + 8;
    if (end - next < 8 || out_end - out < kReach) return 0;
    return static_cast<size_t>(std::min((end - next - 8) / 6, (out_end - out - kReach) / kAdvance)) + 1;
  }
  __attribute__((always_inline)) void Step(const uint64_t *table) {
    uint64_t buffer;
    std::memcpy(&buffer, next, 8);  // little-endian host
    buffer >>= skip;
    for (int i = 0; i < kLookupsPerRefill; ++i) {
      const uint64_t e = table[buffer & kPeekMask];
      const uint64_t symbols = e >> 16 | e << 48;
      std::memcpy(i == 0 ? out : out + (skip >> 8 & 0xFF), &symbols, 8);  // byte 1 starts at 0
      buffer >>= e & 63;
      skip += e;
    }
    out += skip >> 8 & 0xFF;
    next += (skip & 0xFF) >> 3;
    skip &= 7;
  }

  SymbolReader Reader() const {
    return SymbolReader(begin, static_cast<size_t>(end - begin), static_cast<size_t>(next - begin), skip);
  }

  // The rest, a symbol at a time from `reader` (where the stream's decoding stands); then checks that
  // the codes end in the stream's last byte and that its unused bits are 0.
  Status Finish(SymbolReader reader, const Tables &tables, int k) {
    while (out != out_end) *out++ = reader.Next(tables);
    const size_t size = reader.size, used = reader.at * 8 - reader.bits;  // bits the codes took
    const std::string stream = "stream " + std::to_string(k) + " ";
    if (used > size * 8) return Status(TW_DATA_LOSS, stream + "ends before its bytes are decoded");
    if (size * 8 - used >= 8) return Status(TW_DATA_LOSS, stream + "has bytes left over");
    if (used % 8 != 0 && (begin[size - 1] >> (used % 8)) != 0) {
      return Status(TW_DATA_LOSS, stream + "has non-zero padding bits");
    }
    return Status();
  }
};

// A small plane's four streams a symbol each in turn, so that their lookups' latencies overlap, while
// every stream has bytes of the plane left; Finish decodes the rest. Locals, as in DecodeFast.
void DecodeInLockstep(Stream *streams, SymbolReader *readers, const Tables &tables) {
  SymbolReader r0 = readers[0], r1 = readers[1], r2 = readers[2], r3 = readers[3];
  uint8_t *o0 = streams[0].out, *o1 = streams[1].out, *o2 = streams[2].out, *o3 = streams[3].out;
  size_t common = static_cast<size_t>(streams[0].out_end - o0);
  for (int k = 1; k < kHuffmanStreams; ++k)
    common = std::min(common, static_cast<size_t>(streams[k].out_end - streams[k].out));
  for (size_t i = 0; i < common; ++i) {
    o0[i] = r0.Next(tables), o1[i] = r1.Next(tables), o2[i] = r2.Next(tables), o3[i] = r3.Next(tables);
  }
  readers[0] = r0, readers[1] = r1, readers[2] = r2, readers[3] = r3;
  for (int k = 0; k < kHuffmanStreams; ++k) streams[k].out += common;
}

// The four streams interleaved, in runs of steps that need no check, then each alone; what is left
// (the last bytes of each stream) is Finish's. Copied to locals, whose address is never taken: the
// stores through `out` (bytes, which may alias anything) would otherwise keep every stream's state
// in memory.
__attribute__((always_inline)) inline void DecodeFast(Stream *streams, const uint64_t *table) {
  static_assert(kHuffmanStreams == 4, "one local per stream");
  Stream s0 = streams[0], s1 = streams[1], s2 = streams[2], s3 = streams[3];
  for (;;) {
    size_t steps = std::min(std::min(s0.SafeSteps(), s1.SafeSteps()), std::min(s2.SafeSteps(), s3.SafeSteps()));
    if (steps == 0) break;
    for (; steps > 0; --steps) s0.Step(table), s1.Step(table), s2.Step(table), s3.Step(table);
  }
  streams[0] = s0, streams[1] = s1, streams[2] = s2, streams[3] = s3;
  for (int k = 0; k < kHuffmanStreams; ++k) {
    Stream s = streams[k];
    for (size_t steps = s.SafeSteps(); steps > 0; steps = s.SafeSteps()) {
      for (; steps > 0; --steps) s.Step(table);
    }
    streams[k] = s;
  }
}

// The table's construction too shifts by variable counts (and is ~3% of a plane's decoding).
__attribute__((always_inline)) inline void Decode(const HuffmanLengths &lengths, Tables *tables, Stream *streams) {
  tables->Build(lengths);
  DecodeFast(streams, tables->entry);
}

void DecodePlain(const HuffmanLengths &lengths, Tables *tables, Stream *streams) { Decode(lengths, tables, streams); }
#if TW_KERNELS_X86
TW_TARGET_BMI2 void DecodeBmi2(const HuffmanLengths &lengths, Tables *tables, Stream *streams) {
  Decode(lengths, tables, streams);
}
#endif

}  // namespace

Status HuffmanDecode(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size, Isa isa) {
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

  Tables tables;  // 32 KiB, left uninitialised: Build or BuildSingle fills what is read
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
  const bool small = out_size < kSymbolAtATimeBytes;
  if (small) {
    tables.BuildSingle(lengths);
  } else {
#if TW_KERNELS_X86
    if (ResolveIsa(isa) != Isa::kPortable) {
      DecodeBmi2(lengths, &tables, streams);
    } else {
      DecodePlain(lengths, &tables, streams);
    }
#else
    (void)isa;
    DecodePlain(lengths, &tables, streams);
#endif
  }
  SymbolReader readers[kHuffmanStreams] = {streams[0].Reader(), streams[1].Reader(), streams[2].Reader(),
                                           streams[3].Reader()};
  if (small) DecodeInLockstep(streams, readers, tables);
  for (int k = 0; k < kHuffmanStreams; ++k) TW_RETURN_IF_ERROR(streams[k].Finish(readers[k], tables, k));
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
