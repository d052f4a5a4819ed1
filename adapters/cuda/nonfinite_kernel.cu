/*
 * The multi-tensor non-finite count: one launch over every tensor of a count_nonfinite call.
 *
 * Each block reads one chunk (TW_CUDA_CHUNK_BYTES) of one tensor, found by a binary search of the
 * entries' first_block. Elements are classified by their bits, as trainwatch/numerics.h says: all
 * exponent bits set is NaN when the mantissa is non-zero and an infinity otherwise (float8_e4m3fn:
 * S.1111.111 alone is NaN, it has no infinities). The body of a chunk is read with 16-byte loads, four
 * in flight per thread; the unaligned head and the tail element by element, and a tensor whose data is
 * not even aligned to its element size byte by byte. A block that finds nothing (the common case) ends
 * after one __syncthreads_or; one that does reduces its counts and first indices across the block and
 * adds them with one atomicAdd per count and one atomicMin per index.
 */
#include <stdint.h>

#include "nonfinite_kernel.h"
#include "trainwatch/common.h"

namespace {

constexpr unsigned long long kNone = ~0ULL;

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
__device__ __forceinline__ void Classify(Bits bits, const Format<Bits> &f, unsigned long long index, Found *found) {
  if ((bits & f.exponent) != f.exponent) return;
  if (bits & f.mantissa) {
    found->nan++;
    found->first_nan = min(found->first_nan, index);
  } else if (bits & f.sign) {
    found->neg_inf++;
  } else {
    found->pos_inf++;
  }
  found->first_bad = min(found->first_bad, index);
}

// The element at byte address p, read with one load when aligned to its size, else byte by byte.
template <typename Bits>
__device__ __forceinline__ Bits Load(const unsigned char *p, bool aligned) {
  if (aligned) return *reinterpret_cast<const Bits *>(p);
  Bits bits = 0;
  for (unsigned i = 0; i < sizeof(Bits); i++) bits |= static_cast<Bits>(p[i]) << (8 * i);  // little-endian
  return bits;
}

template <typename Bits>
__device__ __forceinline__ void ClassifyVector(const uint4 &v, const Format<Bits> &f, unsigned long long index,
                                               Found *found) {
  constexpr int kLanes = 16 / sizeof(Bits);
  Bits lanes[kLanes];
  static_assert(sizeof(lanes) == sizeof(v), "a vector is 16 bytes");
  memcpy(lanes, &v, sizeof(v));
  bool special = false;
#pragma unroll
  for (int i = 0; i < kLanes; i++) special |= (lanes[i] & f.exponent) == f.exponent;
  if (!special) return;  // the common case: no lane needs a second look
#pragma unroll
  for (int i = 0; i < kLanes; i++) Classify(lanes[i], f, index + i, found);
}

// Reads elements [begin, end) of a tensor whose data starts at `base`, this thread's share of them.
template <typename Bits>
__device__ void ScanChunk(const unsigned char *base, unsigned long long begin, unsigned long long end,
                          const Format<Bits> &f, Found *found) {
  constexpr unsigned kSize = sizeof(Bits);
  constexpr unsigned kLanes = 16 / kSize;
  const unsigned tid = threadIdx.x;
  const bool element_aligned = reinterpret_cast<uintptr_t>(base) % kSize == 0;
  if (!element_aligned) {  // rare: a view into the middle of a byte buffer
    for (unsigned long long i = begin + tid; i < end; i += blockDim.x)
      Classify(Load<Bits>(base + i * kSize, false), f, i, found);
    return;
  }
  // Head: the elements before the first 16-byte boundary.
  const uintptr_t start = reinterpret_cast<uintptr_t>(base + begin * kSize);
  unsigned long long head = ((16 - start % 16) % 16) / kSize;
  if (head > end - begin) head = end - begin;
  if (tid < head) Classify(Load<Bits>(base + (begin + tid) * kSize, true), f, begin + tid, found);
  const unsigned long long body = begin + head;
  const unsigned long long vectors = (end - body) / kLanes;
  const uint4 *v = reinterpret_cast<const uint4 *>(base + body * kSize);
  // Four independent 16-byte loads in flight per thread before any is used.
  const unsigned stride = blockDim.x;
  unsigned long long i = tid;
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    const uint4 a = __ldg(v + i), b = __ldg(v + i + stride), c = __ldg(v + i + 2 * stride),
                d = __ldg(v + i + 3 * stride);
    ClassifyVector(a, f, body + i * kLanes, found);
    ClassifyVector(b, f, body + (i + stride) * kLanes, found);
    ClassifyVector(c, f, body + (i + 2 * stride) * kLanes, found);
    ClassifyVector(d, f, body + (i + 3 * stride) * kLanes, found);
  }
  for (; i < vectors; i += stride) ClassifyVector(__ldg(v + i), f, body + i * kLanes, found);
  // Tail: fewer than one vector's elements after the last whole vector.
  const unsigned long long tail = body + vectors * kLanes;
  if (tail + tid < end) Classify(Load<Bits>(base + (tail + tid) * kSize, true), f, tail + tid, found);
}

