/* libtrainwatch_cuda's non-finite count without a GPU: the host side's table (nonfinite_table.c) and the
 * kernel's per-thread code (nonfinite_scan.h, what every thread of nonfinite_kernel.cu runs) driven on
 * the CPU, every thread of every block in turn, their findings added up as the kernel's block reduction
 * and atomics add them. What this leaves to tests/gpu/test_cuda_device (on a GPU): the reduction itself,
 * the launch and the copies.
 *
 * Checked against the numerics reference model (reference.h) through the known-answer suites: every bit
 * pattern of the 8- and 16-bit formats, f32/f64 special values, offsets, lengths and misaligned starts
 * (the head / 16-byte body / tail split, and byte-by-byte reads), bad elements on and around chunk
 * boundaries, zero-size views and scalars; plus the first NaN index, and many tensors of every dtype in
 * one launch (the block-to-tensor search). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {  // cmocka 1.1's header has no C++ guard
#include <cmocka.h>
}
#define TW_EXPERIMENTAL_API  // tw_device_scan, the results' layout
#include <trainwatch.h>

#include <vector>

#include "known_answers.h"
#include "nonfinite_scan.h"
#include "nonfinite_table.h"
#include "reference.h"

namespace {

// The launch over `views`, emulated: the table as the host side builds it, then each block's threads.
std::vector<tw_device_scan> EmulatedLaunch(const std::vector<tw_tensor> &views) {
  std::vector<tw_device_scan> out(views.size());
  if (views.empty()) return out;
  size_t entries = 0, bytes = 0, results_offset = 0;
  if (tw_cuda_scan_plan(&entries, &bytes, &results_offset, views.data(), views.size()) != TW_OK)
    fail_msg("tw_cuda_scan_plan: %s", tw_last_error_message());
  std::vector<unsigned char> upload(bytes + 64);
  void *aligned = upload.data() + (64 - reinterpret_cast<uintptr_t>(upload.data()) % 64) % 64;
  const int64_t blocks = tw_cuda_scan_fill(aligned, results_offset, views.data(), views.size());
  const auto *table = static_cast<const tw_cuda_scan_entry *>(aligned);
  auto *results = reinterpret_cast<tw_cuda_scan_result *>(static_cast<unsigned char *>(aligned) + results_offset);
  for (int64_t block = 0; block < blocks; block++) {
    const tw_cuda_scan_entry &e = table[tw_cuda_scan::EntryOf(table, static_cast<int32_t>(entries), block)];
    tw_cuda_scan_result &r = results[e.result];
    for (unsigned tid = 0; tid < TW_CUDA_SCAN_THREADS; tid++) {
      tw_cuda_scan::Found found;
      tw_cuda_scan::ScanBlockShare(e, static_cast<unsigned long long>(block), tid, TW_CUDA_SCAN_THREADS, &found);
      r.nan_count += found.nan;
      r.pos_inf_count += found.pos_inf;
      r.neg_inf_count += found.neg_inf;
      r.first_nonfinite_index = tw_cuda_scan::Min(r.first_nonfinite_index, found.first_bad);
      r.first_nan_index = tw_cuda_scan::Min(r.first_nan_index, found.first_nan);
    }
  }
  static_assert(sizeof(tw_cuda_scan_result) == sizeof(tw_device_scan), "results are copied as they are");
  memcpy(out.data(), results, views.size() * sizeof(tw_device_scan));
  return out;
}

// tw_scan through the emulated kernel. Device views are contiguous: a strided view (the suites' reversed
// one) is gathered into row-major order first, which keeps every element's row-major index.
tw_status EmulatedScan(tw_scan_result *out, const tw_tensor *view) {
  std::vector<uint64_t> gathered;
  tw_tensor contiguous = *view;
  if (view->strides != nullptr) {
    gathered.resize(static_cast<size_t>(tw_tensor_element_count(view)) + 1);
    ref_gather(view, gathered.data());
    contiguous.data = gathered.data();
    contiguous.strides = nullptr;
  }
  const tw_device_scan r = EmulatedLaunch({contiguous})[0];
  const int64_t first_nan = ref_first_nan(view);
  if (r.first_nan_index != first_nan)
    fail_msg("%s, %lld elements: first_nan_index %lld, want %lld", tw_dtype_name(static_cast<tw_dtype>(view->dtype)),
             static_cast<long long>(tw_tensor_element_count(view)), static_cast<long long>(r.first_nan_index),
             static_cast<long long>(first_nan));
  out->nan_count = r.nan_count;
  out->pos_inf_count = r.pos_inf_count;
  out->neg_inf_count = r.neg_inf_count;
  out->first_nonfinite_index = r.first_nonfinite_index;
  return TW_OK;
}

tw_status EmulatedHasNonfinite(int *out, const tw_tensor *view) {
  tw_scan_result r = TW_SCAN_RESULT_INIT;
  const tw_status status = EmulatedScan(&r, view);
  *out = r.first_nonfinite_index >= 0;
  return status;
}

// The device has no statistics: the suites' stats checks run on the host library, unchanged.
const numerics_api emulated_api = {EmulatedScan, EmulatedHasNonfinite, tw_tensor_stats};

void every_pattern_of_16_and_8_bit_formats(void **) { ka_exhaustive_narrow_formats(&emulated_api); }
void special_values_of_f32_and_f64(void **) { ka_special_values_wide_formats(&emulated_api); }
void offsets_lengths_and_misaligned_starts(void **) { ka_offsets_and_lengths(&emulated_api, 32, 256); }
void bad_elements_on_chunk_boundaries(void **) { ka_block_boundaries(&emulated_api); }
void zero_size_views_and_scalars(void **) { ka_zero_size_and_scalars(&emulated_api); }

uint64_t NextRandom(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

// Chunks are 64 KiB: a bad element just before and just after every chunk boundary of a 5-chunk
// tensor, each alone, for every float dtype (the element index of a chunk's first element differs per
// element size).
void bad_elements_beside_every_chunk_boundary(void **) {
  for (int d = 0; d < REF_FLOAT_DTYPE_COUNT; d++) {
    const tw_dtype dtype = ref_float_dtypes[d];
    const int64_t per_chunk = TW_CUDA_CHUNK_BYTES / static_cast<int64_t>(ref_size(dtype));
    const int64_t n = 5 * per_chunk - 3;
    std::vector<uint64_t> storage(static_cast<size_t>(n) + 1);
    ref_fill(dtype, storage.data(), n, ref_one(dtype));
    const int64_t shape[1] = {n};
    const tw_tensor view = ref_view(dtype, storage.data(), 1, shape, nullptr);
    for (int64_t c = 1; c < 5; c++) {
      for (int64_t at : {c * per_chunk - 1, c * per_chunk}) {
        ref_put(dtype, storage.data(), at, ref_nan(dtype));
        const tw_device_scan r = EmulatedLaunch({view})[0];
        ref_put(dtype, storage.data(), at, ref_one(dtype));
        if (r.nan_count != 1 || r.first_nan_index != at || r.first_nonfinite_index != at)
          fail_msg("%s: NaN at %lld (chunk %lld): got nan %lld first %lld", ref_name(dtype), static_cast<long long>(at),
                   static_cast<long long>(c), static_cast<long long>(r.nan_count),
                   static_cast<long long>(r.first_nonfinite_index));
      }
    }
  }
}

// 200 views of every dtype (integers, bools, empty and scalar views among them), random lengths up to a
// few chunks and random alignments, 0 to 3 bad elements each: one launch, each view checked against the
// reference model.
void many_tensors_in_one_launch(void **) {
  static const tw_dtype dtypes[] = {TW_FLOAT16,     TW_BFLOAT16, TW_FLOAT32, TW_FLOAT64, TW_FLOAT8_E4M3FN,
                                    TW_FLOAT8_E5M2, TW_INT32,    TW_BOOL,    TW_UINT8};
  constexpr int kViews = 200;
  uint64_t seed = 0x2545F4914F6CDD1DULL;
  std::vector<std::vector<uint64_t>> storage(kViews);
  std::vector<int64_t> shapes(kViews);
  std::vector<tw_tensor> views(kViews);
  for (int i = 0; i < kViews; i++) {
    const tw_dtype dtype = dtypes[NextRandom(&seed) % (sizeof dtypes / sizeof dtypes[0])];
    const size_t size = ref_size(dtype);
    const int64_t n = i % 23 == 4 ? 0 : static_cast<int64_t>(NextRandom(&seed) % 70000) + 1;
    const size_t skip = NextRandom(&seed) % 3;  // elements: 16-byte aligned or not
    storage[i].assign((static_cast<size_t>(n) + skip) * size / 8 + 2, 0);
    unsigned char *data = reinterpret_cast<unsigned char *>(storage[i].data()) + skip * size;
    for (int64_t e = 0; e < n; e++) {
      uint64_t bits = NextRandom(&seed);
      if (dtype >= TW_FLOAT16) {
        bits &= size == 8 ? ~0ULL : (1ULL << (8 * size)) - 1;
        while (ref_classify(dtype, bits) != REF_FINITE) bits ^= 1ULL << (8 * size - 2);
      }
      ref_put(dtype, data, e, bits);
    }
    if (dtype >= TW_FLOAT16 && n > 0) {
      const uint64_t bad[3] = {ref_nan(dtype), ref_pos_inf(dtype), ref_neg_inf(dtype)};
      for (uint64_t k = NextRandom(&seed) % 4; k > 0; k--)
        ref_put(dtype, data, static_cast<int64_t>(NextRandom(&seed) % static_cast<uint64_t>(n)), bad[k % 3]);
    }
    shapes[i] = n;
    views[i] = ref_view(dtype, data, n == 1 && i % 2 ? 0 : 1, &shapes[i], nullptr);
  }
  const std::vector<tw_device_scan> results = EmulatedLaunch(views);
  for (int i = 0; i < kViews; i++) {
    const ref_stats want = ref_stats_of(&views[i]);
    const tw_device_scan &r = results[i];
    if (r.nan_count != want.nan_count || r.pos_inf_count != want.pos_inf_count ||
        r.neg_inf_count != want.neg_inf_count || r.first_nonfinite_index != want.first_nonfinite_index ||
        r.first_nan_index != ref_first_nan(&views[i]))
      fail_msg("view %d (%s, %lld elements): got nan %lld +inf %lld -inf %lld first %lld, want %lld %lld %lld %lld", i,
               ref_name(static_cast<tw_dtype>(views[i].dtype)), static_cast<long long>(shapes[i]),
               static_cast<long long>(r.nan_count), static_cast<long long>(r.pos_inf_count),
               static_cast<long long>(r.neg_inf_count), static_cast<long long>(r.first_nonfinite_index),
               static_cast<long long>(want.nan_count), static_cast<long long>(want.pos_inf_count),
               static_cast<long long>(want.neg_inf_count), static_cast<long long>(want.first_nonfinite_index));
  }
}

// A malformed view is refused by the plan with its name; no view needs no table.
void the_plan_refuses_malformed_views(void **) {
  const int64_t shape[1] = {-4};
  tw_tensor view = TW_TENSOR_INIT;
  view.dtype = TW_FLOAT32;
  view.name = "w";
  view.ndim = 1;
  view.shape = shape;
  size_t entries = 7, bytes = 7, offset = 7;
  assert_int_equal(tw_cuda_scan_plan(&entries, &bytes, &offset, &view, 1), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "'w'"));
  view.struct_size = 8;
  assert_int_equal(tw_cuda_scan_plan(&entries, &bytes, &offset, &view, 1), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_cuda_scan_plan(&entries, &bytes, &offset, &view, 0), TW_OK);
  assert_int_equal(entries + bytes + offset, 0);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_pattern_of_16_and_8_bit_formats),
      cmocka_unit_test(special_values_of_f32_and_f64),
      cmocka_unit_test(offsets_lengths_and_misaligned_starts),
      cmocka_unit_test(bad_elements_on_chunk_boundaries),
      cmocka_unit_test(zero_size_views_and_scalars),
      cmocka_unit_test(bad_elements_beside_every_chunk_boundary),
      cmocka_unit_test(many_tensors_in_one_launch),
      cmocka_unit_test(the_plan_refuses_malformed_views),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
