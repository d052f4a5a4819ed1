// The encoder of huffman.h: the code from the model, then the four streams written interleaved into
// areas of `work` (a stream's size is known only once it is written), then copied behind the table.
#include <algorithm>
#include <cstring>

#include "checkpoint/codec/huffman.h"
#include "checkpoint/codec/huffman_table.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

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
using RangesFunction = Ranges (*)(const uint8_t *in, size_t size);
void CodeWeights(const uint8_t *in, size_t size, const HuffmanModel &model, RangesFunction ranges,
                 uint64_t weight[256]) {
  for (int s = 0; s < 256; ++s) weight[s] = static_cast<uint64_t>(model.count[s]) * (model.whole_plane ? 1 : 2);
  if (model.whole_plane) return;
  const Ranges r = ranges(in, size);
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

// The longest run of codes Stream::Put appends at once: with up to 7 bits pending, the buffer holds at
// most 63 bits, so its shift by the whole bytes stored stays under 64.
constexpr unsigned kMaxPiece = 56;

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
    std::memcpy(out, &buffer, 8);  // little-endian host (wire.h asserts it)
    out += bits >> 3;
    buffer >>= bits & ~7u;
    bits &= 7;
  }
  // One piece of codes (at most kMaxPiece bits: with 7 bits pending, the buffer never holds 64).
  __attribute__((always_inline)) void Put(uint64_t piece, unsigned length) {
    buffer |= piece << bits;
    bits += length;
    std::memcpy(out, &buffer, 8);
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
#if TW_KERNELS_X86
TW_TARGET_BMI2 void EncodeStreamsBmi2(Stream *streams, const Code &code) { EncodeStreams(streams, code); }

// The AVX-512 loop: 64 bytes of a stream per step. Each byte's code and length are looked up in
// registers, then adjacent codes are joined in the vector, a | b << length(a), into pieces of 2, 4, 8
// and 16 bytes while every piece of the step fits kMaxPiece bits: the scalar part, which bounds the
// speed, then appends 4 pieces per 64 bytes instead of 32 pair codes.
struct VectorTables {
  // Per byte value, 64 values per register: the code's bits 0–7, its bits 8–10, its length.
  __m512i low[4], high[4], length[4];
};

// table[x] for each byte x: two 128-entry lookups, chosen by the byte's top bit. Narrow: when no coded
// byte value has bit 6 set (0x00–0x3F, 0x80–0xBF: the sign-and-exponent bytes of floats under 2 in
// magnitude), one 128-entry lookup by bits 0–5 and 7, half the instructions.
template <bool kNarrow>
TW_TARGET_AVX512_VBMI inline __m512i Lookup(const __m512i table[4], __m512i x, __mmask64 upper) {
  if (kNarrow) return _mm512_permutex2var_epi8(table[0], x, table[1]);
  return _mm512_mask_blend_epi8(upper, _mm512_permutex2var_epi8(table[0], x, table[1]),
                                _mm512_permutex2var_epi8(table[2], x, table[3]));
}

// The codes are widened to words by unpacking, which interleaves within 128-bit lanes: 128-bit lane j
// of half A (the low unpack) holds the codes of bytes 16j … 16j+7, of half B bytes 16j+8 … 16j+15.
// These permutation indices bring the lengths (bytes, in order) beside the codes they shift, and the
// 4-byte pieces of both halves in order; the lanes of the length permutations not named are zeroed.
struct VectorIndices {
  __m512i pair_length[2];  // bytes: byte 2 of each 32-bit lane, the length of its pair's first code
  __m512i quad_length[2];  // words (of pair lengths): word 0 of each 64-bit lane, its first pair's length
  __m512i first, second;   // for 8-byte group g (bytes 8g …), its two 4-byte pieces among A's and B's
};

// The first byte of 4-byte piece q (0–7: half A's 64-bit lanes, 8–15: half B's).
inline int QuadByte(int q) { return 16 * (q % 8 / 2) + 8 * (q / 8) + 4 * (q % 2); }

TW_TARGET_AVX512_VBMI VectorIndices MakeIndices() {
  alignas(64) int8_t bytes[2][64];
  alignas(64) int16_t words[2][32];
  alignas(64) int64_t first[8], second[8];
  for (int h = 0; h < 2; ++h) {
    for (int d = 0; d < 16; ++d) {  // 32-bit lane d of half h: the pair of bytes 16 (d / 4) + 8h + 2 (d % 4)
      for (int k = 0; k < 4; ++k) {
        bytes[h][4 * d + k] = static_cast<int8_t>(k == 2 ? 16 * (d / 4) + 8 * h + 2 * (d % 4) : 0);
      }
    }
    for (int q = 0; q < 8; ++q) {
      for (int k = 0; k < 4; ++k) words[h][4 * q + k] = static_cast<int16_t>(k == 0 ? QuadByte(8 * h + q) / 2 : 0);
    }
  }
  for (int g = 0; g < 8; ++g) {  // group g: bytes 8g … 8g+7 = pieces whose QuadByte is 8g and 8g+4
    for (int q = 0; q < 16; ++q) {
      if (QuadByte(q) == 8 * g) first[g] = q;
      if (QuadByte(q) == 8 * g + 4) second[g] = q;
    }
  }
  VectorIndices v;
  for (int h = 0; h < 2; ++h) {
    v.pair_length[h] = _mm512_load_si512(bytes[h]);
    v.quad_length[h] = _mm512_load_si512(words[h]);
  }
  v.first = _mm512_load_si512(first);
  v.second = _mm512_load_si512(second);
  return v;
}

// The pieces of one step, first to last, as Cut leaves them.
struct Pieces {
  alignas(64) uint64_t code[16];
  alignas(64) uint64_t length[16];
};
__attribute__((always_inline)) inline void Put(Stream &stream, const Pieces &pieces, int n) {
  if (n == 4) {  // nearly always on exponent planes: unrolled
    for (int j = 0; j < 8; j += 2) stream.Put(pieces.code[j], static_cast<unsigned>(pieces.length[j]));
  } else {
    for (int j = 0; j < n; ++j) stream.Put(pieces.code[j], static_cast<unsigned>(pieces.length[j]));
  }
}

// Cuts in[0, 64) into pieces; returns how many: 4 (in lanes 0, 2, 4, 6), 8 or 16.
template <bool kNarrow>
TW_TARGET_AVX512_VBMI inline int Cut(const uint8_t *in, const VectorTables &tables, const VectorIndices &index,
                                     Pieces *pieces) {
  __m512i x = _mm512_loadu_si512(in);
  __mmask64 upper = 0;
  if (kNarrow) {  // bit 7 to bit 6 (which is 0), the index bit that picks the second table register
    x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi16(x, 1), _mm512_set1_epi8(0x40), 0xF8);  // a | (b & c)
  } else {
    upper = _mm512_movepi8_mask(x);
  }
  const __m512i low = Lookup<kNarrow>(tables.low, x, upper), high = Lookup<kNarrow>(tables.high, x, upper);
  const __m512i length = Lookup<kNarrow>(tables.length, x, upper);  // bytes in order
  // Pairs: c0 + c1 · 2^l0 with one multiply-add of words, c1 beside 2^l0 = 1 << (l0 in the odd word).
  const __m512i one16 = _mm512_set1_epi16(1);
  const __mmask64 byte2 = 0x4444444444444444;
  const __m512i pairs_a =
      _mm512_madd_epi16(_mm512_unpacklo_epi8(low, high),
                        _mm512_sllv_epi16(one16, _mm512_maskz_permutexvar_epi8(byte2, index.pair_length[0], length)));
  const __m512i pairs_b =
      _mm512_madd_epi16(_mm512_unpackhi_epi8(low, high),
                        _mm512_sllv_epi16(one16, _mm512_maskz_permutexvar_epi8(byte2, index.pair_length[1], length)));
  // 4 bytes: the pair in the low half, then the high half's shifted by the first pair's length.
  const __m512i pair_lengths = _mm512_maddubs_epi16(length, _mm512_set1_epi8(1));  // word m: bytes 2m, 2m+1
  const __mmask32 word0 = 0x11111111;
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
  const __m512i quads_a = _mm512_ternarylogic_epi64(
      pairs_a, low32,
      _mm512_sllv_epi64(_mm512_srli_epi64(pairs_a, 32),
                        _mm512_maskz_permutexvar_epi16(word0, index.quad_length[0], pair_lengths)),
      0xEA);  // (a & b) | c
  const __m512i quads_b = _mm512_ternarylogic_epi64(
      pairs_b, low32,
      _mm512_sllv_epi64(_mm512_srli_epi64(pairs_b, 32),
                        _mm512_maskz_permutexvar_epi16(word0, index.quad_length[1], pair_lengths)),
      0xEA);
  // 8 bytes (group g: bytes 8g …) and 16 (groups 2h and 2h+1, one 128-bit lane), when every piece's
  // length, a sum of its bytes', fits: groups fit when 16-byte pieces do, so one check is enough then.
  const __m512i first = _mm512_permutex2var_epi64(quads_a, index.first, quads_b);
  const __m512i second = _mm512_permutex2var_epi64(quads_a, index.second, quads_b);
  const __m512i first_length = _mm512_and_si512(_mm512_madd_epi16(pair_lengths, one16), low32);
  const __m512i group_length = _mm512_sad_epu8(length, _mm512_setzero_si512());
  const __m512i next_length = _mm512_shuffle_epi32(group_length, _MM_PERM_BADC);  // the lane's other group
  const __m512i sixteen_length = _mm512_add_epi64(group_length, next_length);
  const __m512i most = _mm512_set1_epi64(kMaxPiece);
  const __m512i groups = _mm512_or_si512(first, _mm512_sllv_epi64(second, first_length));
  if (_mm512_cmpgt_epu64_mask(sixteen_length, most) == 0) {  // pieces in lanes 0, 2, 4, 6
    const __m512i next = _mm512_shuffle_epi32(groups, _MM_PERM_BADC);
    _mm512_store_si512(pieces->code, _mm512_or_si512(groups, _mm512_sllv_epi64(next, group_length)));
    _mm512_store_si512(pieces->length, sixteen_length);
    return 4;
  }
  if (_mm512_cmpgt_epu64_mask(group_length, most) == 0) {
    _mm512_store_si512(pieces->code, groups);
    _mm512_store_si512(pieces->length, group_length);
    return 8;
  }
  const __m512i in_order_0 = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
  const __m512i in_order_1 = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
  const __m512i second_length = _mm512_sub_epi64(group_length, first_length);
  _mm512_store_si512(pieces->code, _mm512_permutex2var_epi64(first, in_order_0, second));
  _mm512_store_si512(pieces->code + 8, _mm512_permutex2var_epi64(first, in_order_1, second));
  _mm512_store_si512(pieces->length, _mm512_permutex2var_epi64(first_length, in_order_0, second_length));
  _mm512_store_si512(pieces->length + 8, _mm512_permutex2var_epi64(first_length, in_order_1, second_length));
  return 16;
}

