/*
 * What one thread of the non-finite count does: find its block's tensor, read its share of the block's
 * chunk and classify each element. Plain C++ that nvcc compiles for the device (nonfinite_kernel.cu)
 * and a host compiler for the kernel's CPU test (tests/numerics/test_cuda_scan_logic.cc), which runs
 * every thread of every block in turn: the indexing, the alignment cases and the classification are
 * tested on every build, with or without a GPU. Internal to the adapter, never installed.
 *
 * Elements are classified by their bits, as trainwatch/numerics.h says: all exponent bits set is NaN
 * when the mantissa is non-zero and an infinity otherwise (float8_e4m3fn: S.1111.111 alone is NaN, it
 * has no infinities). The body of a chunk is read with 16-byte loads, four in flight per thread; the
 * unaligned head and the tail element by element, and a tensor whose data is not even aligned to its
 * element size byte by byte.
 */
#ifndef TW_CUDA_NONFINITE_SCAN_H
#define TW_CUDA_NONFINITE_SCAN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nonfinite_table.h"
#include "trainwatch/common.h"

#ifdef __CUDACC__
#define TW_SCAN_FN __device__ __forceinline__
#define TW_SCAN_UNROLL _Pragma("unroll")
#else
#define TW_SCAN_FN inline
#define TW_SCAN_UNROLL
#endif

