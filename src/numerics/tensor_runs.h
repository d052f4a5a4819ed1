// A tensor view as a sequence of contiguous runs, in row-major order: what lets every kernel be written
// for one contiguous array and still accept any strides.
#ifndef TRAINWATCH_NUMERICS_TENSOR_RUNS_H
#define TRAINWATCH_NUMERICS_TENSOR_RUNS_H

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "trainwatch/common.h"

namespace tw {
namespace numerics {

// Receives `count` contiguous elements whose first has row-major index `first_index`; returns false
// to stop the walk.
using RunVisitor = bool (*)(void *context, const void *data, size_t count, int64_t first_index);

// Calls `visit` on runs covering every element of a view that tw::ReadTensor accepted, in row-major
// order, and returns false if a visit stopped the walk. A contiguous view is one run. Otherwise
// dimensions that are laid out as one are merged; rows of stride 1 long enough to be worth a kernel
// call are passed in place, and everything else (short rows, strides other than 1, including negative
// and zero) is gathered into a scratch buffer of a few KiB on the stack, so runs stay long.
bool ForEachRun(const tw_tensor &t, RunVisitor visit, void *context);

// The same with any callable `bool(const void *data, size_t count, int64_t first_index)`.
template <class Visit>
bool ForEachRun(const tw_tensor &t, Visit &&visit) {
  using VisitType = std::remove_reference_t<Visit>;
  return ForEachRun(
      t,
      [](void *context, const void *data, size_t count, int64_t first_index) {
        return (*static_cast<VisitType *>(context))(data, count, first_index);
      },
      static_cast<void *>(&visit));
}

}  // namespace numerics
}  // namespace tw

#endif  // TRAINWATCH_NUMERICS_TENSOR_RUNS_H