__device__ __forceinline__ unsigned long long WarpMin(unsigned long long x) {
  for (int offset = 16; offset > 0; offset /= 2) x = min(x, __shfl_down_sync(0xFFFFFFFFu, x, offset));
  return x;
}

__device__ __forceinline__ unsigned WarpSum(unsigned x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_down_sync(0xFFFFFFFFu, x, offset);
  return x;
}

// Block-wide totals of every thread's Found, added into the tensor's result by thread 0.
__device__ void Publish(Found found, tw_cuda_scan_result *result) {
  __shared__ Found warps[TW_CUDA_SCAN_THREADS / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  found.nan = WarpSum(found.nan);
  found.pos_inf = WarpSum(found.pos_inf);
  found.neg_inf = WarpSum(found.neg_inf);
  found.first_bad = WarpMin(found.first_bad);
  found.first_nan = WarpMin(found.first_nan);
  if (lane == 0) warps[warp] = found;
  __syncthreads();
  if (threadIdx.x != 0) return;
  Found total;
  for (unsigned w = 0; w < blockDim.x / 32; w++) {
    total.nan += warps[w].nan;
    total.pos_inf += warps[w].pos_inf;
    total.neg_inf += warps[w].neg_inf;
    total.first_bad = min(total.first_bad, warps[w].first_bad);
    total.first_nan = min(total.first_nan, warps[w].first_nan);
  }
  if (total.nan) atomicAdd(&result->nan_count, static_cast<unsigned long long>(total.nan));
  if (total.pos_inf) atomicAdd(&result->pos_inf_count, static_cast<unsigned long long>(total.pos_inf));
  if (total.neg_inf) atomicAdd(&result->neg_inf_count, static_cast<unsigned long long>(total.neg_inf));
  if (total.first_bad != kNone) atomicMin(&result->first_nonfinite_index, total.first_bad);
  if (total.first_nan != kNone) atomicMin(&result->first_nan_index, total.first_nan);
}

template <typename Bits>
__device__ void ScanEntry(const tw_cuda_scan_entry &e, Format<Bits> f, tw_cuda_scan_result *results) {
  const unsigned long long chunk_elements = TW_CUDA_CHUNK_BYTES / sizeof(Bits);
  const unsigned long long begin = (blockIdx.x - e.first_block) * chunk_elements;
  const unsigned long long end = min(begin + chunk_elements, static_cast<unsigned long long>(e.count));
  Found found;
  ScanChunk<Bits>(static_cast<const unsigned char *>(e.data), begin, end, f, &found);
  const bool any = found.nan | found.pos_inf | found.neg_inf;
  if (!__syncthreads_or(any)) return;  // the whole chunk is finite: nothing to add
  Publish(found, results + e.result);
}

__global__ void __launch_bounds__(TW_CUDA_SCAN_THREADS)
    CountNonfinite(const tw_cuda_scan_entry *entries, int32_t count, tw_cuda_scan_result *results) {
  // The entry this block reads: the last whose first_block <= blockIdx.x.
  int32_t lo = 0, hi = count - 1;
  while (lo < hi) {
    const int32_t mid = (lo + hi + 1) / 2;
    if (entries[mid].first_block <= static_cast<int64_t>(blockIdx.x))
      lo = mid;
    else
      hi = mid - 1;
  }
  const tw_cuda_scan_entry e = entries[lo];
  switch (e.dtype) {
    case TW_FLOAT64:
      ScanEntry<uint64_t>(e, {0x7FF0000000000000ULL, 0x000FFFFFFFFFFFFFULL, 0x8000000000000000ULL}, results);
      break;
    case TW_FLOAT32: ScanEntry<uint32_t>(e, {0x7F800000u, 0x007FFFFFu, 0x80000000u}, results); break;
    case TW_FLOAT16: ScanEntry<uint16_t>(e, {0x7C00, 0x03FF, 0x8000}, results); break;
    case TW_BFLOAT16: ScanEntry<uint16_t>(e, {0x7F80, 0x007F, 0x8000}, results); break;
    case TW_FLOAT8_E5M2: ScanEntry<uint8_t>(e, {0x7C, 0x03, 0x80}, results); break;
    case TW_FLOAT8_E4M3FN:  // S.1111.111 is NaN; every other pattern is finite (no infinities)
      ScanEntry<uint8_t>(e, {0x7F, 0x7F, 0x80}, results);
      break;
    default:  // the host side makes entries for float dtypes only
      break;
  }
}

}  // namespace

extern "C" cudaError_t tw_cuda_launch_nonfinite(const tw_cuda_scan_entry *entries, int32_t entry_count,
                                                int64_t block_count, tw_cuda_scan_result *results,
                                                cudaStream_t stream) {
  if (entry_count <= 0 || block_count <= 0) return cudaSuccess;
  if (block_count > 0x7FFFFFFF) return cudaErrorInvalidConfiguration;  // 128 TiB in one call
  CountNonfinite<<<static_cast<unsigned>(block_count), TW_CUDA_SCAN_THREADS, 0, stream>>>(entries, entry_count,
                                                                                          results);
  return cudaGetLastError();
}
