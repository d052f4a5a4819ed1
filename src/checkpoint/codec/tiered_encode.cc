// The code choice and the encoder of tiered.h. The portable loop (the reference) makes two passes over
// the plane: the first counts the bytes that reach each tier, which sizes every stream, so that the
// second writes each stream in place at its final offset and a plane that would not fit is refused
// before any write. The AVX-512 loop makes one: stream 1, whose size and offset are known beforehand,
// in place, the rest staged in `work` a byte a code and packed once the counts are known (EncodeSteps).
#include <algorithm>
#include <cstring>

#include "checkpoint/codec/tiered.h"

namespace tw {
namespace checkpoint {
namespace {

// What the encoder is given must be a code a reader accepts.
bool Valid(const TieredCode &code) {
  if (code.tiers < 1 || code.tiers > kTieredMaxTiers) return false;
  bool seen[256] = {};
  for (int t = 0; t < code.tiers; ++t) {
    if (code.width[t] < 1 || code.width[t] > kTieredMaxWidth) return false;
    for (int c = 0; c < (1 << code.width[t]) - 1; ++c) {
      if (seen[code.symbol[t][c]]) return false;
      seen[code.symbol[t][c]] = true;
    }
  }
  return true;
}

// Per byte value: its code in each tier (the escape where the tier does not code it), the tier that
// codes it (code.tiers: raw), and both in one byte, tier · 64 + code, for the vector loop: a byte's
// code in tier t is then min(tagged - 64·t, escape_t) wherever it reaches tier t (a later tier's tag
// minus 64·t is at least 64, above every escape), with no lookup per tier.
struct Tables {
  alignas(64) uint8_t code[kTieredMaxTiers][256];
  alignas(64) uint8_t tier[256];
  alignas(64) uint8_t tagged[256];
  explicit Tables(const TieredCode &code_) {
    std::memset(tier, code_.tiers, sizeof tier);
    std::memset(tagged, code_.tiers * 64, sizeof tagged);
    for (int t = 0; t < code_.tiers; ++t) {
      const int escape = (1 << code_.width[t]) - 1;
      std::memset(code[t], escape, 256);
      for (int c = 0; c < escape; ++c) {
        code[t][code_.symbol[t][c]] = static_cast<uint8_t>(c);
        tier[code_.symbol[t][c]] = static_cast<uint8_t>(t);
        tagged[code_.symbol[t][c]] = static_cast<uint8_t>(64 * t + c);
      }
    }
  }
};

// Where each part of the coded plane goes, from the counts of bytes reaching each tier.
struct Layout {
  uint64_t count[kTieredMaxTiers + 1] = {};  // codes in streams 1..T (0-based), then raw bytes
  uint64_t stream_bytes[kTieredMaxTiers] = {};
  size_t total = 0;
};

Layout MakeLayout(const TieredCode &code, const uint64_t *count) {
  Layout layout;
  layout.total = TieredHeaderBytes(code) + count[code.tiers];
  for (int t = 0; t <= code.tiers; ++t) layout.count[t] = count[t];
  for (int t = 0; t < code.tiers; ++t) {
    layout.stream_bytes[t] = (count[t] * static_cast<uint64_t>(code.width[t]) + 7) / 8;
    layout.total += layout.stream_bytes[t];
  }
  return layout;
}

uint8_t *WriteHeader(const TieredCode &code, const Layout &layout, uint8_t *out) {
  *out++ = static_cast<uint8_t>(code.tiers);
  for (int t = 0; t < code.tiers; ++t) {
    *out++ = static_cast<uint8_t>(code.width[t]);
    const size_t symbols = (size_t{1} << code.width[t]) - 1;
    std::memcpy(out, code.symbol[t], symbols);
    out += symbols;
  }
  for (int t = 1; t <= code.tiers; ++t) {
    const uint32_t count = static_cast<uint32_t>(layout.count[t]);
    for (int b = 0; b < 4; ++b) *out++ = static_cast<uint8_t>(count >> (8 * b));
  }
  return out;
}

// A stream written LSB-first, 8 bytes at a time. While 8 bytes of the stream are left, every Put stores
// them, whether they are full or not, and moves on by 8 only when they are: no branch on the data (the
// bits a step appends vary, and a branch on them was mispredicted every few steps). Near the end only
// full bytes are stored, so that no store reaches into the next stream (written in the same pass).
struct BitWriter {
  uint8_t *at, *end;
  uint64_t buffer = 0;
  unsigned bits = 0;  // < 64

