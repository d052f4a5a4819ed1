// The vector kernels that join byte planes and split 8-byte elements (white-box): every kernel this CPU
// runs, cached and streamed stores, against the element-by-element definition, at every alignment of
// planes and destination and at counts around the kernels' steps, with the bytes around the
// destination untouched.
#include <cstring>
#include <random>
#include <vector>

#include "checkpoint/codec/codec.h"
#include "checkpoint/codec/plane_join.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

constexpr ckpt::Isa kLevels[] = {ckpt::Isa::kBest, ckpt::Isa::kAvx2, ckpt::Isa::kAvx512, ckpt::Isa::kAvx512Vbmi};
constexpr ckpt::JoinStores kStores[] = {ckpt::JoinStores::kCached, ckpt::JoinStores::kStreamed};
constexpr uint8_t kGuard = 0xA5;

// Whether level `isa` has a kernel for 8-byte elements: AVX-512 with VBMI.
bool HandlesEightBytes(ckpt::Isa isa) { return ckpt::ResolveIsa(isa) == ckpt::Isa::kAvx512Vbmi; }

}  // namespace

// The levels every kernel is chosen by (cpu_dispatch.h): each includes the one below, kBest is the
// highest this CPU runs, and a named level stands for itself.
static void isa_levels_nest_and_best_is_the_highest_that_runs(void **state) {
  (void)state;
  const ckpt::Isa order[] = {ckpt::Isa::kPortable, ckpt::Isa::kAvx2, ckpt::Isa::kAvx512, ckpt::Isa::kAvx512Vbmi};
  ckpt::Isa highest = ckpt::Isa::kPortable;
  for (size_t i = 0; i < 4; ++i) {
    assert_true(ckpt::ResolveIsa(order[i]) == order[i]);
    if (i > 0 && ckpt::IsaRuns(order[i])) assert_true(ckpt::IsaRuns(order[i - 1]));
    if (ckpt::IsaRuns(order[i])) highest = order[i];
  }
  assert_true(ckpt::IsaRuns(ckpt::Isa::kPortable) && ckpt::IsaRuns(ckpt::Isa::kBest));
  assert_true(ckpt::ResolveIsa(ckpt::Isa::kBest) == highest);
  assert_string_equal(ckpt::IsaName(ckpt::Isa::kBest), ckpt::IsaName(highest));
  assert_string_equal(ckpt::IsaName(ckpt::Isa::kPortable), "portable");
}

