// The decoder of tiered.h. The header, the sizes and the padding are checked once, before any byte is
// decoded; a loop then only has to keep each tier's reads within the codes its count promises, and at
// the end check that every count was used up. The AVX-512 loop decodes 64 bytes per step: the 64
// tier-1 codes of a step are byte-aligned (8·w1 bytes each step), a later tier's codes start anywhere
// and are unpacked from the byte holding their first bit. Every read and write of a partial vector is a
// masked (fault-suppressing) load or store of exactly the bytes it needs.
#include <algorithm>
#include <cstring>
#include <string>

#include "checkpoint/codec/tiered.h"

namespace tw {
namespace checkpoint {
namespace {

Status Loss(const std::string &why) { return Status(TW_DATA_LOSS, "tiered plane: " + why); }

// The coded plane's parts, checked against each other and against in_size and out_size.
struct Plane {
  int tiers = 0;
  int width[kTieredMaxTiers] = {};
  const uint8_t *symbol[kTieredMaxTiers] = {};
  uint64_t count[kTieredMaxTiers + 1] = {};  // codes of streams 1..T (count[0] = n), then raw bytes
  const uint8_t *stream[kTieredMaxTiers] = {};
  uint64_t stream_bytes[kTieredMaxTiers] = {};
  const uint8_t *raw = nullptr;
};

std::string TierName(int t, int tiers) {
  return t == tiers ? "raw_count" : "tier " + std::to_string(t + 1) + "'s count";
}

Status Parse(const uint8_t *in, size_t in_size, size_t out_size, Plane *plane) {
  if (out_size == 0) return Loss("no plane of 0 bytes is coded");
  if (in_size < 1) return Loss("truncated header");
  const int tiers = in[0];
  if (tiers < 1 || tiers > kTieredMaxTiers) return Loss("T = " + std::to_string(tiers) + " is not 1 to 3");
  plane->tiers = tiers;
  size_t at = 1;
  bool seen[256] = {};
  for (int t = 0; t < tiers; ++t) {
    if (at >= in_size) return Loss("truncated header");
    const int width = in[at++];
    if (width < 1 || width > kTieredMaxWidth) {
      return Loss("tier " + std::to_string(t + 1) + " width " + std::to_string(width) + " is not 1 to 6");
    }
    const size_t symbols = (size_t{1} << width) - 1;
    if (in_size - at < symbols) return Loss("truncated header");
    for (size_t c = 0; c < symbols; ++c) {
      if (seen[in[at + c]]) return Loss("symbol " + std::to_string(in[at + c]) + " repeated");
      seen[in[at + c]] = true;
    }
    plane->width[t] = width;
    plane->symbol[t] = in + at;
    at += symbols;
  }
  if (in_size - at < 4 * static_cast<size_t>(tiers)) return Loss("truncated header");
  plane->count[0] = out_size;
  for (int t = 1; t <= tiers; ++t, at += 4) {
    plane->count[t] =
        uint64_t{in[at]} | uint64_t{in[at + 1]} << 8 | uint64_t{in[at + 2]} << 16 | uint64_t{in[at + 3]} << 24;
  }
  // Each byte of the plane takes at least a bit: a plane larger than that cannot be in in_size (and the
  // sums below cannot overflow).
  if (out_size / 8 > in_size) return Loss("sizes do not add up (the plane is larger than 8 × its coded size)");
  uint64_t total = at;
  for (int t = 0; t < tiers; ++t) {
    plane->stream_bytes[t] = (plane->count[t] * static_cast<uint64_t>(plane->width[t]) + 7) / 8;
    total += plane->stream_bytes[t];
  }
  total += plane->count[tiers];
  if (total != in_size) {
    return Loss("sizes do not add up (" + std::to_string(total) + " bytes listed, " + std::to_string(in_size) +
                " stored)");
  }
  for (int t = 0; t < tiers; ++t) {
    if (plane->count[t + 1] > plane->count[t]) {
      return Loss(TierName(t + 1, tiers) + " exceeds tier " + std::to_string(t + 1) + "'s codes");
    }
    plane->stream[t] = in + at;
    at += plane->stream_bytes[t];
    const uint64_t used = plane->count[t] * static_cast<uint64_t>(plane->width[t]) % 8;
    if (used != 0 && (plane->stream[t][plane->stream_bytes[t] - 1] >> used) != 0) {
      return Loss("stream " + std::to_string(t + 1) + " has non-zero padding bits");
    }
  }
  plane->raw = in + at;
  return Status();
}

Status TooManyEscapes(int t, int tiers) {
  return Loss("tier " + std::to_string(t + 1) + " has more escapes than " + TierName(t + 1, tiers));
}

// After a loop: every count used up. left[t]: codes of tier t (raw bytes for t = tiers) not decoded.
Status CheckUsedUp(const uint64_t *left, const Plane &plane) {
  for (int t = 1; t <= plane.tiers; ++t) {
    if (left[t] != 0) {
      return Loss("tier " + std::to_string(t) + " has " + std::to_string(plane.count[t] - left[t]) + " escapes, " +
                  TierName(t, plane.tiers) + " is " + std::to_string(plane.count[t]));
    }
  }
  return Status();
}

// ---- The portable loop: blocks of the plane decoded tier by tier, as the vector loop does, so that no
// branch depends on whether a byte escapes (a byte at a time, the tier loop's exit was mispredicted at
// about every other byte): tier 1 writes every byte and lists the escapes, each later tier reads the
// listed bytes' codes, writes them and keeps those that escape again. A tier's codes are read only once
// its count is known to have them, so every read lies within the stream.
struct BitReader {
  const uint8_t *stream;
  uint64_t bytes, position = 0;  // bits
  unsigned width, mask;

