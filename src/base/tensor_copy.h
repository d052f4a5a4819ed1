// A tensor that owns its elements: a value kept past the run that produced it (LoggingTensorHook's
// at_end values, FinalOpsHook's results, FinalOpsHook's feeds).
#ifndef TRAINWATCH_BASE_TENSOR_COPY_H
#define TRAINWATCH_BASE_TENSOR_COPY_H

#include <string>
#include <vector>

#include "base/tensor.h"

namespace tw {

class TensorCopy {
 public:
  // Copies the elements of `t` (a view ReadTensor accepted; strides honoured) into this object,
  // row-major and packed, under `name`. Reuses the storage when it is large enough.
  void Assign(const tw_tensor &t, const char *name);

  const std::string &name() const { return ref_.name(); }
  // The copy as a view; its pointers point into this object.
  const TensorRef &ref() const { return ref_; }
  void FillView(tw_tensor *out) const { ref_.FillView(out); }

 private:
  TensorRef ref_;
  std::vector<unsigned char> bytes_;
};

}  // namespace tw

#endif  // TRAINWATCH_BASE_TENSOR_COPY_H
