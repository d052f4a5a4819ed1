// Reads the elements of a tensor view of any dtype as doubles, in order, whatever its strides.
#ifndef TRAINWATCH_SUMMARY_TENSOR_VALUES_H
#define TRAINWATCH_SUMMARY_TENSOR_VALUES_H

#include <cstddef>
#include <cstdint>
#include <functional>

#include "trainwatch/common.h"

namespace tw {
namespace summary {

// One element of `dtype` at `p` as a double: floats widen exactly (f16, bf16 and both fp8 formats
// included, with their NaNs and infinities), integers convert, bool is 0 or 1.
double ElementAsDouble(int32_t dtype, const void *p);

// Calls visit(values, count) on consecutive chunks of the view's elements in row-major order, each
// converted with ElementAsDouble. Strides (in elements, possibly negative) are honoured. The view
// must have passed ReadTensor.
void VisitAsDoubles(const tw_tensor &t, const std::function<void(const double *, size_t)> &visit);

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_TENSOR_VALUES_H