  BitWriter(uint8_t *stream, uint64_t bytes) : at(stream), end(stream + bytes) {}
  // `value` < 2^count, 0 <= count <= 64.
  __attribute__((always_inline)) void Put(uint64_t value, unsigned count) {
    const uint64_t low = buffer | value << bits;
    const unsigned total = bits + count;
    if (__builtin_expect(end - at >= 8, 1)) {
      std::memcpy(at, &low, 8);  // little-endian host
      const bool full = total >= 64;
      at += full ? 8 : 0;
      buffer = full ? (value >> 1) >> (63 - bits) : low;  // the bits of value past the 64
      bits = total & 63;
      return;
    }
    buffer = low;
    bits = total;
    if (bits >= 64) {
      std::memcpy(at, &buffer, 8);
      at += 8;
      bits -= 64;
      buffer = bits == 0 ? 0 : value >> (count - bits);
    }
  }
  void Flush() {
    for (unsigned i = 0; i < (bits + 7) / 8; ++i) at[i] = static_cast<uint8_t>(buffer >> (8 * i));
  }
};

// ---- The portable loops: a byte at a time.

void CountPortable(const uint8_t *in, size_t size, const Tables &tables, int tiers, uint64_t *count) {
  uint64_t by_tier[kTieredMaxTiers + 1] = {};
  for (size_t i = 0; i < size; ++i) ++by_tier[tables.tier[in[i]]];
  uint64_t reach = 0;  // bytes coded by tier t or later
  for (int t = tiers; t >= 0; --t) count[t] = reach += by_tier[t];
}

// Blocks of the plane coded tier by tier, as the decoder reads them: tier 1 codes every byte and lists
// those that reach tier 2, each later tier codes the listed bytes and keeps those that go on; no branch
// on a byte's tier.
void EncodePortable(const uint8_t *in, size_t size, const TieredCode &code, const Tables &tables, const Layout &layout,
                    uint8_t **stream, uint8_t *raw) {
  constexpr size_t kBlock = 4096;
  uint16_t listed[kBlock];
  BitWriter writer[kTieredMaxTiers] = {BitWriter(stream[0], layout.stream_bytes[0]),
                                       BitWriter(stream[1], layout.stream_bytes[1]),
                                       BitWriter(stream[2], layout.stream_bytes[2])};
  for (size_t begin = 0; begin < size; begin += kBlock) {
    const size_t n = std::min(kBlock, size - begin);
    const uint8_t *block = in + begin;
    size_t reach = 0;
    {
      BitWriter w = writer[0];
      const unsigned width = static_cast<unsigned>(code.width[0]);
      for (size_t i = 0; i < n; ++i) {
        w.Put(tables.code[0][block[i]], width);
        listed[reach] = static_cast<uint16_t>(i);
        reach += tables.tier[block[i]] > 0;
      }
      writer[0] = w;
    }
    for (int t = 1; t < code.tiers; ++t) {
      BitWriter w = writer[t];
      const unsigned width = static_cast<unsigned>(code.width[t]);
      size_t again = 0;
      for (size_t j = 0; j < reach; ++j) {
        const uint8_t byte = block[listed[j]];
        w.Put(tables.code[t][byte], width);
        listed[again] = listed[j];
        again += tables.tier[byte] > t;
      }
      writer[t] = w;
      reach = again;
    }
    for (size_t j = 0; j < reach; ++j) *raw++ = block[listed[j]];
  }
  for (int t = 0; t < code.tiers; ++t) writer[t].Flush();
}

#if TW_KERNELS_X86
// ---- The AVX-512 loops: 64 bytes per step.

struct Table256 {
  __m512i part[4];
};

TW_TARGET_AVX512_VBMI inline Table256 LoadTable(const uint8_t *table) {
  Table256 t;
  for (int k = 0; k < 4; ++k) t.part[k] = _mm512_load_si512(table + 64 * k);
  return t;
}

// table[x] for each byte x: two 128-entry lookups, chosen by the byte's top bit.
TW_TARGET_AVX512_VBMI inline __m512i Lookup(const Table256 &table, __m512i x) {
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), _mm512_permutex2var_epi8(table.part[0], x, table.part[1]),
                                _mm512_permutex2var_epi8(table.part[2], x, table.part[3]));
}

TW_TARGET_AVX512_VBMI inline __mmask64 Lanes(size_t n) { return n >= 64 ? ~__mmask64{0} : _bzhi_u64(~0ull, n); }

// How 64 codes of `width` bits are packed into 8·width bytes: adjacent codes joined into words and
// dwords by multiply-adds (a + b·2^w: the products cannot overflow), dwords into qwords by shifts (each
// qword then holds 8 codes in its low 8·width bits), and a permutation that gathers the low `width`
// bytes of each qword.
struct Packer {
  __m512i pair_bytes, pair_words;  // multipliers 1, 2^w and 1, 2^2w
  __m128i shift;                   // 4·width
  __m512i gather;

