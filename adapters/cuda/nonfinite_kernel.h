/*
 * The launch of the multi-tensor non-finite count (nonfinite_kernel.cu), as the host side
 * (cuda_device.c) calls it. Internal to the adapter, never installed.
 */
#ifndef TW_CUDA_NONFINITE_KERNEL_H
#define TW_CUDA_NONFINITE_KERNEL_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "nonfinite_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues the kernel on `stream` over `entry_count` entries (device memory) covering `block_count`
 * blocks (the last entry's first_block plus its chunks), accumulating into `results` (device memory,
 * initialised as nonfinite_table.h says). Returns the launch's error (cudaSuccess when enqueued). */
cudaError_t tw_cuda_launch_nonfinite(const tw_cuda_scan_entry *entries, int32_t entry_count, int64_t block_count,
                                     tw_cuda_scan_result *results, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* TW_CUDA_NONFINITE_KERNEL_H */
