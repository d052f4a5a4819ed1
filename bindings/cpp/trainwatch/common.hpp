// trainwatch/common.hpp — part of the C++ facade (bindings/cpp/trainwatch.hpp, whose comment gives its
// rules): errors, versions and logging, tensors: what every other part uses (trainwatch/common.h).
#ifndef TRAINWATCH_HPP_COMMON_HPP
#define TRAINWATCH_HPP_COMMON_HPP

// Subclassing built-in hooks and the bindings' collectives are built on the experimental C API
// (trainwatch/common.h, "Experimental API"): those classes move when it does.
#ifndef TW_EXPERIMENTAL_API
#define TW_EXPERIMENTAL_API
#endif
#include <trainwatch.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef SWIG
#define TW_HPP_NORETURN
#else
#define TW_HPP_NORETURN [[noreturn]]
#endif

namespace trainwatch {

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

// A failing tw_status with its message.
class Error : public std::runtime_error {
 public:
  Error(tw_status code, const std::string &message) : std::runtime_error(message), code_(code) {}
  tw_status code() const noexcept { return code_; }

 private:
  tw_status code_;
};

namespace detail {

// The exception a callback threw during the innermost C call running on this thread.
inline std::exception_ptr &pending_exception() noexcept {
  thread_local std::exception_ptr pending;
  return pending;
}

// Runs one C call. When it fails, rethrows what a callback threw during it (the cause), or throws
// Error with the thread's message. Exceptions absorbed by the library (a recovered TW_ABORTED) are
// dropped. Nesting-safe: a C call made from inside a callback keeps its own slot.
template <typename CCall>
void call(CCall &&c_call) {
  std::exception_ptr outer = std::exchange(pending_exception(), nullptr);
  const tw_status status = c_call();
  std::exception_ptr thrown = std::exchange(pending_exception(), std::move(outer));
  if (status == TW_OK) return;
  if (thrown) std::rethrow_exception(thrown);
  throw Error(status, tw_last_error_message());
}

// Runs a callback body for a C trampoline: nothing escapes into C. The exception is kept for call().
template <typename Body>
tw_status guarded(Body &&body) noexcept {
  try {
    body();
    return TW_OK;
  } catch (const Error &e) {
    pending_exception() = std::current_exception();
    return tw_set_error(e.code() == TW_OK ? TW_CALLBACK_FAILED : e.code(), e.what());
  } catch (const std::exception &e) {
    pending_exception() = std::current_exception();
    return tw_set_error(TW_CALLBACK_FAILED, e.what());
  } catch (...) {
    pending_exception() = std::current_exception();
    return tw_set_error(TW_CALLBACK_FAILED, "a callback threw an exception that is not a std::exception");
  }
}

// For callbacks that cannot fail (on_error, log lines): exceptions are dropped.
template <typename Body>
void swallowed(Body &&body) noexcept {
  try {
    body();
  } catch (...) {
  }
}

// The user_data of a callback table whose target object may die before the C object it registered:
// the C side owns the Binding (destroy deletes it), the target only clears the pointer.
template <typename Target>
struct Binding {
  Target *target;
  static void destroy(void *user_data) { delete static_cast<Binding *>(user_data); }
  static Target &of(void *user_data) {
    Target *target = static_cast<Binding *>(user_data)->target;
    if (target == nullptr) throw Error(TW_FAILED_PRECONDITION, "the callback object was destroyed while still in use");
    return *target;
  }
};

// "Not given" for int64 arguments (TF's None).
constexpr int64_t unset = TW_UNSET;

}  // namespace detail

// ------------------------------------------------------------------------------------------------
// Versions and logging
// ------------------------------------------------------------------------------------------------

inline std::string version_string() { return tw_version_string(); }
inline unsigned version_number() { return tw_version_number(); }
inline std::string status_name(tw_status status) { return tw_status_name(status); }
inline std::string dtype_name(int dtype) { return tw_dtype_name(static_cast<tw_dtype>(dtype)); }
inline size_t dtype_size(int dtype) { return tw_dtype_size(static_cast<tw_dtype>(dtype)); }

// Receives every log line of the library; write may be called from any thread that runs library code
// (background checkpoint writers included). Exceptions it throws are dropped.
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void write(int level, const std::string &message) = 0;
};

// Routes log lines to `sink` (not owned; it must live until replaced), or back to stderr for nullptr.
inline void set_log_sink(LogSink *sink) {
  if (sink == nullptr) {
    tw_set_log_sink(nullptr, nullptr);
    return;
  }
  tw_set_log_sink(
      [](void *user_data, tw_log_level level, const char *message) {
        detail::swallowed([&] { static_cast<LogSink *>(user_data)->write(level, message); });
      },
      sink);
}
inline void set_log_level(int level) { tw_set_log_level(static_cast<tw_log_level>(level)); }

// Receives the progress of long saves and restores (tw_set_progress_sink: kind is a tw_progress_kind,
// bytes count the tensors' bytes); report may be called from any thread that saves or restores, one
// call at a time per operation. Exceptions it throws are dropped.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void report(int kind, const std::string &path, int64_t bytes_done, int64_t bytes_total, double elapsed_secs,
                      bool finished) = 0;
};

// Reports an operation once it has run every_n_secs, then every every_n_secs, and at its end, to `sink`
// (not owned; it must live until replaced), or as INFO log lines for nullptr.
inline void set_progress_sink(double every_n_secs, ProgressSink *sink) {
  if (sink == nullptr) {
    detail::call([&] { return tw_set_progress_sink(every_n_secs, nullptr, nullptr); });
    return;
  }
  detail::call([&] {
    return tw_set_progress_sink(
        every_n_secs,
        [](void *user_data, tw_progress_kind kind, const char *path, int64_t bytes_done, int64_t bytes_total,
           double elapsed_secs, int finished) {
          detail::swallowed([&] {
            static_cast<ProgressSink *>(user_data)->report(kind, path, bytes_done, bytes_total, elapsed_secs,
                                                           finished != 0);
          });
        },
        sink);
  });
}