  TW_TARGET_AVX512_VBMI Packer() : Packer(1) {}
  TW_TARGET_AVX512_VBMI explicit Packer(int width) {
    pair_bytes = _mm512_set1_epi16(static_cast<int16_t>(1 | (1 << width) << 8));
    pair_words = _mm512_set1_epi32(1 | (1 << 2 * width) << 16);
    shift = _mm_cvtsi32_si128(4 * width);
    alignas(64) uint8_t index[64];
    for (int i = 0; i < 64; ++i) index[i] = static_cast<uint8_t>(i < 8 * width ? 8 * (i / width) + i % width : 0);
    gather = _mm512_load_si512(index);
  }
  // The 64 codes (each < 2^width) packed LSB-first into the low 8·width bytes.
  TW_TARGET_AVX512_VBMI __m512i Pack(__m512i codes) const {
    const __m512i dwords = _mm512_madd_epi16(_mm512_maddubs_epi16(codes, pair_bytes), pair_words);
    const __m512i qwords = _mm512_or_si512(_mm512_and_si512(dwords, _mm512_set1_epi64(0xFFFFFFFF)),
                                           _mm512_sll_epi64(_mm512_srli_epi64(dwords, 32), shift));
    return _mm512_permutexvar_epi8(gather, qwords);
  }
};

// The codes of the staged tier, one a byte at codes[0, count), packed LSB-first into their stream at
// `out`: 64 codes at a time into 8·width bytes, always byte-aligned; the tail's missing codes are 0, so
// the unused bits of the last byte are 0. Writes exactly ceil(count·width / 8) bytes.
TW_TARGET_AVX512_VBMI void PackStaged(const uint8_t *codes, size_t count, int width, uint8_t *out) {
  const Packer packer(width);
  const size_t step_bytes = 8 * static_cast<size_t>(width);
  const __mmask64 step = _bzhi_u64(~0ull, static_cast<unsigned>(step_bytes));
  size_t i = 0;
  for (; i + 64 <= count; i += 64, out += step_bytes)
    _mm512_mask_storeu_epi8(out, step, packer.Pack(_mm512_loadu_si512(codes + i)));
  if (i < count) {
    const size_t rest = count - i;
    const unsigned bytes = static_cast<unsigned>((rest * static_cast<size_t>(width) + 7) / 8);
    _mm512_mask_storeu_epi8(out, _bzhi_u64(~0ull, bytes), packer.Pack(_mm512_maskz_loadu_epi8(Lanes(rest), codes + i)));
  }
}

// Tier 3 of a three-tier code from the bytes staged for it (those that reach it, at bytes[0, count)):
// their codes packed into stream 3 at `stream`, the bytes it escapes copied to `raw`.
TW_TARGET_AVX512_VBMI void CodeLastTier(const uint8_t *bytes, size_t count, const TieredCode &code,
                                        const Tables &tables, uint8_t *stream, uint8_t *raw) {
  const Table256 tagged = LoadTable(tables.tagged);
  const Packer packer(code.width[2]);
  const __m512i escape = _mm512_set1_epi8(static_cast<char>((1 << code.width[2]) - 1));
  const __m512i base = _mm512_set1_epi8(static_cast<char>(128));
  const size_t step_bytes = 8 * static_cast<size_t>(code.width[2]);
  for (size_t i = 0; i < count; i += 64, stream += step_bytes) {
    const size_t rest = count - i;
    const __mmask64 lanes = Lanes(rest);
    const __m512i x = _mm512_maskz_loadu_epi8(lanes, bytes + i);
    const __m512i tag = Lookup(tagged, x);  // at least 128: every staged byte reaches tier 3
    const __m512i c = _mm512_maskz_min_epu8(lanes, _mm512_sub_epi8(tag, base), escape);  // lanes past: code 0
    const unsigned bytes_out = static_cast<unsigned>(rest >= 64 ? step_bytes : (rest * step_bytes / 8 + 7) / 8);
    _mm512_mask_storeu_epi8(stream, _bzhi_u64(~0ull, bytes_out), packer.Pack(c));
    const __mmask64 escaped = _mm512_mask_cmpge_epu8_mask(lanes, tag, _mm512_set1_epi8(static_cast<char>(192)));
    const unsigned m = static_cast<unsigned>(_mm_popcnt_u64(escaped));
    _mm512_mask_storeu_epi8(raw, _bzhi_u64(~0ull, m), _mm512_maskz_compress_epi8(escaped, x));
    raw += m;
  }
}

// A step of the loop below: 64 bytes (`lanes` of them) looked up once, tier 1's codes packed to `to`
// (`first_lanes` of the 8·w1 bytes), the lanes that reach tier 2 and tier 3 compressed to the front and
// stored whole at the ends of regions A and B, which move on by their count.
template <int kTiers>
struct Stepper {
  Table256 tagged;
  Packer first_packer;
  __m512i first_escape, second_escape;
  uint8_t *a, *b;
  uint64_t raw_count = 0;  // T = 3