template <bool kNarrow>
TW_TARGET_AVX512_VBMI void EncodeSteps(Stream *streams, const VectorTables &tables) {
  const VectorIndices index = MakeIndices();
  for (int k = 0; k < kHuffmanStreams; k += 2) {
    Stream a = streams[k], b = streams[k + 1];
    const size_t steps = static_cast<size_t>(std::min(a.in_end - a.in, b.in_end - b.in)) / 64;
    for (size_t i = 0; i < steps; ++i) {
      Pieces pa, pb;
      const int na = Cut<kNarrow>(a.in, tables, index, &pa), nb = Cut<kNarrow>(b.in, tables, index, &pb);
      a.in += 64, b.in += 64;
      Put(a, pa, na), Put(b, pb, nb);
    }
    streams[k] = a, streams[k + 1] = b;
  }
}

TW_TARGET_AVX512_VBMI void EncodeStreamsAvx512(Stream *streams, const Code &code) {
  bool narrow = true;
  for (int s = 0; s < 256; ++s) narrow &= code.length[s] == 0 || (s & 0x40) == 0;
  alignas(64) uint8_t bytes[3][256];
  for (int i = 0; i < 256; ++i) {
    const int s = narrow ? (i & 0x3F) | (i & 0x40) << 1 : i;  // narrow: entries 0–127 only
    bytes[0][i] = static_cast<uint8_t>(code.bits[s]);
    bytes[1][i] = static_cast<uint8_t>(code.bits[s] >> 8);
    bytes[2][i] = code.length[s];
  }
  VectorTables tables;
  for (int i = 0; i < 4; ++i) {
    tables.low[i] = _mm512_load_si512(bytes[0] + 64 * i);
    tables.high[i] = _mm512_load_si512(bytes[1] + 64 * i);
    tables.length[i] = _mm512_load_si512(bytes[2] + 64 * i);
  }
  narrow ? EncodeSteps<true>(streams, tables) : EncodeSteps<false>(streams, tables);
  for (int k = 0; k < kHuffmanStreams; ++k) streams[k].Finish(code);  // the last bytes: no pair table
}