namespace tw_cuda_scan {

#ifdef __CUDACC__
using Vector = uint4;
TW_SCAN_FN Vector LoadVector(const Vector *p) { return __ldg(p); }  // read-only cache path, 16 bytes
#define TW_SCAN_REQUIRE_ALIGNED(p, n)
#else
// The CPU test: a GPU faults on a load from an address that is not a multiple of its size (x86 does
// not), so here such a load aborts the test.
#define TW_SCAN_REQUIRE_ALIGNED(p, n) \
  if (reinterpret_cast<uintptr_t>(p) % (n) != 0) abort()
struct alignas(16) Vector {
  uint32_t x, y, z, w;
};
inline Vector LoadVector(const Vector *p) {
  TW_SCAN_REQUIRE_ALIGNED(p, 16);
  return *p;
}
#endif

constexpr unsigned long long kNone = ~0ULL;

template <typename T>
TW_SCAN_FN T Min(T a, T b) {
  return b < a ? b : a;
}

// What one thread has found so far.
struct Found {
  unsigned nan = 0, pos_inf = 0, neg_inf = 0;
  unsigned long long first_bad = kNone, first_nan = kNone;
};

// The bit masks of a format: exponent (all set: NaN or infinity), mantissa, sign.
template <typename Bits>
struct Format {
  Bits exponent, mantissa, sign;
};

template <typename Bits>
TW_SCAN_FN void Classify(Bits bits, const Format<Bits> &f, unsigned long long index, Found *found) {
  if ((bits & f.exponent) != f.exponent) return;
  if (bits & f.mantissa) {
    found->nan++;
    found->first_nan = Min(found->first_nan, index);
  } else if (bits & f.sign) {
    found->neg_inf++;
  } else {
    found->pos_inf++;
  }
  found->first_bad = Min(found->first_bad, index);
}

// The element at byte address p, read with one load when aligned to its size, else byte by byte.
template <typename Bits>
TW_SCAN_FN Bits Load(const unsigned char *p, bool aligned) {
  if (aligned) {
    TW_SCAN_REQUIRE_ALIGNED(p, sizeof(Bits));
    return *reinterpret_cast<const Bits *>(p);
  }
  Bits bits = 0;
  for (unsigned i = 0; i < sizeof(Bits); i++) bits |= static_cast<Bits>(static_cast<Bits>(p[i]) << (8 * i));
  return bits;  // little-endian, as every CUDA device and its host
}

template <typename Bits>
TW_SCAN_FN void ClassifyVector(const Vector &v, const Format<Bits> &f, unsigned long long index, Found *found) {
  constexpr int kLanes = 16 / sizeof(Bits);
  Bits lanes[kLanes];
  static_assert(sizeof(lanes) == sizeof(v), "a vector is 16 bytes");
  memcpy(lanes, &v, sizeof(v));
  bool special = false;
  TW_SCAN_UNROLL
  for (int i = 0; i < kLanes; i++) special |= (lanes[i] & f.exponent) == f.exponent;
  if (!special) return;  // the common case: no lane needs a second look
  TW_SCAN_UNROLL
  for (int i = 0; i < kLanes; i++) Classify(lanes[i], f, index + i, found);
}

// Reads this thread's share (thread `tid` of `threads`) of elements [begin, end) of a tensor whose
// data starts at `base`.
template <typename Bits>
TW_SCAN_FN void ScanChunk(const unsigned char *base, unsigned long long begin, unsigned long long end,
                          const Format<Bits> &f, unsigned tid, unsigned threads, Found *found) {
  constexpr unsigned kSize = sizeof(Bits);
  constexpr unsigned kLanes = 16 / kSize;
  if (reinterpret_cast<uintptr_t>(base) % kSize != 0) {  // rare: a view into the middle of a byte buffer
    for (unsigned long long i = begin + tid; i < end; i += threads)
      Classify(Load<Bits>(base + i * kSize, false), f, i, found);
    return;
  }
  // Head: the elements before the first 16-byte boundary (fewer than one vector's).
  const uintptr_t start = reinterpret_cast<uintptr_t>(base + begin * kSize);
  const unsigned long long head = Min<unsigned long long>(((16 - start % 16) % 16) / kSize, end - begin);
  if (tid < head) Classify(Load<Bits>(base + (begin + tid) * kSize, true), f, begin + tid, found);
  const unsigned long long body = begin + head;
  const unsigned long long vectors = (end - body) / kLanes;
  const Vector *v = reinterpret_cast<const Vector *>(base + body * kSize);
  // Four independent 16-byte loads in flight per thread before any is used.
  unsigned long long i = tid;
  for (; i + 3ULL * threads < vectors; i += 4ULL * threads) {
    const Vector a = LoadVector(v + i), b = LoadVector(v + i + threads), c = LoadVector(v + i + 2 * threads),
                 d = LoadVector(v + i + 3 * threads);
    ClassifyVector(a, f, body + i * kLanes, found);
    ClassifyVector(b, f, body + (i + threads) * kLanes, found);
    ClassifyVector(c, f, body + (i + 2 * threads) * kLanes, found);
    ClassifyVector(d, f, body + (i + 3 * threads) * kLanes, found);
  }
  for (; i < vectors; i += threads) ClassifyVector(LoadVector(v + i), f, body + i * kLanes, found);
  // Tail: fewer than one vector's elements after the last whole vector.
  const unsigned long long tail = body + vectors * kLanes;
  if (tail + tid < end) Classify(Load<Bits>(base + (tail + tid) * kSize, true), f, tail + tid, found);
}

// The entry block `block` reads: the last whose first_block <= block (entries ordered by first_block).
TW_SCAN_FN int32_t EntryOf(const tw_cuda_scan_entry *entries, int32_t count, unsigned long long block) {
  int32_t lo = 0, hi = count - 1;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo + 1) / 2;
    if (static_cast<unsigned long long>(entries[mid].first_block) <= block)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

template <typename Bits>
TW_SCAN_FN void ScanShare(const tw_cuda_scan_entry &e, unsigned long long block, Format<Bits> f, unsigned tid,
                          unsigned threads, Found *found) {
  const unsigned long long chunk_elements = TW_CUDA_CHUNK_BYTES / sizeof(Bits);
  const unsigned long long begin = (block - static_cast<unsigned long long>(e.first_block)) * chunk_elements;
  const unsigned long long end = Min(begin + chunk_elements, static_cast<unsigned long long>(e.count));
  ScanChunk<Bits>(static_cast<const unsigned char *>(e.data), begin, end, f, tid, threads, found);
}

// Thread `tid` of `threads` of block `block`, reading entry e (EntryOf): its share, per e's dtype.
TW_SCAN_FN void ScanBlockShare(const tw_cuda_scan_entry &e, unsigned long long block, unsigned tid, unsigned threads,
                               Found *found) {
  switch (e.dtype) {
    case TW_FLOAT64:
      ScanShare<uint64_t>(e, block, {0x7FF0000000000000ULL, 0x000FFFFFFFFFFFFFULL, 0x8000000000000000ULL}, tid, threads,
                          found);
      break;
    case TW_FLOAT32: ScanShare<uint32_t>(e, block, {0x7F800000u, 0x007FFFFFu, 0x80000000u}, tid, threads, found); break;
    case TW_FLOAT16: ScanShare<uint16_t>(e, block, {0x7C00, 0x03FF, 0x8000}, tid, threads, found); break;
    case TW_BFLOAT16: ScanShare<uint16_t>(e, block, {0x7F80, 0x007F, 0x8000}, tid, threads, found); break;
    case TW_FLOAT8_E5M2: ScanShare<uint8_t>(e, block, {0x7C, 0x03, 0x80}, tid, threads, found); break;
    case TW_FLOAT8_E4M3FN:  // S.1111.111 is NaN; every other pattern is finite (no infinities)
      ScanShare<uint8_t>(e, block, {0x7F, 0x7F, 0x80}, tid, threads, found);
      break;
    default:  // the host side makes entries for float dtypes only
      break;
  }
}

}  // namespace tw_cuda_scan

#endif /* TW_CUDA_NONFINITE_SCAN_H */
