#include "base/tensor.h"

#include <cstring>
#include <limits>

#include "base/versioned.h"

namespace tw {
namespace {

struct DtypeInfo {
  const char *name;
  size_t size;
  bool is_float;
};

// Indexed by tw_dtype value.
constexpr DtypeInfo kDtypes[] = {
    {"invalid", 0, false}, {"bool", 1, false},   {"int8", 1, false},         {"int16", 2, false},
    {"int32", 4, false},   {"int64", 8, false},  {"uint8", 1, false},        {"uint16", 2, false},
    {"uint32", 4, false},  {"uint64", 8, false}, {"float16", 2, true},       {"bfloat16", 2, true},
    {"float32", 4, true},  {"float64", 8, true}, {"float8_e4m3fn", 1, true}, {"float8_e5m2", 1, true},
};
constexpr int32_t kDtypeCount = static_cast<int32_t>(sizeof(kDtypes) / sizeof(kDtypes[0]));

const DtypeInfo &Info(int32_t dtype) { return (dtype > 0 && dtype < kDtypeCount) ? kDtypes[dtype] : kDtypes[0]; }

// Strided walks compute offsets as Σ index × stride × element size in int64: the farthest element,
// Σ |stride| × (extent − 1) × element size, must fit. For a view with elements (no zero extent).
Status CheckStrideSpan(const tw_tensor &t, const std::string &what) {
  int64_t span = 0;
  for (int32_t i = 0; i < t.ndim; ++i) {
    const int64_t stride = t.strides[i];
    int64_t reach;
    if (stride == std::numeric_limits<int64_t>::min() ||
        __builtin_mul_overflow(stride < 0 ? -stride : stride, t.shape[i] - 1, &reach) ||
        __builtin_add_overflow(span, reach, &span)) {
      return Errorf(TW_INVALID_ARGUMENT, "%s has stride %lld x extent %lld in dimension %d: offsets overflow int64",
                    what.c_str(), static_cast<long long>(stride), static_cast<long long>(t.shape[i]), i);
    }
  }
  if (__builtin_mul_overflow(span, static_cast<int64_t>(Info(t.dtype).size), &span)) {
    return Errorf(TW_INVALID_ARGUMENT, "%s has strides whose byte offsets overflow int64", what.c_str());
  }
  return Status();
}

// Where the memory lives (tw_tensor's second version): a known-looking place, and a device view
// contiguous, since a device's copies and counts take one flat range per tensor.
Status CheckPlace(const tw_tensor &t, const std::string &what, Place place) {
  if (t.device_type < 0) {
    return Errorf(TW_INVALID_ARGUMENT, "%s has negative device_type %d", what.c_str(), t.device_type);
  }
  if (t.device_id < 0) return Errorf(TW_INVALID_ARGUMENT, "%s has negative device_id %d", what.c_str(), t.device_id);
  if (IsOnDevice(t) && place == Place::kHost) {
    return Errorf(TW_INVALID_ARGUMENT,
                  "%s is a view of device memory (device_type %d, device_id %d), which this function does not "
                  "read: it takes host memory only (trainwatch/device.h lists the functions that take device views)",
                  what.c_str(), t.device_type, t.device_id);
  }
  if (IsOnDevice(t) && !IsContiguous(t)) {
    return Errorf(TW_INVALID_ARGUMENT,
                  "%s is a strided view of device memory (device_type %d): device views must be contiguous "
                  "(strides NULL or row-major)",
                  what.c_str(), t.device_type);
  }
  return Status();
}

}  // namespace

bool IsDeviceType(int32_t device_type) {
  return device_type != TW_DEVICE_HOST && device_type != TW_DEVICE_CPU && device_type != TW_DEVICE_CUDA_HOST;
}

bool IsOnDevice(const tw_tensor &t) { return IsDeviceType(t.device_type); }

size_t DtypeSize(int32_t dtype) { return Info(dtype).size; }
const char *DtypeName(int32_t dtype) { return Info(dtype).name; }
bool IsFloatDtype(int32_t dtype) { return Info(dtype).is_float; }

Status ReadTensor(const tw_tensor *in, const std::string &what, tw_tensor *view, Place place) {
  tw_tensor copy = TW_TENSOR_INIT;
  TW_RETURN_IF_ERROR(ReadVersioned(in, what, &copy));
  const tw_tensor *t = &copy;
  if (DtypeSize(t->dtype) == 0) {
    return Errorf(TW_INVALID_ARGUMENT, "%s has invalid dtype %d", what.c_str(), t->dtype);
  }
  if (t->ndim < 0) return Errorf(TW_INVALID_ARGUMENT, "%s has negative ndim %d", what.c_str(), t->ndim);
  if (t->ndim > TW_MAX_RANK) {
    return Errorf(TW_INVALID_ARGUMENT, "%s has ndim %d, more than TW_MAX_RANK (%d)", what.c_str(), t->ndim,
                  TW_MAX_RANK);
  }
  if (t->ndim > 0 && t->shape == nullptr) {
    return Errorf(TW_INVALID_ARGUMENT, "%s has ndim %d but shape is NULL", what.c_str(), t->ndim);
  }
  int64_t count = 1;
  for (int32_t i = 0; i < t->ndim; ++i) {
    const int64_t extent = t->shape[i];
    if (extent < 0) {
      return Errorf(TW_INVALID_ARGUMENT, "%s has negative extent %lld in dimension %d", what.c_str(),
                    static_cast<long long>(extent), i);
    }
    if (extent != 0 && count > std::numeric_limits<int64_t>::max() / extent) {
      return Errorf(TW_INVALID_ARGUMENT, "%s has more elements than fit in int64", what.c_str());
    }
    count *= extent;
  }
  if (count > 0 &&
      static_cast<uint64_t>(count) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / DtypeSize(t->dtype)) {
    return Errorf(TW_INVALID_ARGUMENT, "%s is larger than the address space", what.c_str());
  }
  if (count > 0 && t->strides != nullptr) TW_RETURN_IF_ERROR(CheckStrideSpan(*t, what));
  TW_RETURN_IF_ERROR(CheckPlace(*t, what, place));
  if (count > 0 && t->data == nullptr) {
    return Errorf(TW_INVALID_ARGUMENT, "%s has %lld elements but data is NULL", what.c_str(),
                  static_cast<long long>(count));
  }
  *view = copy;
  return Status();
}

int64_t ElementCount(const tw_tensor &t) {
  int64_t count = 1;
  for (int32_t i = 0; i < t.ndim; ++i) count *= t.shape[i];
  return count;
}

bool IsContiguous(const tw_tensor &t) {
  if (t.strides == nullptr || ElementCount(t) == 0) return true;  // no element: any strides will do
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

TensorRef::TensorRef(const tw_tensor &t, std::string name)
    : name_(std::move(name)),
      dtype_(t.dtype),
      data_(t.data),
      device_type_(t.device_type),
      device_id_(t.device_id),
      shape_(t.shape, t.shape + t.ndim),
      has_strides_(t.strides != nullptr) {
  if (has_strides_) strides_.assign(t.strides, t.strides + t.ndim);
}

void TensorRef::Assign(const tw_tensor &t, const char *name) {
  name_.assign(name);
  dtype_ = t.dtype;
  data_ = t.data;
  device_type_ = t.device_type;
  device_id_ = t.device_id;
  shape_.assign(t.shape, t.shape + t.ndim);
  has_strides_ = t.strides != nullptr;
  if (has_strides_) {
    strides_.assign(t.strides, t.strides + t.ndim);
  } else {
    strides_.clear();
  }
}

bool TensorRef::on_device() const { return IsDeviceType(device_type_); }

int64_t TensorRef::element_count() const {
  int64_t count = 1;
  for (int64_t extent : shape_) count *= extent;
  return count;
}

void TensorRef::FillView(tw_tensor *out) const {
  tw_tensor view = TW_TENSOR_INIT;
  view.dtype = dtype_;
  view.name = name_.c_str();
  view.data = data_;
  view.ndim = static_cast<int32_t>(shape_.size());
  view.shape = shape_.empty() ? nullptr : shape_.data();
  view.strides = has_strides_ ? strides_.data() : nullptr;
  view.device_type = device_type_;
  view.device_id = device_id_;
  WriteVersioned(view, out);
}

void CopyToContiguous(const tw_tensor &t, void *dst) {
  const size_t item = DtypeSize(t.dtype);
  const int64_t count = ElementCount(t);
  if (count == 0) return;
  if (IsContiguous(t)) {
    std::memcpy(dst, t.data, static_cast<size_t>(count) * item);
    return;
  }
  // Walk the index space in row-major order, odometer style.
  std::vector<int64_t> index(static_cast<size_t>(t.ndim), 0);
  unsigned char *out = static_cast<unsigned char *>(dst);
  const unsigned char *base = static_cast<const unsigned char *>(t.data);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int32_t d = 0; d < t.ndim; ++d) offset += index[d] * t.strides[d];
    std::memcpy(out + static_cast<size_t>(n) * item, base + offset * static_cast<int64_t>(item), item);
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      if (++index[d] < t.shape[d]) break;
      index[d] = 0;
    }
  }
}

Status CheckOutTensor(const tw_tensor *out, const char *what) { return CheckOutVersioned(out, what); }

Status CheckOutPlace(const tw_tensor *out, int32_t device_type, const char *name) {
  if (!IsDeviceType(device_type) || out->struct_size >= TW_TENSOR_SIZE_V2) return Status();
  return Errorf(TW_FAILED_PRECONDITION,
                "'%s' is a view of device memory (device_type %d), which the caller's tw_tensor of the first "
                "version (struct_size %u) cannot say: rebuild the program with this library's headers",
                name != nullptr ? name : "", device_type, out->struct_size);
}

Status WriteView(const tw_tensor &view, tw_tensor *out) {
  TW_RETURN_IF_ERROR(CheckOutPlace(out, view.device_type, view.name));
  WriteVersioned(view, out);
  return Status();
}

Status TensorRef::WriteTo(tw_tensor *out) const {
  TW_RETURN_IF_ERROR(CheckOutPlace(out, device_type_, name_.c_str()));
  FillView(out);
  return Status();
}

}  // namespace tw