// ------------------------------------------------------------------------------------------------
// Tensors
// ------------------------------------------------------------------------------------------------

// A borrowed view of memory (tw_tensor) that owns its name, shape and strides. Copying a Tensor copies
// the description, never the data. The memory is the host's unless on_device(): then `data` is a device
// pointer (device_type, device_id as in tw_tensor) that only the registered tw_device may touch.
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::string name, void *data, int dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {})
      : name_(std::move(name)), data_(data), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)) {}

  // Copies the description of a C view.
  static Tensor from_c(const tw_tensor &t) {
    std::vector<int64_t> shape, strides;
    if (t.ndim > 0 && t.shape != nullptr) shape.assign(t.shape, t.shape + t.ndim);
    if (t.ndim > 0 && t.strides != nullptr) strides.assign(t.strides, t.strides + t.ndim);
    Tensor copy(t.name != nullptr ? t.name : "", t.data, t.dtype, std::move(shape), std::move(strides));
    if (t.struct_size >= TW_TENSOR_SIZE_V2) copy.set_device(t.device_type, t.device_id);
    return copy;
  }

  // The C view; its pointers stay valid while this Tensor lives unchanged.
  tw_tensor c_tensor() const {
    tw_tensor t;
    tw_tensor_init(&t);
    t.dtype = dtype_;
    t.name = name_.c_str();
    t.data = data_;
    t.ndim = static_cast<int32_t>(shape_.size());
    t.shape = shape_.empty() ? nullptr : shape_.data();
    t.strides = strides_.empty() ? nullptr : strides_.data();
    t.device_type = device_type_;
    t.device_id = device_id_;
    return t;
  }

  // The same memory read as another dtype of the same element size (uint16 bits as bfloat16, …).
  Tensor reinterpreted(int dtype) const {
    if (tw_dtype_size(static_cast<tw_dtype>(dtype)) != element_size() || element_size() == 0) {
      throw Error(TW_INVALID_ARGUMENT, "cannot view " + std::string(tw_dtype_name(static_cast<tw_dtype>(dtype_))) +
                                           " '" + name_ + "' as " + tw_dtype_name(static_cast<tw_dtype>(dtype)));
    }
    Tensor view = *this;
    view.dtype_ = dtype;
    return view;
  }

  // Where the memory lives (a tw_device_type and the device's ordinal); host memory by default.
  void set_device(int32_t device_type, int32_t device_id) noexcept {
    device_type_ = device_type;
    device_id_ = device_id;
  }
  int32_t device_type() const noexcept { return device_type_; }
  int32_t device_id() const noexcept { return device_id_; }
  bool on_device() const noexcept {
    return device_type_ != TW_DEVICE_HOST && device_type_ != TW_DEVICE_CPU && device_type_ != TW_DEVICE_CUDA_HOST;
  }

  const std::string &name() const noexcept { return name_; }
  void set_name(const std::string &name) { name_ = name; }
  void *data() const noexcept { return data_; }
  uintptr_t address() const noexcept { return reinterpret_cast<uintptr_t>(data_); }
  int dtype() const noexcept { return dtype_; }
  const std::vector<int64_t> &shape() const noexcept { return shape_; }
  // Element strides; empty means row-major contiguous.
  const std::vector<int64_t> &strides() const noexcept { return strides_; }
  int64_t element_count() const {
    const tw_tensor t = c_tensor();
    return tw_tensor_element_count(&t);
  }
  size_t element_size() const noexcept { return tw_dtype_size(static_cast<tw_dtype>(dtype_)); }

 private:
  std::string name_;
  void *data_ = nullptr;
  int dtype_ = TW_DTYPE_INVALID;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  int32_t device_type_ = TW_DEVICE_HOST;
  int32_t device_id_ = 0;
};

namespace detail {
// C views of a list of Tensors, valid while the list lives unchanged.
inline std::vector<tw_tensor> c_tensors(const std::vector<Tensor> &tensors) {
  std::vector<tw_tensor> views;
  views.reserve(tensors.size());
  for (const Tensor &t : tensors) views.push_back(t.c_tensor());
  return views;
}
inline tw_tensor empty_c_tensor() {
  tw_tensor t;
  tw_tensor_init(&t);
  return t;
}

// The C elements of lists (tensor views, strings), their empty value and their facade value.
template <typename CElement>
struct ListElement;
template <>
struct ListElement<tw_tensor> {
  using Value = Tensor;
  static tw_tensor empty() { return empty_c_tensor(); }
  static Tensor value(const tw_tensor &t) { return Tensor::from_c(t); }
};
template <>
struct ListElement<const char *> {
  using Value = std::string;
  static const char *empty() { return nullptr; }
  static std::string value(const char *s) { return s != nullptr ? s : ""; }
};

// Every list getter: a C list is a count and an accessor by index (the tw_*_count / tw_*_at pairs);
// `at(index, &element)` calls the accessor. Returns the whole list as facade values.
template <typename CElement, typename At>
std::vector<typename ListElement<CElement>::Value> collect(size_t count, At &&at) {
  std::vector<typename ListElement<CElement>::Value> all;
  all.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    CElement element = ListElement<CElement>::empty();
    call([&] { return at(i, &element); });
    all.push_back(ListElement<CElement>::value(element));
  }
  return all;
}
}  // namespace detail

}  // namespace trainwatch

#endif  // TRAINWATCH_HPP_COMMON_HPP