  BitReader(const uint8_t *begin, uint64_t size, int w)
      : stream(begin), bytes(size), width(static_cast<unsigned>(w)), mask((1u << w) - 1) {}
  unsigned Next() {
    const uint64_t byte = position >> 3;
    const unsigned skip = position & 7;
    position += width;
    if (byte + 8 <= bytes) {  // 8 bytes at once while the stream has them
      uint64_t word;
      std::memcpy(&word, stream + byte, 8);  // little-endian host
      return static_cast<unsigned>(word >> skip) & mask;
    }
    unsigned value = stream[byte] >> skip;
    if (skip + width > 8) value |= static_cast<unsigned>(stream[byte + 1]) << (8 - skip);
    return value & mask;
  }
};

Status DecodePortable(const Plane &plane, uint8_t *out, size_t out_size) {
  constexpr size_t kBlock = 4096;
  uint16_t listed[kBlock];  // the block's bytes that reach the tier at hand
  uint8_t symbol[kTieredMaxTiers][64] = {};
  BitReader readers[kTieredMaxTiers] = {BitReader(plane.stream[0], plane.stream_bytes[0], plane.width[0]),
                                        BitReader(plane.stream[1], plane.stream_bytes[1], plane.width[1]),
                                        BitReader(plane.stream[2], plane.stream_bytes[2], plane.width[2])};
  for (int t = 0; t < plane.tiers; ++t) std::memcpy(symbol[t], plane.symbol[t], (size_t{1} << plane.width[t]) - 1);
  uint64_t left[kTieredMaxTiers + 1] = {};
  for (int t = 1; t <= plane.tiers; ++t) left[t] = plane.count[t];
  const uint8_t *raw = plane.raw;
  for (size_t begin = 0; begin < out_size; begin += kBlock) {
    const size_t n = std::min(kBlock, out_size - begin);
    uint8_t *block = out + begin;
    size_t reach = 0;
    {
      BitReader r = readers[0];
      const unsigned escape = r.mask;
      for (size_t i = 0; i < n; ++i) {
        const unsigned c = r.Next();
        block[i] = symbol[0][c];
        listed[reach] = static_cast<uint16_t>(i);
        reach += c == escape;
      }
      readers[0] = r;
    }
    for (int t = 1; t < plane.tiers; ++t) {
      if (reach > left[t]) return TooManyEscapes(t - 1, plane.tiers);
      left[t] -= reach;
      BitReader r = readers[t];
      const unsigned escape = r.mask;
      size_t again = 0;
      for (size_t j = 0; j < reach; ++j) {
        const unsigned c = r.Next();
        block[listed[j]] = symbol[t][c];
        listed[again] = listed[j];
        again += c == escape;
      }
      readers[t] = r;
      reach = again;
    }
    if (reach > left[plane.tiers]) return TooManyEscapes(plane.tiers - 1, plane.tiers);
    left[plane.tiers] -= reach;
    for (size_t j = 0; j < reach; ++j) block[listed[j]] = *raw++;
  }
  return CheckUsedUp(left, plane);
}

#if TW_KERNELS_X86
// ---- The AVX-512 loop.

// One tier's unpacking: 64 codes of `width` bits from bit `skip` (0–7) of a 64-byte window. The
// permutation brings bytes L·w … L·w+7 of the window into qword L (its 8 codes start at bit skip + 8·L·w
// of the window), the multishift takes each code's 8 bits from bit skip + j·w of its qword (at most
// 7 + 7·6 + 6 < 64), the mask drops the next code's bits.
struct Tier {
  __m512i permute;
  __m512i shift[8];  // by skip
  __m512i mask, escape;
  const uint8_t *stream;
  uint64_t bytes = 0;     // of the stream
  uint64_t position = 0;  // bits
  uint64_t width = 0;

