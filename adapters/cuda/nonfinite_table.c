/*
 * The table of a count_nonfinite launch, built on the host (nonfinite_table.h). Plain C with no CUDA,
 * so that the kernel's CPU test builds it exactly as the table does.
 */
#include "nonfinite_table.h"

#include <stdio.h>

static int is_float(int32_t dtype) {
  return dtype == TW_FLOAT16 || dtype == TW_BFLOAT16 || dtype == TW_FLOAT32 || dtype == TW_FLOAT64 ||
         dtype == TW_FLOAT8_E4M3FN || dtype == TW_FLOAT8_E5M2;
}

static const tw_tensor *view_at(const tw_tensor *tensors, size_t i) {
  return (const tw_tensor *)((const char *)tensors + i * tensors[0].struct_size);
}

tw_status tw_cuda_scan_plan(size_t *out_entries, size_t *out_upload_bytes, size_t *out_results_offset,
                            const tw_tensor *tensors, size_t count) {
  size_t i, entries = 0, offset;
  if (count == 0) {
    *out_entries = *out_upload_bytes = *out_results_offset = 0;
    return TW_OK;
  }
  if (tensors[0].struct_size < TW_TENSOR_SIZE_V1)
    return tw_set_error(TW_INVALID_ARGUMENT, "tensors[0].struct_size is smaller than tw_tensor's first version");
  if (count > INT32_MAX) return tw_set_error(TW_INVALID_ARGUMENT, "more than INT32_MAX tensors in one call");
  for (i = 0; i < count; i++) {
    const tw_tensor *view = view_at(tensors, i);
    const int64_t elements = tw_tensor_element_count(view);
    if (elements < 0) {
      char message[256];
      snprintf(message, sizeof message, "tensor '%s' is malformed (struct_size, dtype, rank or shape)",
               view->name ? view->name : "");
      return tw_set_error(TW_INVALID_ARGUMENT, message);
    }
    if (is_float(view->dtype) && elements > 0) entries++;
  }
  offset = (entries * sizeof(tw_cuda_scan_entry) + 63) / 64 * 64;
  *out_entries = entries;
  *out_results_offset = offset;
  *out_upload_bytes = offset + count * sizeof(tw_cuda_scan_result);
  return TW_OK;
}

int64_t tw_cuda_scan_fill(void *upload, size_t results_offset, const tw_tensor *tensors, size_t count) {
  tw_cuda_scan_entry *entry = (tw_cuda_scan_entry *)upload;
  tw_cuda_scan_result *initial = (tw_cuda_scan_result *)((char *)upload + results_offset);
  int64_t blocks = 0;
  size_t i;
  for (i = 0; i < count; i++) {
    const tw_tensor *view = view_at(tensors, i);
    const int64_t elements = tw_tensor_element_count(view);
    const int64_t bytes = elements * (int64_t)tw_dtype_size((tw_dtype)view->dtype);
    initial[i].nan_count = initial[i].pos_inf_count = initial[i].neg_inf_count = 0;
    initial[i].first_nonfinite_index = initial[i].first_nan_index = ~0ULL; /* -1 as int64 */
    if (!is_float(view->dtype) || elements <= 0) continue;                 /* integers and bools are finite */
    entry->data = view->data;
    entry->count = elements;
    entry->first_block = blocks;
    entry->dtype = view->dtype;
    entry->result = (int32_t)i;
    blocks += (bytes + TW_CUDA_CHUNK_BYTES - 1) / TW_CUDA_CHUNK_BYTES;
    entry++;
  }
  return blocks;
}