  TW_TARGET_AVX512_VBMI Stepper(const TieredCode &code, const Tables &tables, uint8_t *stage_a, uint8_t *stage_b)
      : tagged(LoadTable(tables.tagged)), first_packer(code.width[0]), a(stage_a), b(stage_b) {
    first_escape = _mm512_set1_epi8(static_cast<char>((1 << code.width[0]) - 1));
    second_escape = _mm512_set1_epi8(static_cast<char>(kTiers >= 2 ? (1 << code.width[1]) - 1 : 0));
  }
  TW_TARGET_AVX512_VBMI __attribute__((always_inline)) inline void Step(const uint8_t *from, __mmask64 lanes,
                                                                        uint8_t *to, __mmask64 first_lanes) {
    const __m512i x = _mm512_maskz_loadu_epi8(lanes, from);
    const __m512i tag = _mm512_maskz_mov_epi8(lanes, Lookup(tagged, x));  // lanes past the plane: code 0, tier 1
    _mm512_mask_storeu_epi8(to, first_lanes, first_packer.Pack(_mm512_min_epu8(tag, first_escape)));
    const __mmask64 second = _mm512_cmpge_epu8_mask(tag, _mm512_set1_epi8(64));
    if (kTiers == 1) {
      _mm512_storeu_si512(a, _mm512_maskz_compress_epi8(second, x));
    } else {
      const __m512i c = _mm512_min_epu8(_mm512_sub_epi8(tag, _mm512_set1_epi8(64)), second_escape);
      _mm512_storeu_si512(a, _mm512_maskz_compress_epi8(second, c));
      const __mmask64 third = _mm512_cmpge_epu8_mask(tag, _mm512_set1_epi8(static_cast<char>(128)));
      _mm512_storeu_si512(b, _mm512_maskz_compress_epi8(third, x));
      b += _mm_popcnt_u64(third);
      if (kTiers == 3) {
        raw_count += static_cast<uint64_t>(
            _mm_popcnt_u64(_mm512_cmpge_epu8_mask(tag, _mm512_set1_epi8(static_cast<char>(192)))));
      }
    }
    a += _mm_popcnt_u64(second);
  }
};

// One pass over the plane, 64 bytes a step, and no counting pass: stream 1 (whose size, ceil(n·w1/8),
// and offset, after the header, are known beforehand) is packed in place; the rest is staged in `work`
// one byte a lane, with no bit packing in the loop: region A holds tier 2's codes (T = 1: the raw
// bytes), region B the bytes that reach tier 3 (T = 2: the raw bytes; T = 3: the plane's bytes, coded
// after the loop, and the raw bytes only counted). A step's bytes are looked up once; each region gets
// its lanes compressed to the front and stored whole, its end moving by their count. Once the counts
// are known, the header is written, the total checked against `capacity`, and the staged codes packed
// 64 at a time into byte-aligned streams. A region holds at most n bytes and a store reaches 64 bytes
// past its end: TieredWorkBytes. Returns the coded size or 0 (it does not fit).
template <int kTiers>
TW_TARGET_AVX512_VBMI size_t EncodeSteps(const uint8_t *in, size_t size, const TieredCode &code, const Tables &tables,
                                         uint8_t *out, size_t capacity, uint8_t *work) {
  const size_t header = TieredHeaderBytes(code);
  const uint64_t first_bytes = (size * static_cast<uint64_t>(code.width[0]) + 7) / 8;
  if (first_bytes > capacity || header > capacity - first_bytes) return 0;  // before any write
  uint8_t *const first = out + header;
  uint8_t *const stage_a = work, *const stage_b = work + size + 64;
  Stepper<kTiers> step(code, tables, stage_a, stage_b);
  const size_t step_bytes = 8 * static_cast<size_t>(code.width[0]);

  const size_t steps = size / 64;
  const __mmask64 first_step = _bzhi_u64(~0ull, static_cast<unsigned>(step_bytes));
  for (size_t s = 0; s < steps; ++s) step.Step(in + 64 * s, ~__mmask64{0}, first + s * step_bytes, first_step);
  if (size % 64 != 0) {
    const unsigned last = static_cast<unsigned>(first_bytes - steps * step_bytes);
    step.Step(in + 64 * steps, Lanes(size % 64), first + steps * step_bytes, _bzhi_u64(~0ull, last));
  }

  uint64_t count[kTieredMaxTiers + 1] = {size, static_cast<uint64_t>(step.a - stage_a),
                                         static_cast<uint64_t>(step.b - stage_b), step.raw_count};
  const Layout layout = MakeLayout(code, count);
  if (layout.total > capacity) return 0;
  WriteHeader(code, layout, out);
  uint8_t *at = first + first_bytes;
  if (kTiers == 1) {
    std::memcpy(at, stage_a, count[1]);
  } else {
    PackStaged(stage_a, count[1], code.width[1], at);
    at += layout.stream_bytes[1];
    if (kTiers == 2) {
      std::memcpy(at, stage_b, count[2]);
    } else {
      CodeLastTier(stage_b, count[2], code, tables, at, at + layout.stream_bytes[2]);
    }
  }
  return layout.total;
}

TW_TARGET_AVX512_VBMI size_t EncodeAvx512(const uint8_t *in, size_t size, const TieredCode &code, const Tables &tables,
                                          uint8_t *out, size_t capacity, uint8_t *work) {
  switch (code.tiers) {
    case 1: return EncodeSteps<1>(in, size, code, tables, out, capacity, work);
    case 2: return EncodeSteps<2>(in, size, code, tables, out, capacity, work);
    default: return EncodeSteps<3>(in, size, code, tables, out, capacity, work);
  }
}
#endif

}  // namespace