  TW_TARGET_AVX512_VBMI void Init(int w, const uint8_t *stream_begin, uint64_t stream_bytes) {
    alignas(64) uint8_t index[64];
    for (int i = 0; i < 64; ++i) index[i] = static_cast<uint8_t>(i / 8 * w + i % 8);
    permute = _mm512_load_si512(index);
    for (int skip = 0; skip < 8; ++skip) {
      for (int i = 0; i < 64; ++i) index[i] = static_cast<uint8_t>(skip + i % 8 * w);
      shift[skip] = _mm512_load_si512(index);
    }
    mask = _mm512_set1_epi8(static_cast<char>((1 << w) - 1));
    escape = mask;
    stream = stream_begin;
    bytes = stream_bytes;
    width = static_cast<uint64_t>(w);
  }
  TW_TARGET_AVX512_VBMI __m512i Unpack(__m512i window, unsigned skip) const {
    return _mm512_and_si512(_mm512_multishift_epi64_epi8(shift[skip], _mm512_permutexvar_epi8(permute, window)), mask);
  }
  // The next m (0–64) codes; the caller has checked the tier's count has them, so the bytes are in the
  // stream: 64 bytes at once while the stream has them (no mask to build), else exactly those bytes.
  TW_TARGET_AVX512_VBMI __m512i Next(unsigned m) {
    const uint64_t byte = position >> 3, skip = position & 7, end = skip + m * width;
    const __m512i window =
        byte + 64 <= bytes
            ? _mm512_loadu_si512(stream + byte)
            : _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, static_cast<unsigned>((end + 7) >> 3)), stream + byte);
    position += m * width;
    return Unpack(window, static_cast<unsigned>(skip));
  }
  // A comparison (port 5) measured faster than adding 128 - (2^w - 1) and reading bit 7 (port 0): fewer µops.
  TW_TARGET_AVX512_VBMI __mmask64 Escapes(__m512i codes) const { return _mm512_cmpeq_epi8_mask(codes, escape); }
};

// The symbols of every tier in one table, tier 1's first: a byte that escapes tiers 1 … t-1 and has code
// c in tier t has index (2^w1 - 1) + … + (2^w(t-1) - 1) + c, the sum of its codes (an escape is 2^w - 1),
// so one lookup per step serves every tier. kParts: 64-byte parts of the table the symbols fill.
template <int kParts>
TW_TARGET_AVX512_VBMI inline __m512i Symbols(const __m512i *table, __m512i index) {
  if (kParts == 1) return _mm512_permutexvar_epi8(index, table[0]);
  const __m512i low = _mm512_permutex2var_epi8(table[0], index, table[1]);
  if (kParts == 2) return low;
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, _mm512_permutexvar_epi8(index, table[2]));
}

// Steps decoded together, tier by tier: a step's tiers depend on each other (the codes of tier t+1
// start where the escapes of tier t leave them) and take ~100 cycles from the first load to the store,
// but the steps of a group are independent within a tier, so their latencies overlap. Tier by tier, a
// group's escapes are also checked against the next tier's count once: the counts only grow.
constexpr int kGroupSteps = 8;

