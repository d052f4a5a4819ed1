#include "numerics/tensor_runs.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/tensor.h"

namespace tw {
namespace numerics {
namespace {

// Rows of stride 1 at least this long are handed to the kernel in place; shorter ones are gathered,
// because a kernel call per short row would cost more than copying it.
constexpr size_t kDirectRowBytes = 512;
constexpr size_t kScratchBytes = 16384;

struct Dim {
  int64_t extent;
  int64_t stride;  // elements
};

// The view's dimensions without extent-1 ones, neighbours merged where the outer stride is the inner
// stride times the inner extent. Outermost first; empty for a single element.
std::vector<Dim> CoalescedDims(const tw_tensor &t) {
  std::vector<Dim> dims;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] == 1) continue;
    const Dim dim{t.shape[i], t.strides[i]};
    if (!dims.empty() && dims.back().stride == dim.stride * dim.extent) {
      dims.back() = Dim{dims.back().extent * dim.extent, dim.stride};
    } else {
      dims.push_back(dim);
    }
  }
  return dims;
}

// Appends elements to a scratch buffer and hands it to the visitor whenever it fills up.
class Gatherer {
 public:
  Gatherer(size_t element_size, RunVisitor visit, void *context)
      : element_size_(element_size), capacity_(kScratchBytes / element_size), visit_(visit), context_(context) {}

  // Appends the `count` elements `stride` apart from base[offset] (offsets and strides in elements),
  // whose first has row-major index `index`; false if the visitor stopped the walk.
  bool Append(const unsigned char *base, int64_t offset, int64_t stride, int64_t count, int64_t index) {
    while (count > 0) {
      if (size_ == 0) first_index_ = index;
      const int64_t n = std::min<int64_t>(count, static_cast<int64_t>(capacity_ - size_));
      const unsigned char *src = base + offset * static_cast<int64_t>(element_size_);
      unsigned char *dst = scratch_ + size_ * element_size_;
      if (stride == 1) {
        std::memcpy(dst, src, static_cast<size_t>(n) * element_size_);
      } else {
        Copy(dst, src, stride, n);
      }
      size_ += static_cast<size_t>(n);
      count -= n;
      index += n;
      offset += n * stride;
      if (size_ == capacity_ && !Flush()) return false;
    }
    return true;
  }

  bool Flush() {
    if (size_ == 0) return true;
    const size_t size = size_;
    size_ = 0;
    return visit_(context_, scratch_, size, first_index_);
  }

 private:
  template <size_t kSize>
  static void CopyStrided(unsigned char *dst, const unsigned char *src, int64_t stride, int64_t count) {
    for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * kSize, src + i * stride * kSize, kSize);
  }

  void Copy(unsigned char *dst, const unsigned char *src, int64_t stride, int64_t count) const {
    switch (element_size_) {  // fixed-size copies compile to single moves
      case 1: return CopyStrided<1>(dst, src, stride, count);
      case 2: return CopyStrided<2>(dst, src, stride, count);
      case 4: return CopyStrided<4>(dst, src, stride, count);
      default: return CopyStrided<8>(dst, src, stride, count);
    }
  }

  alignas(64) unsigned char scratch_[kScratchBytes];
  size_t size_ = 0;
  int64_t first_index_ = 0;
  const size_t element_size_;
  const size_t capacity_;
  RunVisitor visit_;
  void *context_;
};

}  // namespace

bool ForEachRun(const tw_tensor &t, RunVisitor visit, void *context) {
  const int64_t count = ElementCount(t);
  if (count == 0) return true;
  if (IsContiguous(t)) return visit(context, t.data, static_cast<size_t>(count), 0);

  const std::vector<Dim> dims = CoalescedDims(t);
  if (dims.empty()) return visit(context, t.data, 1, 0);
  const size_t element_size = DtypeSize(t.dtype);
  const Dim row = dims.back();
  const size_t outer_dims = dims.size() - 1;
  const bool rows_in_place = row.stride == 1 && static_cast<size_t>(row.extent) * element_size >= kDirectRowBytes;

  // An odometer over the outer dimensions; `offset` is the current row's first element, in elements
  // from t.data (negative strides make it negative).
  std::vector<int64_t> position(outer_dims, 0);
  int64_t offset = 0;
  const auto *base = static_cast<const unsigned char *>(t.data);
  Gatherer gatherer(element_size, visit, context);
  for (int64_t index = 0; index < count; index += row.extent) {
    if (rows_in_place) {
      const unsigned char *row_data = base + offset * static_cast<int64_t>(element_size);
      if (!visit(context, row_data, static_cast<size_t>(row.extent), index)) return false;
    } else if (!gatherer.Append(base, offset, row.stride, row.extent, index)) {
      return false;
    }
    for (size_t d = outer_dims; d-- > 0;) {
      offset += dims[d].stride;
      if (++position[d] < dims[d].extent) break;
      offset -= dims[d].stride * dims[d].extent;
      position[d] = 0;
    }
  }
  return gatherer.Flush();
}

}  // namespace numerics
}  // namespace tw
