#include "numerics/check_numerics.h"

#include "numerics/scan.h"

namespace tw {
namespace numerics {

Status CheckNumerics(const tw_tensor &t, const std::string &message) {
  // One pass either way: the all-finite case costs what HasNonFinite would, and a bad tensor needs the
  // counts to tell NaN from Inf. A device view is counted on its device (V2).
  ScanResult scan;
  TW_RETURN_IF_ERROR(ScanAny(t, &scan));
  if (scan.all_finite()) return Status();
  const bool nan = scan.nan_count > 0;
  const bool inf = scan.inf_count() > 0;
  const char *what = nan && inf ? "Inf and NaN" : inf ? "Inf" : "NaN";
  return Status(TW_INVALID_ARGUMENT, message + " : Tensor had " + what + " values");
}

}  // namespace numerics
}  // namespace tw