template <int kTiers, int kParts>
TW_TARGET_AVX512_VBMI Status DecodeSteps(const Plane &plane, uint8_t *out, size_t out_size) {
  Tier tier[kTiers];
  alignas(64) uint8_t all[192] = {};
  int symbols = 0;
  for (int t = 0; t < kTiers; ++t) {
    tier[t].Init(plane.width[t], plane.stream[t], plane.stream_bytes[t]);
    const int n = (1 << plane.width[t]) - 1;
    for (int c = 0; c < n; ++c) all[symbols + c] = plane.symbol[t][c];
    symbols += n;
  }
  __m512i table[3];
  for (int k = 0; k < 3; ++k) table[k] = _mm512_load_si512(all + 64 * k);
  uint64_t left[kTiers + 1];
  for (int t = 1; t <= kTiers; ++t) left[t] = plane.count[t];
  const uint8_t *raw = plane.raw;
  const uint8_t *first = plane.stream[0];
  const uint64_t step_bytes = 8 * tier[0].width, first_bytes = plane.stream_bytes[0];
  const __mmask64 step_mask = _bzhi_u64(~0ull, static_cast<unsigned>(step_bytes));
  size_t at = 0, offset = 0;
  // Whole groups of whole steps: each step's 64 tier-1 codes are 8·w1 bytes of stream 1.
  for (; out_size - at >= 64 * kGroupSteps; at += 64 * kGroupSteps, offset += kGroupSteps * step_bytes) {
    __m512i index[kGroupSteps];
    __mmask64 escaped[kGroupSteps];
    uint64_t m[kGroupSteps];
#pragma GCC unroll 8
    for (int j = 0; j < kGroupSteps; ++j) {
      index[j] = tier[0].Unpack(_mm512_maskz_loadu_epi8(step_mask, first + offset + j * step_bytes), 0);
      escaped[j] = tier[0].Escapes(index[j]);
    }
#pragma GCC unroll 3
    for (int t = 1; t <= kTiers; ++t) {
      uint64_t total = 0;
#pragma GCC unroll 8
      for (int j = 0; j < kGroupSteps; ++j) total += m[j] = static_cast<uint64_t>(_mm_popcnt_u64(escaped[j]));
      if (total > left[t]) return TooManyEscapes(t - 1, kTiers);
      left[t] -= total;
      if (t == kTiers) break;
#pragma GCC unroll 8
      for (int j = 0; j < kGroupSteps; ++j) {
        const __m512i c = _mm512_maskz_expand_epi8(escaped[j], tier[t].Next(static_cast<unsigned>(m[j])));
        index[j] = _mm512_add_epi8(index[j], c);
        escaped[j] = tier[t].Escapes(c);
      }
    }
#pragma GCC unroll 8
    for (int j = 0; j < kGroupSteps; ++j) {
      // Escapes of the last tier: raw bytes, loaded (only those) into their lanes.
      _mm512_storeu_si512(out + at + 64 * j,
                          _mm512_mask_expandloadu_epi8(Symbols<kParts>(table, index[j]), escaped[j], raw));
      raw += m[j];
    }
  }
  // The rest a step at a time; the last step may be partial.
  for (; at < out_size; at += 64, offset += step_bytes) {
    const __mmask64 lanes =
        out_size - at >= 64 ? ~__mmask64{0} : _bzhi_u64(~0ull, static_cast<unsigned>(out_size - at));
    const uint64_t bytes = first_bytes - offset < step_bytes ? first_bytes - offset : step_bytes;
    const __m512i c1 =
        tier[0].Unpack(_mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, static_cast<unsigned>(bytes)), first + offset), 0);
    // Lanes past the plane hold the padding bits and zeros: never escapes.
    __mmask64 escaped = _mm512_mask_cmpeq_epi8_mask(lanes, c1, tier[0].escape);
    __m512i index = c1;
#pragma GCC unroll 3
    for (int t = 1; t < kTiers; ++t) {
      const unsigned m = static_cast<unsigned>(_mm_popcnt_u64(escaped));
      if (m > left[t]) return TooManyEscapes(t - 1, kTiers);
      left[t] -= m;
      const __m512i c = _mm512_maskz_expand_epi8(escaped, tier[t].Next(m));
      index = _mm512_add_epi8(index, c);
      escaped = _mm512_mask_cmpeq_epi8_mask(escaped, c, tier[t].escape);
    }
    const unsigned m = static_cast<unsigned>(_mm_popcnt_u64(escaped));
    if (m > left[kTiers]) return TooManyEscapes(kTiers - 1, kTiers);
    left[kTiers] -= m;
    _mm512_mask_storeu_epi8(out + at, lanes, _mm512_mask_expandloadu_epi8(Symbols<kParts>(table, index), escaped, raw));
    raw += m;
  }
  left[0] = 0;
  return CheckUsedUp(left, plane);
}

template <int kTiers>
TW_TARGET_AVX512_VBMI Status DecodeAvx512(const Plane &plane, uint8_t *out, size_t out_size) {
  int symbols = 0;
  for (int t = 0; t < kTiers; ++t) symbols += (1 << plane.width[t]) - 1;
  if (symbols <= 64) return DecodeSteps<kTiers, 1>(plane, out, out_size);
  if (symbols <= 128) return DecodeSteps<kTiers, 2>(plane, out, out_size);
  return DecodeSteps<kTiers, 3>(plane, out, out_size);
}
#endif

}  // namespace

Status TieredDecode(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size, Isa isa) {
  Plane plane;
  TW_RETURN_IF_ERROR(Parse(in, in_size, out_size, &plane));
#if TW_KERNELS_X86
  if (ResolveIsa(isa) == Isa::kAvx512Vbmi) {
    switch (plane.tiers) {
      case 1: return DecodeAvx512<1>(plane, out, out_size);
      case 2: return DecodeAvx512<2>(plane, out, out_size);
      default: return DecodeAvx512<3>(plane, out, out_size);
    }
  }
#else
  (void)isa;
#endif
  return DecodePortable(plane, out, out_size);
}

}  // namespace checkpoint
}  // namespace tw
