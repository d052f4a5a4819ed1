// NaN / ±Inf scanning of tensor views: the counts, the first bad index, and a fast early-exit test.
//
// The internal C++ API under tw_scan / tw_has_nonfinite; NanTensorHook and the session's
// check_numerics option call it directly. Every function takes a view that tw::ReadTensor accepted
// (any dtype, contiguous or strided with element strides of any sign, zero-size allowed) and is
// reentrant: nothing is shared between calls.
#ifndef TRAINWATCH_NUMERICS_SCAN_H
#define TRAINWATCH_NUMERICS_SCAN_H

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "trainwatch/common.h"

namespace tw {
namespace numerics {

struct ScanResult {
  int64_t nan_count = 0;
  int64_t pos_inf_count = 0;
  int64_t neg_inf_count = 0;
  // Row-major index (over the view's shape, whatever its strides) of the first NaN or ±Inf; -1 if none.
  int64_t first_nonfinite_index = -1;

  bool all_finite() const { return first_nonfinite_index < 0; }
  int64_t inf_count() const { return pos_inf_count + neg_inf_count; }
};

// Counts every non-finite element. Integer and bool views are finite by construction: no data is read.
ScanResult Scan(const tw_tensor &t);

// True as soon as one NaN or ±Inf is found; reads everything only when all elements are finite.
bool HasNonFinite(const tw_tensor &t);

// Scan of a view wherever it lives: host memory → Scan; a device view (V2) → one count_nonfinite of
// the registered table (device/transfer.h), 40 bytes crossing to the host. Fails only for a device
// view: no device registered for it, or an operation failed (the message names it and the tensor).
Status ScanAny(const tw_tensor &t, ScanResult *out);

// ScanAny of many views: the host ones scanned here, all device ones counted with one count_nonfinite
// call per device (V3). out->at(i) belongs to views[i].
Status ScanAll(const std::vector<tw_tensor> &views, std::vector<ScanResult> *out);

}  // namespace numerics
}  // namespace tw

#endif  // TRAINWATCH_NUMERICS_SCAN_H
