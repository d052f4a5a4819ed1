#include "checkpoint/plane_join.h"

#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TW_JOIN_DISPATCH 1
#include <immintrin.h>
#endif

namespace tw {
namespace checkpoint {
namespace {

#if TW_JOIN_DISPATCH

#define TW_AVX2 __attribute__((__target__("avx2")))
#define TW_AVX512 __attribute__((__target__("avx512f,avx512bw")))

// Each kernel joins `count` elements, a multiple of its block; with kStream, `out` is 64-byte aligned.
using Kernel = void (*)(const uint8_t *const *planes, size_t count, uint8_t *out);

template <bool kStream>
TW_AVX2 inline void Store256(uint8_t *to, __m256i v) {
  if (kStream) {
    _mm256_stream_si256(reinterpret_cast<__m256i *>(to), v);
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(to), v);
  }
}

template <bool kStream>
TW_AVX512 inline void Store512(uint8_t *to, __m512i v) {
  if (kStream) {
    _mm512_stream_si512(reinterpret_cast<__m512i *>(to), v);
  } else {
    _mm512_storeu_si512(to, v);
  }
}

// The unpack instructions interleave within each 128-bit lane; the permutes put the lanes in order.
template <bool kStream>
TW_AVX2 void Join2Avx2(const uint8_t *const *planes, size_t count, uint8_t *out) {
  for (size_t i = 0; i < count; i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(planes[0] + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(planes[1] + i));
    const __m256i lo = _mm256_unpacklo_epi8(a, b), hi = _mm256_unpackhi_epi8(a, b);
    Store256<kStream>(out + 2 * i, _mm256_permute2x128_si256(lo, hi, 0x20));
    Store256<kStream>(out + 2 * i + 32, _mm256_permute2x128_si256(lo, hi, 0x31));
  }
}

template <bool kStream>
TW_AVX2 void Join4Avx2(const uint8_t *const *planes, size_t count, uint8_t *out) {
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
TW_AVX512 inline __m512i LanesLow() { return _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0); }
TW_AVX512 inline __m512i LanesHigh() { return _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4); }
TW_AVX512 inline __m512i HalvesLow() { return _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0); }
TW_AVX512 inline __m512i HalvesHigh() { return _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4); }

template <bool kStream>
TW_AVX512 void Join2Avx512(const uint8_t *const *planes, size_t count, uint8_t *out) {
  const __m512i first = LanesLow(), second = LanesHigh();
  for (size_t i = 0; i < count; i += 64) {
    const __m512i a = _mm512_loadu_si512(planes[0] + i), b = _mm512_loadu_si512(planes[1] + i);
    const __m512i lo = _mm512_unpacklo_epi8(a, b), hi = _mm512_unpackhi_epi8(a, b);
    Store512<kStream>(out + 2 * i, _mm512_permutex2var_epi64(lo, first, hi));
    Store512<kStream>(out + 2 * i + 64, _mm512_permutex2var_epi64(lo, second, hi));
  }
}

template <bool kStream>
TW_AVX512 void Join4Avx512(const uint8_t *const *planes, size_t count, uint8_t *out) {
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

struct Kernels {
  size_t block;       // elements per step
  Kernel join[2][2];  // [element size 2, 4][cached, streamed]
  const char *name;
};

const Kernels kAvx2 = {32, {{Join2Avx2<false>, Join2Avx2<true>}, {Join4Avx2<false>, Join4Avx2<true>}}, "avx2"};
const Kernels kAvx512 = {
    64, {{Join2Avx512<false>, Join2Avx512<true>}, {Join4Avx512<false>, Join4Avx512<true>}}, "avx512"};

bool Runs(JoinLoop loop) {
  __builtin_cpu_init();
  switch (loop) {
    case JoinLoop::kAvx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    case JoinLoop::kAvx2: return __builtin_cpu_supports("avx2");
    default: return true;
  }
}

const Kernels *Get(JoinLoop loop) {
  static const JoinLoop best = Runs(JoinLoop::kAvx512) ? JoinLoop::kAvx512
                               : Runs(JoinLoop::kAvx2) ? JoinLoop::kAvx2
                                                       : JoinLoop::kPortable;
  switch (loop == JoinLoop::kBest ? best : loop) {
    case JoinLoop::kAvx512: return &kAvx512;
    case JoinLoop::kAvx2: return &kAvx2;
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

#else
bool Runs(JoinLoop) { return true; }
#endif  // TW_JOIN_DISPATCH

}  // namespace

bool JoinLoopRuns(JoinLoop loop) { return Runs(loop); }

const char *JoinLoopName(JoinLoop loop) {
#if TW_JOIN_DISPATCH
  const Kernels *kernels = Get(loop);
  return kernels != nullptr ? kernels->name : "portable";
#else
  (void)loop;
  return "portable";
#endif
}

bool JoinPlanesVector(const uint8_t *const *planes, size_t count, size_t element_size, uint8_t *elements,
                      JoinStores stores, JoinLoop loop) {
#if TW_JOIN_DISPATCH
  const Kernels *kernels = Get(loop);
  if (kernels == nullptr || (element_size != 2 && element_size != 4)) return false;
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
  const uint8_t *from[4];
  for (size_t k = 0; k < element_size; ++k) from[k] = planes[k] + head;
  kernels->join[element_size == 4][stream](from, body, elements + head * element_size);
  // Streamed stores are weakly ordered: fence them before whatever tells another thread they are done.
  if (stream) _mm_sfence();
  JoinEach(planes, head + body, count, element_size, elements);
  return true;
#else
  (void)planes, (void)count, (void)element_size, (void)elements, (void)stores, (void)loop;
  return false;
#endif
}

}  // namespace checkpoint
}  // namespace tw
