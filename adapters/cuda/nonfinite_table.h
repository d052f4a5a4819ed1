/*
 * The table a count_nonfinite launch reads and the results it writes: shared by the host side
 * (cuda_device.c, C), the kernel (nonfinite_kernel.cu) and the kernel's CPU test. No CUDA header:
 * internal to the adapter, never installed.
 */
#ifndef TW_CUDA_NONFINITE_TABLE_H
#define TW_CUDA_NONFINITE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "trainwatch/common.h"

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

/* The launch's plan for `count` views (stepped by tensors[0].struct_size, trainwatch/common.h): how many
 * entries (float views with elements; integer, bool and empty views need none) and the bytes of the
 * upload that carries the entries and then every view's initial result, at *out_results_offset.
 * Errors: TW_INVALID_ARGUMENT (struct_size too small, a malformed view, more than INT32_MAX views). */
tw_status tw_cuda_scan_plan(size_t *out_entries, size_t *out_upload_bytes, size_t *out_results_offset,
                            const tw_tensor *tensors, size_t count);

/* Fills the upload planned above: the entries in view order with consecutive blocks, and every view's
 * initial result. Returns the launch's number of blocks. */
int64_t tw_cuda_scan_fill(void *upload, size_t results_offset, const tw_tensor *tensors, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* TW_CUDA_NONFINITE_TABLE_H */
