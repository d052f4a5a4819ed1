// Tensors as text for log lines, the way numpy prints them ("0.5", "[[1. 2.] [3. 4.]]", "True"), on one
// line; a large tensor as a summary of its numerics instead of its elements.
#ifndef TRAINWATCH_SUMMARY_TENSOR_TEXT_H
#define TRAINWATCH_SUMMARY_TENSOR_TEXT_H

#include <cstdint>
#include <string>

#include "trainwatch/common.h"

namespace tw {
namespace summary {

// Appends the text of a view that ReadTensor accepted (any dtype, shape and strides) to *out.
// - Floats print as the shortest decimal that reads back as the same value of their own dtype, as
//   Python's repr does ("0.1", "1e-05", "inf", "nan"); scalars end integral values in ".0", array
//   elements in "." (numpy's "[1. 2.5]").
// - Arrays print in nested brackets, elements separated by spaces: "[[1 2] [3 4]]"; bools as True/False.
// - A view of more than `max_elements` elements prints as
//   "<float32 (1000, 10) min=-1.5 max=2 mean=0.25 nan=0 +inf=0 -inf=0>" (finite min/max/mean).
void AppendTensorText(const tw_tensor &t, int64_t max_elements, std::string *out);

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_TENSOR_TEXT_H
