/*
 * trainwatch/numerics.h — NaN/Inf scanning, tensor statistics, check_numerics.
 *
 * Every function here reads a tensor view (trainwatch/common.h) of any dtype:
 * - float64, float32, float16, bfloat16, float8_e4m3fn and float8_e5m2 are classified by their bits:
 *   NaN (any payload, quiet or signalling, either sign), +Inf, -Inf, or finite (zeros and subnormals
 *   included). float8_e4m3fn has no infinities; its 0x7F / 0xFF patterns are NaN.
 * - Integer and bool views are finite by construction.
 * - Views may be contiguous or strided; strides (in elements) may be negative or zero. Indices reported
 *   are row-major positions over the view's shape, whatever its strides (element [i][j] of a 2-D view
 *   has index i * shape[1] + j). Zero-size views are accepted. Data may have any alignment.
 *
 * The kernels are SIMD (Highway) with run-time dispatch to the best instruction set of the CPU, and are
 * built for the case that matters: an all-finite tensor is read once at memory bandwidth.
 *
 * Ownership: nothing is retained after a call returns; the tensor's memory is only read.
 * Thread rules: every function is reentrant; any number of threads may scan the same or different
 * tensors at once, as long as nobody writes the data being read.
 * Errors: on failure the out-parameter is left untouched and tw_last_error_message() names the bad
 * argument ("tensor has invalid dtype 99", "out is NULL", …).
 */
#ifndef TRAINWATCH_NUMERICS_H
#define TRAINWATCH_NUMERICS_H

#include "trainwatch/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Scanning                                                                                       */
/* ---------------------------------------------------------------------------------------------- */

/* What tw_scan finds. A versioned out-struct (trainwatch/common.h): set struct_size with
 * TW_SCAN_RESULT_INIT or tw_scan_result_init; the library writes only the members the caller's size
 * covers. */
typedef struct tw_scan_result {
  uint32_t struct_size;
  int64_t nan_count;
  int64_t pos_inf_count;
  int64_t neg_inf_count;
  int64_t first_nonfinite_index; /* row-major index of the first NaN or ±Inf; -1 if all finite */
} tw_scan_result;

#define TW_SCAN_RESULT_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_scan_result, first_nonfinite_index)
#define TW_SCAN_RESULT_INIT \
  { (uint32_t)sizeof(tw_scan_result), 0, 0, 0, -1 }

/* Sets *result to TW_SCAN_RESULT_INIT (compiled into the caller, as tw_tensor_init). NULL is a no-op. */
static inline void tw_scan_result_init(tw_scan_result *result) {
  const tw_scan_result init = TW_SCAN_RESULT_INIT;
  if (result != NULL) *result = init;
}

/* Counts the NaN, +Inf and -Inf elements of `tensor` and finds the first of them. Reads every element
 * of a float view once (an integer or bool view is not read: all counts 0, index -1).
 * Errors: TW_INVALID_ARGUMENT — out is NULL or its struct_size is smaller than the first version of
 * tw_scan_result; tensor is NULL, has a struct_size too small, an invalid dtype, a negative ndim or
 * extent, a NULL shape with ndim > 0, too many elements, or NULL data with elements; a strided device
 * view. A device view (trainwatch/device.h) is counted on its device; it may also fail with
 * TW_FAILED_PRECONDITION (no device registered for its type) or the status of a failing device
 * operation, the message naming the operation and the tensor. */
TW_NODISCARD TW_API tw_status tw_scan(tw_scan_result *out, const tw_tensor *tensor);

/* *out = 1 if `tensor` holds a NaN or ±Inf, else 0. Stops at the first block of a few KiB that holds
 * one, so a bad tensor is usually not read to the end; an all-finite one costs what tw_scan costs.
 * A device view is counted whole on its device.
 * Errors: TW_INVALID_ARGUMENT — out is NULL; tensor invalid as for tw_scan; the device errors of
 * tw_scan. */
TW_NODISCARD TW_API tw_status tw_has_nonfinite(int *out, const tw_tensor *tensor);

/* ---------------------------------------------------------------------------------------------- */
/* Statistics                                                                                     */
/* ---------------------------------------------------------------------------------------------- */

/* The statistics of a tensor (the "health pill" of TF's debugger), computed in one pass. struct_size
 * first, as tw_scan_result. */
typedef struct tw_numerics_stats {
  uint32_t struct_size;
  int64_t element_count;
  int64_t finite_count;
  int64_t nan_count;
  int64_t pos_inf_count;
  int64_t neg_inf_count;
  int64_t first_nonfinite_index; /* as in tw_scan_result; -1 if all finite */
  /* Over the finite elements only; NaN when finite_count is 0 (an empty or all-non-finite tensor).
   * The mean is accumulated in double with compensated partial sums. bool elements count as 0 or 1. */
  double min;
  double max;
  double mean;
} tw_numerics_stats;

#define TW_NUMERICS_STATS_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_numerics_stats, mean)
#define TW_NUMERICS_STATS_INIT \
  { (uint32_t)sizeof(tw_numerics_stats), 0, 0, 0, 0, 0, -1, 0.0, 0.0, 0.0 }

/* Sets *stats to TW_NUMERICS_STATS_INIT (compiled into the caller). NULL is a no-op. */
static inline void tw_numerics_stats_init(tw_numerics_stats *stats) {
  const tw_numerics_stats init = TW_NUMERICS_STATS_INIT;
  if (stats != NULL) *stats = init;
}

/* Fills *out with the statistics of `tensor`: counts as tw_scan, plus finite min, max and mean.
 * Errors: TW_INVALID_ARGUMENT — out is NULL or its struct_size is smaller than the first version of
 * tw_numerics_stats; tensor invalid as for tw_scan. A device view is copied to pinned host memory
 * first (the device errors of tw_scan apply). */
TW_NODISCARD TW_API tw_status tw_tensor_stats(tw_numerics_stats *out, const tw_tensor *tensor);

/* ---------------------------------------------------------------------------------------------- */
/* check_numerics                                                                                 */
/* ---------------------------------------------------------------------------------------------- */

/* TF's tf.debugging.check_numerics / CheckNumerics op. Returns TW_OK if every element of `tensor` is
 * finite. Otherwise returns TW_INVALID_ARGUMENT (TF raises InvalidArgumentError) with TF's message
 * text as this thread's last error message:
 *   "<message> : Tensor had NaN values"
 *   "<message> : Tensor had Inf values"
 *   "<message> : Tensor had Inf and NaN values"
 * `message` is copied into the error text; "" is allowed.
 * Errors: TW_INVALID_ARGUMENT — the tensor holds NaN or Inf (messages above); message is NULL; tensor
 * invalid as for tw_scan (the message then names the argument, as for every other function); the
 * device errors of tw_scan for a device view, which is counted on its device. */
TW_NODISCARD TW_API tw_status tw_check_numerics(const tw_tensor *tensor, const char *message);

/* ---------------------------------------------------------------------------------------------- */
/* Dispatch                                                                                       */
/* ---------------------------------------------------------------------------------------------- */

/* Name of the instruction set the kernels run on in this process: on x86 "AVX3_DL" (AVX-512 with
 * VNNI, BITALG, …), "AVX3" (AVX-512), "AVX2", "SSE4", "SSSE3", or the portable fallback ("SCALAR" or
 * "EMU128"). Chosen once from the CPU on first use. Static storage; never NULL. */
TW_API const char *tw_numerics_target(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_NUMERICS_H */