// ByteRanges 64 bytes at a time, each half's bytes picked by a mask of the top bits.
TW_TARGET_AVX512_VBMI Ranges ByteRangesAvx512(const uint8_t *in, size_t size) {
  __m512i low_min = _mm512_set1_epi8(-1), low_max = _mm512_setzero_si512(), high_min = low_min, high_max = low_max;
  size_t i = 0;
  for (; i + 64 <= size; i += 64) {
    const __m512i v = _mm512_loadu_si512(in + i);
    const __mmask64 high = _mm512_movepi8_mask(v), low = ~high;
    low_min = _mm512_mask_min_epu8(low_min, low, low_min, v);
    low_max = _mm512_mask_max_epu8(low_max, low, low_max, v);
    high_min = _mm512_mask_min_epu8(high_min, high, high_min, v);
    high_max = _mm512_mask_max_epu8(high_max, high, high_max, v);
  }
  alignas(64) uint8_t lanes[4][64];
  _mm512_store_si512(lanes[0], low_min);
  _mm512_store_si512(lanes[1], low_max);
  _mm512_store_si512(lanes[2], high_min);
  _mm512_store_si512(lanes[3], high_max);
  Ranges r;
  for (int k = 0; k < 64; ++k) {  // as in ByteRanges: a lane that saw no byte of a half has min > max
    if (lanes[0][k] <= lanes[1][k]) r.Add(lanes[0][k]), r.Add(lanes[1][k]);
    if (lanes[2][k] <= lanes[3][k]) r.Add(lanes[2][k]), r.Add(lanes[3][k]);
  }
  for (; i < size; ++i) r.Add(in[i]);
  return r;
}

