// Reading and writing the public versioned structs (include/trainwatch/common.h, "Versioned structs"):
// the one place that honours the caller's struct_size, so that programs built against older or newer
// headers work with this library.
#ifndef TRAINWATCH_BASE_VERSIONED_H
#define TRAINWATCH_BASE_VERSIONED_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/status.h"
#include "trainwatch.h"

namespace tw {

// Per struct: its name in messages, its frozen first size and the initialiser the message points to.
template <typename T>
struct Versioned;
#define TW_VERSIONED_(type, size_v1, init)      \
  template <>                                   \
  struct Versioned<type> {                      \
    static constexpr const char *kName = #type; \
    static constexpr size_t kSizeV1 = size_v1;  \
    static constexpr const char *kInit = #init; \
  }
TW_VERSIONED_(tw_tensor, TW_TENSOR_SIZE_V1, TW_TENSOR_INIT);
TW_VERSIONED_(tw_hook_callbacks, TW_HOOK_CALLBACKS_SIZE_V1, TW_HOOK_CALLBACKS_INIT);
TW_VERSIONED_(tw_checkpoint_listener_callbacks, TW_CHECKPOINT_LISTENER_CALLBACKS_SIZE_V1,
              TW_CHECKPOINT_LISTENER_CALLBACKS_INIT);
TW_VERSIONED_(tw_scan_result, TW_SCAN_RESULT_SIZE_V1, TW_SCAN_RESULT_INIT);
TW_VERSIONED_(tw_numerics_stats, TW_NUMERICS_STATS_SIZE_V1, TW_NUMERICS_STATS_INIT);
TW_VERSIONED_(tw_event, TW_EVENT_SIZE_V1, TW_EVENT_INIT);
TW_VERSIONED_(tw_collective, TW_COLLECTIVE_SIZE_V1, TW_COLLECTIVE_INIT);
TW_VERSIONED_(tw_device, TW_DEVICE_SIZE_V1, TW_DEVICE_INIT);
TW_VERSIONED_(tw_option_info, TW_OPTION_INFO_SIZE_V1, TW_OPTION_INFO_INIT);
#undef TW_VERSIONED_

// How much larger than this library's struct a caller's may be (a newer header's members): the
// bytes past this library's members are read to check that they are zero, so a struct_size that no
// real sizeof can be (a garbage or huge value) must be refused before any of them is read.
constexpr size_t kMaxStructGrowth = 1024;

// The caller's struct_size is at least the first version's and at most this library's sizeof plus
// kMaxStructGrowth.
template <typename T>
Status CheckStructSize(uint32_t struct_size, const std::string &what) {
  if (struct_size < Versioned<T>::kSizeV1) {
    return Errorf(TW_INVALID_ARGUMENT,
                  "%s has struct_size %u, smaller than the first version of %s (%zu): set it with %s", what.c_str(),
                  struct_size, Versioned<T>::kName, Versioned<T>::kSizeV1, Versioned<T>::kInit);
  }
  if (struct_size > sizeof(T) + kMaxStructGrowth) {
    return Errorf(TW_INVALID_ARGUMENT,
                  "%s has struct_size %u, more than %zu bytes past this library's %s of %zu bytes: no version "
                  "grows that much, so it is not the caller's sizeof (set it with %s)",
                  what.c_str(), struct_size, kMaxStructGrowth, Versioned<T>::kName, sizeof(T), Versioned<T>::kInit);
  }
  return Status();
}

// Copies the caller's struct at `in` into *out, a whole struct of this library: the members the
// caller's size covers, the others left as *out holds them (its defaults). Fails for a size below the
// first version or beyond CheckStructSize's bound (nothing past this library's members is read), and
// for a larger struct that sets a byte past this library's members.
template <typename T>
Status ReadVersioned(const T *in, const std::string &what, T *out) {
  if (in == nullptr) return Errorf(TW_INVALID_ARGUMENT, "%s is NULL", what.c_str());
  const uint32_t size = in->struct_size;
  TW_RETURN_IF_ERROR(CheckStructSize<T>(size, what));
  if (size > sizeof(T)) {
    const unsigned char *extra = reinterpret_cast<const unsigned char *>(in) + sizeof(T);
    for (size_t i = 0; i < size - sizeof(T); ++i) {
      if (extra[i] != 0) {
        return Errorf(TW_INVALID_ARGUMENT,
                      "%s has struct_size %u and sets members this library (%s, %s of %zu bytes) does not "
                      "know: the program needs a newer trainwatch",
                      what.c_str(), size, TW_VERSION_STRING, Versioned<T>::kName, sizeof(T));
      }
    }
  }
  std::memcpy(static_cast<void *>(out), in, size < sizeof(T) ? size : sizeof(T));
  out->struct_size = sizeof(T);
  return Status();
}

// A caller's out-struct: non-NULL, with a struct_size of at least the first version's.
template <typename T>
Status CheckOutVersioned(const T *out, const char *what) {
  if (out == nullptr) return Errorf(TW_INVALID_ARGUMENT, "%s is NULL", what);
  return CheckStructSize<T>(out->struct_size, what);
}

// Writes `value` into the caller's out-struct (CheckOutVersioned passed): at most its struct_size
// bytes; struct_size and the members past this library's are left as the caller set them.
template <typename T>
void WriteVersioned(const T &value, T *out) {
  const uint32_t size = out->struct_size;
  std::memcpy(static_cast<void *>(out), &value, size < sizeof(T) ? size : sizeof(T));
  out->struct_size = size;
}

// A caller's array of versioned structs, stepped through by its elements' struct_size (the caller's
// sizeof). data() is the caller's memory when its elements are this library's structs, else copies.
template <typename T>
class VersionedArray {
 public:
  Status Read(const T *array, size_t count, const char *what) {
    data_ = array;
    copies_.clear();
    if (count == 0) return Status();
    if (array == nullptr) return Errorf(TW_INVALID_ARGUMENT, "%s is NULL but its count is %zu", what, count);
    const uint32_t stride = array[0].struct_size;
    TW_RETURN_IF_ERROR(CheckStructSize<T>(stride, std::string(what) + "[0]"));
    if (stride != sizeof(T)) copies_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      const T *element = reinterpret_cast<const T *>(reinterpret_cast<const unsigned char *>(array) + i * stride);
      if (element->struct_size != stride) {
        return Errorf(TW_INVALID_ARGUMENT,
                      "%s[%zu] has struct_size %u but %s[0] has %u: the elements of an array share the caller's sizeof",
                      what, i, element->struct_size, what, stride);
      }
      if (stride != sizeof(T)) {
        TW_RETURN_IF_ERROR(ReadVersioned(element, std::string(what) + "[" + std::to_string(i) + "]", &copies_[i]));
      }
    }
    if (stride != sizeof(T)) data_ = copies_.data();
    return Status();
  }
  const T *data() const { return data_; }

 private:
  const T *data_ = nullptr;
  std::vector<T> copies_;  // value-initialised: members past the caller's size are 0 / NULL
};

}  // namespace tw

#endif  // TRAINWATCH_BASE_VERSIONED_H