static void every_kernel_joins_as_defined_at_any_alignment(void **state) {
  (void)state;
  std::mt19937 rng(3);
  std::vector<uint8_t> source(8 * 4200 + 64);
  for (uint8_t &b : source) b = static_cast<uint8_t>(rng());
  int kernels = 0;
  for (ckpt::Isa isa : kLevels) {
    if (!ckpt::IsaRuns(isa) || ckpt::ResolveIsa(isa) == ckpt::Isa::kPortable) continue;
    ++kernels;
    for (size_t element_size : {2, 4, 8}) {
      if (element_size == 8 && !HandlesEightBytes(isa)) continue;
      for (size_t count : {0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 4200}) {
        for (size_t misalign : {0, 1, 2, 3, 4, 17, 32, 62}) {
          for (ckpt::JoinStores stores : kStores) {
            const uint8_t *planes[8];
            for (size_t k = 0; k < element_size; ++k) planes[k] = source.data() + k * count + (misalign + k) % 7;
            std::vector<uint8_t> out(count * element_size + 128 + 64, kGuard);
            // 64-byte aligned base, then the misalignment: streamed stores start at the first line.
            uint8_t *base = out.data() + (64 - reinterpret_cast<uintptr_t>(out.data()) % 64) % 64;
            uint8_t *at = base + misalign;
            assert_true(ckpt::JoinPlanesVector(planes, count, element_size, at, stores, isa));
            for (size_t i = 0; i < count; ++i) {
              for (size_t k = 0; k < element_size; ++k) {
                if (at[i * element_size + k] != planes[k][i]) {
                  fail_msg("kernel %s, %zu-byte elements, count %zu, +%zu, %s: element %zu byte %zu",
                           ckpt::IsaName(isa), element_size, count, misalign,
                           stores == ckpt::JoinStores::kStreamed ? "streamed" : "cached", i, k);
                }
              }
            }
            for (uint8_t *p = out.data(); p < at; ++p) assert_int_equal(*p, kGuard);
            for (uint8_t *p = at + count * element_size; p < out.data() + out.size(); ++p) assert_int_equal(*p, kGuard);
          }
        }
      }
    }
    // Element sizes without a kernel are left to the portable loop: nothing written.
    const uint8_t one[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const uint8_t *planes[8] = {one, one + 1, one + 2, one + 3, one + 4, one + 5, one + 6, one + 7};
    uint8_t out[8] = {kGuard};
    assert_int_equal(ckpt::JoinPlanesVector(planes, 1, 8, out, ckpt::JoinStores::kCached, isa), HandlesEightBytes(isa));
    if (!HandlesEightBytes(isa)) assert_int_equal(out[0], kGuard);
    out[0] = kGuard;
    assert_false(ckpt::JoinPlanesVector(planes, 1, 1, out, ckpt::JoinStores::kCached, isa));
    assert_int_equal(out[0], kGuard);
  }
  assert_true(kernels >= 1 || ckpt::ResolveIsa(ckpt::Isa::kBest) == ckpt::Isa::kPortable);
  assert_non_null(std::strstr("avx2 avx512 avx512vbmi portable", ckpt::IsaName(ckpt::Isa::kBest)));
  assert_false(ckpt::JoinPlanesVector(nullptr, 0, 2, nullptr, ckpt::JoinStores::kCached, ckpt::Isa::kPortable));
}

// The 8-byte split kernel against the definition, at counts around its step and any alignment, with
// the bytes around every plane untouched; where no kernel runs, nothing is written.
static void the_split_kernel_splits_as_defined_at_any_alignment(void **state) {
  (void)state;
  std::mt19937 rng(5);
  std::vector<uint8_t> source(8 * 4200 + 64);
  for (uint8_t &b : source) b = static_cast<uint8_t>(rng());
  for (ckpt::Isa isa : kLevels) {
    if (!ckpt::IsaRuns(isa) || ckpt::ResolveIsa(isa) == ckpt::Isa::kPortable) continue;
    for (size_t count : {0, 1, 63, 64, 65, 127, 128, 129, 1000, 4200}) {
      for (size_t misalign : {0, 1, 3, 8, 17, 62}) {
        const uint8_t *elements = source.data() + misalign;
        std::vector<uint8_t> out(8 * (count + 128), kGuard);
        uint8_t *planes[8];
        for (size_t k = 0; k < 8; ++k) planes[k] = out.data() + k * (count + 128) + 64 + (misalign + k) % 5;
        const bool split = ckpt::SplitPlanesVector(elements, count, 8, planes, isa);
        assert_int_equal(split, HandlesEightBytes(isa));
        for (size_t k = 0; k < 8; ++k) {
          for (const uint8_t *p = out.data() + k * (count + 128); p < planes[k]; ++p) assert_int_equal(*p, kGuard);
          for (size_t i = 0; i < count; ++i) assert_int_equal(planes[k][i], split ? elements[i * 8 + k] : kGuard);
          for (const uint8_t *p = planes[k] + count; p < out.data() + (k + 1) * (count + 128); ++p) {
            assert_int_equal(*p, kGuard);
          }
        }
      }
    }
    uint8_t *none[4] = {};
    assert_false(ckpt::SplitPlanesVector(source.data(), 64, 4, none, isa));  // 2 and 4 bytes: the compiler's loop
  }
}

// JoinBytePlanes (what the codec calls) gives the same bytes through whichever kernel it picks.
static void join_byte_planes_matches_the_definition_for_every_element_size(void **state) {
  (void)state;
  for (size_t element_size : {1, 2, 4, 8}) {
    for (size_t count : {1, 100, 5000}) {
      for (ckpt::JoinStores stores : kStores) {
        std::vector<uint8_t> planes(count * element_size), out(count * element_size);
        for (size_t i = 0; i < planes.size(); ++i) planes[i] = static_cast<uint8_t>(i * 13 + 5);
        const uint8_t *pointers[8];
        for (size_t k = 0; k < element_size; ++k) pointers[k] = planes.data() + k * count;
        ckpt::JoinBytePlanes(pointers, count, element_size, out.data(), stores);
        for (size_t i = 0; i < count; ++i) {
          for (size_t k = 0; k < element_size; ++k) assert_int_equal(out[i * element_size + k], pointers[k][i]);
        }
      }
    }
  }
  assert_int_equal(ckpt::DestinationStores(1u << 20), ckpt::JoinStores::kStreamed);
  assert_int_equal(ckpt::DestinationStores(4096), ckpt::JoinStores::kCached);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(isa_levels_nest_and_best_is_the_highest_that_runs),
      cmocka_unit_test(every_kernel_joins_as_defined_at_any_alignment),
      cmocka_unit_test(the_split_kernel_splits_as_defined_at_any_alignment),
      cmocka_unit_test(join_byte_planes_matches_the_definition_for_every_element_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