#endif

void EncodeStreamsWith(Isa isa, Stream *streams, const Code &code) {
  switch (isa) {
#if TW_KERNELS_X86
    case Isa::kAvx512Vbmi: return EncodeStreamsAvx512(streams, code);
    case Isa::kAvx512:
    case Isa::kAvx2: return EncodeStreamsBmi2(streams, code);
#endif
    default: return EncodeStreamsPlain(streams, code);
  }
}

}  // namespace

size_t HuffmanEncode(const uint8_t *in, size_t size, const HuffmanModel &model, uint8_t *out, size_t capacity,
                     uint8_t *work, Isa isa) {
  if (size == 0) return 0;
  uint64_t weight[256];
  isa = ResolveIsa(isa);
#if TW_KERNELS_X86
  CodeWeights(in, size, model, isa == Isa::kAvx512Vbmi ? ByteRangesAvx512 : ByteRanges, weight);
#else
  CodeWeights(in, size, model, ByteRanges, weight);
#endif
  const HuffmanLengths lengths = ChooseHuffmanLengths(weight);
  Code code;
  uint16_t canonical[256];
  HuffmanCanonicalCodes(lengths, canonical);
  for (int s = 0; s < 256; ++s) code.bits[s] = canonical[s], code.length[s] = lengths.length[s];
  work += (64 - reinterpret_cast<uintptr_t>(work) % 64) % 64;  // HuffmanWorkBytes leaves room for this
  code.pair = reinterpret_cast<uint32_t *>(work);
  work += kPairEntries * sizeof(uint32_t);
  if (isa != Isa::kAvx512Vbmi) FillPairs(&code);

  // Stream k into work[k·area, (k+1)·area).
  const size_t segment = (size + kHuffmanStreams - 1) / kHuffmanStreams, area = MaxStreamBytes(segment);
  Stream streams[kHuffmanStreams];
  for (int k = 0; k < kHuffmanStreams; ++k) {
    const size_t begin = std::min(size, k * segment);
    streams[k].in = in + begin;
    streams[k].in_end = in + std::min(size, begin + segment);
    streams[k].out = work + k * area;
  }
  EncodeStreamsWith(isa, streams, code);

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
