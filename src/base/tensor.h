// Dtype facts and checks of caller-supplied tensor views.
#ifndef TRAINWATCH_BASE_TENSOR_H
#define TRAINWATCH_BASE_TENSOR_H

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "trainwatch/common.h"

namespace tw {

size_t DtypeSize(int32_t dtype);       // 0 if not a tw_dtype
const char *DtypeName(int32_t dtype);  // "invalid" if not a tw_dtype
bool IsFloatDtype(int32_t dtype);

// Reads a caller's view into *view, a whole tw_tensor of this library (members past the caller's
// struct_size are 0 / NULL; see base/versioned.h), and checks it for use: known dtype, ndim >= 0,
// shape present with non-negative extents, element count without overflow, data non-NULL when there
// are elements, device_type and device_id non-negative, a device view contiguous. `what` names the argument in the
// message ("feeds[2]", "variable 'w'"). Code after it uses *view, never the caller's struct.
//
// A view of device memory (IsOnDevice) is refused with TW_INVALID_ARGUMENT naming it unless `place` is
// kHostOrDevice: only the functions that read device views through src/device accept them (the list is
// in trainwatch/device.h), so no other path can read device memory by mistake.
enum class Place { kHost, kHostOrDevice };
Status ReadTensor(const tw_tensor *t, const std::string &what, tw_tensor *view, Place place = Place::kHost);

// True for a view of device memory (trainwatch/device.h), which this library never reads itself:
// device_type other than 0, TW_DEVICE_CPU and TW_DEVICE_CUDA_HOST. ReadTensor accepts one only when
// it is contiguous; every reader of its data goes through src/device. IsDeviceType is the same rule
// for a tw_tensor.device_type alone (a table's type, a kept view's).
bool IsOnDevice(const tw_tensor &t);
bool IsDeviceType(int32_t device_type);

// Element count of a view ReadTensor accepted.
int64_t ElementCount(const tw_tensor &t);

// True when strides are NULL or equal to row-major strides, or the tensor has no element.
bool IsContiguous(const tw_tensor &t);

// An owned copy of a view's metadata (name, shape, strides); the data pointer stays borrowed.
// view() hands out a tw_tensor whose pointers point into this object.
class TensorRef {
 public:
  TensorRef() = default;
  TensorRef(const tw_tensor &t, std::string name);

  // Re-points this object at another view, reusing its storage (no allocation once warm).
  void Assign(const tw_tensor &t, const char *name);

  const std::string &name() const { return name_; }
  int32_t dtype() const { return dtype_; }
  void *data() const { return data_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t element_count() const;
  size_t byte_size() const { return static_cast<size_t>(element_count()) * DtypeSize(dtype_); }
  void set_data(void *data) { data_ = data; }
  int32_t device_type() const { return device_type_; }
  int32_t device_id() const { return device_id_; }
  bool on_device() const;

  // Fills *out (whose struct_size the caller set, at least TW_TENSOR_SIZE_V1) with this view, writing
  // at most struct_size bytes: a caller of the first version does not see device_type / device_id, so
  // what hands a view out to the caller uses WriteTo.
  void FillView(tw_tensor *out) const;
  // FillView for a view handed to the caller: fails when this is a device view and *out is of the
  // first version (CheckOutPlace).
  Status WriteTo(tw_tensor *out) const;

 private:
  std::string name_;
  int32_t dtype_ = TW_DTYPE_INVALID;
  void *data_ = nullptr;
  int32_t device_type_ = TW_DEVICE_HOST;
  int32_t device_id_ = 0;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  bool has_strides_ = false;
};

// Copies the elements of a (possibly strided) host view into `dst`, row-major and packed. Never for a
// device view (IsOnDevice): device memory is read through src/device only.
void CopyToContiguous(const tw_tensor &t, void *dst);

// A list whose elements are kept when it is cleared, so refilling it every run reuses their memory.
template <typename T>
class ReusableList {
 public:
  T &Append() {
    if (size_ == items_.size()) items_.emplace_back();
    return items_[size_++];
  }
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &operator[](size_t i) { return items_[i]; }
  const T &operator[](size_t i) const { return items_[i]; }
  const T *begin() const { return items_.data(); }
  const T *end() const { return items_.data() + size_; }

 private:
  std::vector<T> items_;
  size_t size_ = 0;
};

// Checks that `out` is a writable view slot: non-NULL with struct_size of at least TW_TENSOR_SIZE_V1.
Status CheckOutTensor(const tw_tensor *out, const char *what);

// A device view (device_type) cannot be handed to a caller whose *out is of the first version, which
// has no member to say where the memory lives (V6): TW_FAILED_PRECONDITION naming the view.
Status CheckOutPlace(const tw_tensor *out, int32_t device_type, const char *name);
// CheckOutPlace, then WriteVersioned(view, out).
Status WriteView(const tw_tensor &view, tw_tensor *out);

}  // namespace tw

#endif  // TRAINWATCH_BASE_TENSOR_H
