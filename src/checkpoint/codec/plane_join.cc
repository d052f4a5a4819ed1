#include "checkpoint/codec/plane_join.h"

#include <cstdint>

namespace tw {
namespace checkpoint {
namespace {

#if TW_KERNELS_X86

// Each kernel joins `count` elements, a multiple of its block; with kStream, `out` is 64-byte aligned.
using Kernel = void (*)(const uint8_t *const *planes, size_t count, uint8_t *out);

template <bool kStream>
TW_TARGET_AVX2 inline void Store256(uint8_t *to, __m256i v) {
  if (kStream) {
    _mm256_stream_si256(reinterpret_cast<__m256i *>(to), v);
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(to), v);
  }
}

template <bool kStream>
TW_TARGET_AVX512 inline void Store512(uint8_t *to, __m512i v) {
  if (kStream) {
    _mm512_stream_si512(reinterpret_cast<__m512i *>(to), v);
  } else {
    _mm512_storeu_si512(to, v);
  }
}

// The unpack instructions interleave within each 128-bit lane; the permutes put the lanes in order.
template <bool kStream>
TW_TARGET_AVX2 void Join2Avx2(const uint8_t *const *planes, size_t count, uint8_t *out) {
  for (size_t i = 0; i < count; i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(planes[0] + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(planes[1] + i));
    const __m256i lo = _mm256_unpacklo_epi8(a, b), hi = _mm256_unpackhi_epi8(a, b);
    Store256<kStream>(out + 2 * i, _mm256_permute2x128_si256(lo, hi, 0x20));
    Store256<kStream>(out + 2 * i + 32, _mm256_permute2x128_si256(lo, hi, 0x31));
  }
}

template <bool kStream>
TW_TARGET_AVX2 void Join4Avx2(const uint8_t *const *planes, size_t count, uint8_t *out) {
  for (size_t i = 0; i < count; i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(planes[0] + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(planes[1] + i));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(planes[2] + i));
    const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(planes[3] + i));
    const __m256i ab_lo = _mm256_unpacklo_epi8(a, b), ab_hi = _mm256_unpackhi_epi8(a, b);
    const __m256i cd_lo = _mm256_unpacklo_epi8(c, d), cd_hi = _mm256_unpackhi_epi8(c, d);
    // Lane j of v_k holds elements 16j + 4k … 16j + 4k + 3.
    const __m256i v0 = _mm256_unpacklo_epi16(ab_lo, cd_lo), v1 = _mm256_unpackhi_epi16(ab_lo, cd_lo);
    const __m256i v2 = _mm256_unpacklo_epi16(ab_hi, cd_hi), v3 = _mm256_unpackhi_epi16(ab_hi, cd_hi);
    Store256<kStream>(out + 4 * i, _mm256_permute2x128_si256(v0, v1, 0x20));
    Store256<kStream>(out + 4 * i + 32, _mm256_permute2x128_si256(v2, v3, 0x20));
    Store256<kStream>(out + 4 * i + 64, _mm256_permute2x128_si256(v0, v1, 0x31));
    Store256<kStream>(out + 4 * i + 96, _mm256_permute2x128_si256(v2, v3, 0x31));
  }
}

// Qword indices for _mm512_permutex2var_epi64(x, index, y) (0–7: x's, 8–15: y's): 128-bit lanes 0 and 1
// of x and y interleaved (x0 y0 x1 y1), lanes 2 and 3 the same, and the low or high halves of x and y.
TW_TARGET_AVX512 inline __m512i LanesLow() { return _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0); }
TW_TARGET_AVX512 inline __m512i LanesHigh() { return _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4); }
TW_TARGET_AVX512 inline __m512i HalvesLow() { return _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0); }
TW_TARGET_AVX512 inline __m512i HalvesHigh() { return _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4); }

template <bool kStream>
TW_TARGET_AVX512 void Join2Avx512(const uint8_t *const *planes, size_t count, uint8_t *out) {
  const __m512i first = LanesLow(), second = LanesHigh();
  for (size_t i = 0; i < count; i += 64) {
    const __m512i a = _mm512_loadu_si512(planes[0] + i), b = _mm512_loadu_si512(planes[1] + i);
    const __m512i lo = _mm512_unpacklo_epi8(a, b), hi = _mm512_unpackhi_epi8(a, b);
    Store512<kStream>(out + 2 * i, _mm512_permutex2var_epi64(lo, first, hi));
    Store512<kStream>(out + 2 * i + 64, _mm512_permutex2var_epi64(lo, second, hi));
  }
}

