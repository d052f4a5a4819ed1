#include "numerics/scan.h"

#include "base/tensor.h"
#include "numerics/kernels.h"
#include "numerics/tensor_runs.h"

namespace tw {
namespace numerics {

ScanResult Scan(const tw_tensor &t) {
  ScanResult result;
  if (!IsFloatDtype(t.dtype)) return result;
  ForEachRun(t, [&](const void *data, size_t count, int64_t first_index) {
    RunCountNonFinite(t.dtype, data, count, first_index, &result);
    return true;
  });
  return result;
}

bool HasNonFinite(const tw_tensor &t) {
  if (!IsFloatDtype(t.dtype)) return false;
  bool found = false;
  ForEachRun(t, [&](const void *data, size_t count, int64_t) {
    found = RunHasNonFinite(t.dtype, data, count);
    return !found;
  });
  return found;
}

}  // namespace numerics
}  // namespace tw
