#include "base/tensor_copy.h"

namespace tw {

void TensorCopy::Assign(const tw_tensor &t, const char *name) {
  bytes_.resize(static_cast<size_t>(ElementCount(t)) * DtypeSize(t.dtype));
  CopyToContiguous(t, bytes_.data());
  tw_tensor packed = t;
  packed.strides = nullptr;
  packed.data = bytes_.data();
  ref_.Assign(packed, name);
}

}  // namespace tw