template <bool kStream>
TW_TARGET_AVX512 void Join4Avx512(const uint8_t *const *planes, size_t count, uint8_t *out) {
  const __m512i lanes_low = LanesLow(), lanes_high = LanesHigh(), halves_low = HalvesLow(), halves_high = HalvesHigh();
  for (size_t i = 0; i < count; i += 64) {
    const __m512i a = _mm512_loadu_si512(planes[0] + i), b = _mm512_loadu_si512(planes[1] + i);
    const __m512i c = _mm512_loadu_si512(planes[2] + i), d = _mm512_loadu_si512(planes[3] + i);
    const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
    const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
    // Lane j of v_k holds elements 16j + 4k … 16j + 4k + 3: output vector j is lane j of v0 … v3 (a
    // 4×4 transpose of 128-bit lanes, in two rounds of permutes).
    const __m512i v0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), v1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
    const __m512i v2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), v3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
    const __m512i v01_low = _mm512_permutex2var_epi64(v0, lanes_low, v1);    // v0.0 v1.0 v0.1 v1.1
    const __m512i v23_low = _mm512_permutex2var_epi64(v2, lanes_low, v3);    // v2.0 v3.0 v2.1 v3.1
    const __m512i v01_high = _mm512_permutex2var_epi64(v0, lanes_high, v1);  // v0.2 v1.2 v0.3 v1.3
    const __m512i v23_high = _mm512_permutex2var_epi64(v2, lanes_high, v3);
    Store512<kStream>(out + 4 * i, _mm512_permutex2var_epi64(v01_low, halves_low, v23_low));
    Store512<kStream>(out + 4 * i + 64, _mm512_permutex2var_epi64(v01_low, halves_high, v23_low));
    Store512<kStream>(out + 4 * i + 128, _mm512_permutex2var_epi64(v01_high, halves_low, v23_high));
    Store512<kStream>(out + 4 * i + 192, _mm512_permutex2var_epi64(v01_high, halves_high, v23_high));
  }
}

// 8-byte elements: 64 of them are 8 vectors either way. Byte k of each of 8 elements (one vector of
// elements) gathered into qword k is a byte transpose within the vector (one vpermb), and the qwords
// of 8 such vectors transposed (8×8) are the 8 planes. Both steps are their own inverse, so the split
// and the join are the same two steps in opposite orders.
TW_TARGET_AVX512_VBMI inline __m512i TransposeBytes8x8(__m512i v) {
  alignas(64) static const uint8_t kIndex[64] = {0, 8,  16, 24, 32, 40, 48, 56, 1, 9,  17, 25, 33, 41, 49, 57,
                                                 2, 10, 18, 26, 34, 42, 50, 58, 3, 11, 19, 27, 35, 43, 51, 59,
                                                 4, 12, 20, 28, 36, 44, 52, 60, 5, 13, 21, 29, 37, 45, 53, 61,
                                                 6, 14, 22, 30, 38, 46, 54, 62, 7, 15, 23, 31, 39, 47, 55, 63};
  return _mm512_permutex2var_epi8(v, _mm512_load_si512(kIndex), v);  // vpermi2b: vpermb's headers warn
}

// v[i] qword k becomes v[k] qword i: qwords of pairs of vectors interleaved, then pairs of their
// 128-bit lanes, twice (permutes of two vectors by qword index, as the 4-byte join's).
TW_TARGET_AVX512 inline void TransposeQwords8x8(__m512i *v) {
  const __m512i low = _mm512_set_epi64(14, 6, 12, 4, 10, 2, 8, 0), high = _mm512_set_epi64(15, 7, 13, 5, 11, 3, 9, 1);
  const __m512i even_lanes = _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0);
  const __m512i odd_lanes = _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2);
  __m512i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm512_permutex2var_epi64(v[i], low, v[i + 1]);
    t[i + 1] = _mm512_permutex2var_epi64(v[i], high, v[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm512_permutex2var_epi64(t[i], even_lanes, t[i + 2]);
    u[i + 1] = _mm512_permutex2var_epi64(t[i], odd_lanes, t[i + 2]);
    u[i + 2] = _mm512_permutex2var_epi64(t[i + 1], even_lanes, t[i + 3]);
    u[i + 3] = _mm512_permutex2var_epi64(t[i + 1], odd_lanes, t[i + 3]);
  }
  for (int k = 0; k < 4; ++k) {  // u[k] and u[k + 4] hold qwords k' and k' + 4, k' = 0, 2, 1, 3
    const int first = (k & 1) << 1 | k >> 1;
    v[first] = _mm512_permutex2var_epi64(u[k], even_lanes, u[k + 4]);
    v[first + 4] = _mm512_permutex2var_epi64(u[k], odd_lanes, u[k + 4]);
  }
}

