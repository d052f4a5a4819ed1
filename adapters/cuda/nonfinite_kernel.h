/*
 * The multi-tensor non-finite count of libtrainwatch_cuda: what the host side (cuda_device.c, C) and
 * the kernel (nonfinite_kernel.cu, CUDA C++) share. Internal to the adapter, never installed.
 */
#ifndef TW_CUDA_NONFINITE_KERNEL_H
#define TW_CUDA_NONFINITE_KERNEL_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one tensor that one thread block reads: 256 threads x 16 bytes x 16 rounds. A tensor of n
 * bytes takes ceil(n / TW_CUDA_CHUNK_BYTES) blocks; a chunk boundary is a multiple of 16 bytes from the
 * tensor's start, so every chunk of a tensor has the alignment of its first one. */
#define TW_CUDA_CHUNK_BYTES 65536
#define TW_CUDA_SCAN_THREADS 256

/* One float tensor of a launch, in device memory. Entries are ordered by first_block; the blocks
 * [first_block, next entry's first_block) read this tensor, chunk by chunk. result is the index of the
 * tensor's tw_device_scan in the launch's results (integer tensors and empty ones have no entry). */
typedef struct tw_cuda_scan_entry {
  const void *data;
  int64_t count; /* elements, > 0 */
  int64_t first_block;
  int32_t dtype; /* a float tw_dtype */
  int32_t result;
} tw_cuda_scan_entry;

/* The accumulators the kernel updates for each tensor, laid out as tw_device_scan (trainwatch/device.h)
 * so that the results are copied to the caller's buffer as they are: counts start at 0 and grow with
 * atomicAdd, indices start at all-ones (-1 as int64, the largest unsigned value) and shrink with
 * atomicMin. */
typedef struct tw_cuda_scan_result {
  unsigned long long nan_count;
  unsigned long long pos_inf_count;
  unsigned long long neg_inf_count;
  unsigned long long first_nonfinite_index;
  unsigned long long first_nan_index;
} tw_cuda_scan_result;

/* Enqueues the kernel on `stream` over `entry_count` entries (device memory) covering `block_count`
 * blocks (the last entry's first_block plus its chunks), accumulating into `results` (device memory,
 * initialised as above). Returns the launch's error (cudaSuccess when enqueued). */
cudaError_t tw_cuda_launch_nonfinite(const tw_cuda_scan_entry *entries, int32_t entry_count, int64_t block_count,
                                     tw_cuda_scan_result *results, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* TW_CUDA_NONFINITE_KERNEL_H */
