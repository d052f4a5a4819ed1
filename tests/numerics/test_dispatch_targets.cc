// White-box: the known-answer suites on every SIMD target the numerics kernels were compiled for that
// this CPU runs (SSSE3, SSE4, AVX2, AVX3, AVX3_DL and the scalar fallback on an AVX-512 machine), not
// only the best one. Each target is one TAP case; hwy::SetSupportedTargetsForTest restricts dispatch to
// it and the case first checks that the kernels really dispatch there.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {  // cmocka 1.1's header has no C++ guard
#include <cmocka.h>
}

#include <string>
#include <vector>

#include "hwy/targets.h"
#include "known_answers.h"
#include "numerics/scan.h"
#include "numerics/stats.h"
#include "numerics/targets.h"

namespace {

// The internal API behind the C API's signatures, so that the suites run on it unchanged. The suites
// pass valid views only, so no argument checks here.
tw_status InternalScan(tw_scan_result *out, const tw_tensor *t) {
  const tw::numerics::ScanResult r = tw::numerics::Scan(*t);
  out->nan_count = r.nan_count;
  out->pos_inf_count = r.pos_inf_count;
  out->neg_inf_count = r.neg_inf_count;
  out->first_nonfinite_index = r.first_nonfinite_index;
  return TW_OK;
}

tw_status InternalHasNonFinite(int *out, const tw_tensor *t) {
  *out = tw::numerics::HasNonFinite(*t) ? 1 : 0;
  return TW_OK;
}

tw_status InternalStats(tw_numerics_stats *out, const tw_tensor *t) {
  const tw::numerics::TensorStats s = tw::numerics::ComputeStats(*t);
  out->element_count = s.element_count;
  out->finite_count = s.finite_count;
  out->nan_count = s.nonfinite.nan_count;
  out->pos_inf_count = s.nonfinite.pos_inf_count;
  out->neg_inf_count = s.nonfinite.neg_inf_count;
  out->first_nonfinite_index = s.nonfinite.first_nonfinite_index;
  out->min = s.min;
  out->max = s.max;
  out->mean = s.mean;
  return TW_OK;
}

const numerics_api kInternal = {InternalScan, InternalHasNonFinite, InternalStats};

int RestrictToTarget(void **state) {
  const int64_t target = *static_cast<const int64_t *>(*state);
  hwy::SetSupportedTargetsForTest(target);
  return 0;
}

int RestoreAllTargets(void **) {
  hwy::SetSupportedTargetsForTest(0);
  return 0;
}

void KnownAnswersOnTarget(void **state) {
  const int64_t target = *static_cast<const int64_t *>(*state);
  assert_int_equal(tw::numerics::ActiveTarget(), target);  // dispatch really moved to this target
  assert_string_equal(tw::numerics::ActiveTargetName(), hwy::TargetName(target));
  print_message("# known answers on %s\n", hwy::TargetName(target));
  ka_exhaustive_narrow_formats(&kInternal);
  ka_special_values_wide_formats(&kInternal);
  ka_offsets_and_lengths(&kInternal, 64, 520);  // the C API test runs the full 128 x 1024 sweep
  ka_block_boundaries(&kInternal);
  ka_strided_views(&kInternal);
  ka_zero_size_and_scalars(&kInternal);
}

std::vector<int64_t> g_targets;

// The scalar fallback and at least one SIMD target are built and runnable; the default dispatch picks
// the best of them.
void EveryTargetIsBuiltAndTheBestIsTheDefault(void **) {
  assert_true(g_targets.size() >= 2);
  const int64_t fallback = g_targets.back();
  assert_true(fallback == HWY_SCALAR || fallback == HWY_EMU128);
  assert_int_equal(tw::numerics::ActiveTarget(), g_targets.front());
  std::string names;
  for (int64_t target : g_targets) names += std::string(" ") + hwy::TargetName(target);
  print_message("# runnable targets:%s\n", names.c_str());
}

}  // namespace

int main() {
  g_targets = tw::numerics::RunnableTargets();  // before any test restricts them
  std::vector<std::string> names;
  for (int64_t target : g_targets) names.push_back(std::string("known answers on ") + hwy::TargetName(target));

  std::vector<CMUnitTest> tests;
  tests.push_back(CMUnitTest{"every target is built and the best is the default",
                             EveryTargetIsBuiltAndTheBestIsTheDefault, nullptr, nullptr, nullptr});
  for (size_t i = 0; i < g_targets.size(); ++i) {
    tests.push_back(
        CMUnitTest{names[i].c_str(), KnownAnswersOnTarget, RestrictToTarget, RestoreAllTargets, &g_targets[i]});
  }
  return _cmocka_run_group_tests("numerics dispatch targets", tests.data(), tests.size(), nullptr, nullptr);
}