template <bool kStream>
TW_TARGET_AVX512_VBMI void Join8Avx512(const uint8_t *const *planes, size_t count, uint8_t *out) {
  for (size_t i = 0; i < count; i += 64) {
    __m512i v[8];
    for (int k = 0; k < 8; ++k) v[k] = _mm512_loadu_si512(planes[k] + i);
    TransposeQwords8x8(v);
    for (int j = 0; j < 8; ++j) Store512<kStream>(out + 8 * i + 64 * j, TransposeBytes8x8(v[j]));
  }
}

TW_TARGET_AVX512_VBMI void Split8Avx512(const uint8_t *elements, size_t count, uint8_t *const *planes) {
  for (size_t i = 0; i < count; i += 64) {
    __m512i v[8];
    for (int j = 0; j < 8; ++j) v[j] = TransposeBytes8x8(_mm512_loadu_si512(elements + 8 * i + 64 * j));
    TransposeQwords8x8(v);
    for (int k = 0; k < 8; ++k) _mm512_storeu_si512(planes[k] + i, v[k]);
  }
}

struct Kernels {
  size_t block;       // elements per step
  Kernel join[3][2];  // [element size 2, 4, 8][cached, streamed]; no 8-byte kernel: null
};

const Kernels kAvx2 = {32,
                       {{Join2Avx2<false>, Join2Avx2<true>}, {Join4Avx2<false>, Join4Avx2<true>}, {nullptr, nullptr}}};
const Kernels kAvx512 = {
    64, {{Join2Avx512<false>, Join2Avx512<true>}, {Join4Avx512<false>, Join4Avx512<true>}, {nullptr, nullptr}}};
const Kernels kAvx512Vbmi = {64,
                             {{Join2Avx512<false>, Join2Avx512<true>},
                              {Join4Avx512<false>, Join4Avx512<true>},
                              {Join8Avx512<false>, Join8Avx512<true>}}};

const Kernels *Get(Isa isa) {
  switch (ResolveIsa(isa)) {
    case Isa::kAvx512Vbmi: return &kAvx512Vbmi;
    case Isa::kAvx512: return &kAvx512;
    case Isa::kAvx2: return &kAvx2;
    default: return nullptr;
  }
}

// Elements [begin, end) one at a time: the few before a streamed destination's first aligned line and
// after the last whole step.
void JoinEach(const uint8_t *const *planes, size_t begin, size_t end, size_t element_size, uint8_t *elements) {
  for (size_t i = begin; i < end; ++i) {
    for (size_t k = 0; k < element_size; ++k) elements[i * element_size + k] = planes[k][i];
  }
}

#endif  // TW_KERNELS_X86

}  // namespace

bool JoinPlanesVector(const uint8_t *const *planes, size_t count, size_t element_size, uint8_t *elements,
                      JoinStores stores, Isa isa) {
#if TW_KERNELS_X86
  const Kernels *kernels = Get(isa);
  const int size_index = element_size == 2 ? 0 : element_size == 4 ? 1 : element_size == 8 ? 2 : -1;
  if (kernels == nullptr || size_index < 0 || kernels->join[size_index][0] == nullptr) return false;
  // Non-temporal stores need aligned lines: join the elements before the first one that starts a line
  // one at a time, or store normally when no element does (an odd address for 2-byte elements).
  size_t head = 0;
  bool stream = stores == JoinStores::kStreamed;
  if (stream) {
    const size_t gap = (64 - reinterpret_cast<uintptr_t>(elements) % 64) % 64;
    head = gap / element_size;
    stream = gap % element_size == 0 && head < count;
    if (!stream) head = 0;
  }
  const size_t body = (count - head) / kernels->block * kernels->block;
  JoinEach(planes, 0, head, element_size, elements);
  const uint8_t *from[8];
  for (size_t k = 0; k < element_size; ++k) from[k] = planes[k] + head;
  kernels->join[size_index][stream](from, body, elements + head * element_size);
  // Streamed stores are weakly ordered: fence them before whatever tells another thread they are done.
  if (stream) _mm_sfence();
  JoinEach(planes, head + body, count, element_size, elements);
  return true;
#else
  (void)planes, (void)count, (void)element_size, (void)elements, (void)stores, (void)isa;
  return false;
#endif
}

bool SplitPlanesVector(const uint8_t *elements, size_t count, size_t element_size, uint8_t *const *planes, Isa isa) {
#if TW_KERNELS_X86
  const Kernels *kernels = Get(isa);
  if (kernels != &kAvx512Vbmi || element_size != 8) return false;
  const size_t body = count / 64 * 64;
  Split8Avx512(elements, body, planes);
  for (size_t i = body; i < count; ++i) {
    for (size_t k = 0; k < 8; ++k) planes[k][i] = elements[i * 8 + k];
  }
  return true;
#else
  (void)elements, (void)count, (void)element_size, (void)planes, (void)isa;
  return false;
#endif
}

}  // namespace checkpoint
}  // namespace tw
