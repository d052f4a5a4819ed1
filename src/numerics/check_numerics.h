// check_numerics: TF's CheckNumerics op as a status, for the session's check_numerics option and the
// NaN hooks.
#ifndef TRAINWATCH_NUMERICS_CHECK_NUMERICS_H
#define TRAINWATCH_NUMERICS_CHECK_NUMERICS_H

#include <string>

#include "base/status.h"
#include "trainwatch/common.h"

namespace tw {
namespace numerics {

// OK if every element of the view (which tw::ReadTensor accepted; host or device memory) is finite.
// A device view whose count fails gets that failure (device/transfer.h). Otherwise
// TW_INVALID_ARGUMENT (TF raises InvalidArgumentError) with TF's exact text:
//   "<message> : Tensor had NaN values" / "… Inf values" / "… Inf and NaN values".
Status CheckNumerics(const tw_tensor &t, const std::string &message);

}  // namespace numerics
}  // namespace tw

#endif  // TRAINWATCH_NUMERICS_CHECK_NUMERICS_H
