/*
 * The multi-tensor non-finite count: one launch over every tensor of a count_nonfinite call.
 *
 * Each block reads one chunk (TW_CUDA_CHUNK_BYTES) of one tensor; what each of its threads does is
 * nonfinite_scan.h (shared with the kernel's CPU test). A block that finds nothing (the common case)
 * ends after one __syncthreads_or; one that does reduces its counts and first indices across the block
 * (warp shuffles, then one warp's totals in shared memory) and adds them with one atomicAdd per count
 * and one atomicMin per index.
 */
#include <stdint.h>

#include "nonfinite_kernel.h"
#include "nonfinite_scan.h"

namespace {

using tw_cuda_scan::Found;
using tw_cuda_scan::kNone;

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

__global__ void __launch_bounds__(TW_CUDA_SCAN_THREADS)
    CountNonfinite(const tw_cuda_scan_entry *entries, int32_t count, tw_cuda_scan_result *results) {
  const tw_cuda_scan_entry e = entries[tw_cuda_scan::EntryOf(entries, count, blockIdx.x)];
  Found found;
  tw_cuda_scan::ScanBlockShare(e, blockIdx.x, threadIdx.x, blockDim.x, &found);
  const bool any = found.nan | found.pos_inf | found.neg_inf;
  if (!__syncthreads_or(any)) return;  // the whole chunk is finite: nothing to add
  Publish(found, results + e.result);
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