TieredCode ChooseTieredCode(const uint32_t count[256], double *bits_per_byte) {
  int order[256];
  for (int v = 0; v < 256; ++v) order[v] = v;
  std::sort(order, order + 256, [&](int a, int b) { return count[a] != count[b] ? count[a] > count[b] : a < b; });
  uint64_t after[257];  // after[r]: the count of the byte values of rank r and later
  after[256] = 0;
  for (int r = 255; r >= 0; --r) after[r] = after[r + 1] + count[order[r]];
  const auto reach = [&](int rank) { return after[std::min(rank, 256)]; };

  // Costs in bits, integers: the minimum and its ties are exact. Candidates in order of tiers, then
  // widths (lexicographically); only a strictly smaller cost replaces the best.
  TieredCode best;
  uint64_t best_cost = ~uint64_t{0}, best_header = 0;
  for (int tiers = 1; tiers <= kTieredMaxTiers; ++tiers) {
    int width[kTieredMaxTiers] = {1, 1, 1};
    for (;;) {
      uint64_t cost = 0, header = 1 + 4 * static_cast<uint64_t>(tiers);
      int rank = 0;
      for (int t = 0; t < tiers; ++t) {
        cost += reach(rank) * static_cast<uint64_t>(width[t]);
        rank += (1 << width[t]) - 1;
        header += uint64_t{1} << width[t];
      }
      cost += reach(rank) * 8 + header * 8;
      if (cost < best_cost) {
        best_cost = cost, best_header = header;
        best.tiers = tiers;
        for (int t = 0; t < kTieredMaxTiers; ++t) best.width[t] = t < tiers ? width[t] : 0;
      }
      int t = tiers - 1;  // the next widths, the last tier's counting fastest
      while (t >= 0 && width[t] == kTieredMaxWidth) width[t--] = 1;
      if (t < 0) break;
      ++width[t];
    }
  }
  int rank = 0;
  for (int t = 0; t < best.tiers; ++t) {
    for (int c = 0; c < (1 << best.width[t]) - 1; ++c) best.symbol[t][c] = static_cast<uint8_t>(order[rank++]);
  }
  if (bits_per_byte != nullptr) {
    *bits_per_byte =
        after[0] == 0 ? 0.0 : static_cast<double>(best_cost - 8 * best_header) / static_cast<double>(after[0]);
  }
  return best;
}

size_t TieredWorkBytes(size_t size) { return 2 * size + 2 * 64; }

size_t TieredEncode(const uint8_t *in, size_t size, const TieredCode &code, uint8_t *out, size_t capacity,
                    uint8_t *work, Isa isa) {
  if (size == 0 || !Valid(code)) return 0;
  // Counts are u32 in the format.
  if (size > UINT32_MAX) return 0;
  const Tables tables(code);
#if TW_KERNELS_X86
  if (ResolveIsa(isa) == Isa::kAvx512Vbmi) return EncodeAvx512(in, size, code, tables, out, capacity, work);
#else
  (void)isa;
#endif
  (void)work;
  uint64_t count[kTieredMaxTiers + 1];
  CountPortable(in, size, tables, code.tiers, count);
  const Layout layout = MakeLayout(code, count);
  if (layout.total > capacity) return 0;
  uint8_t *stream[kTieredMaxTiers] = {};
  uint8_t *at = WriteHeader(code, layout, out);
  for (int t = 0; t < code.tiers; ++t) stream[t] = at, at += layout.stream_bytes[t];
  EncodePortable(in, size, code, tables, layout, stream, at);
  return layout.total;
}

}  // namespace checkpoint
}  // namespace tw
