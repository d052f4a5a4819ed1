// Zero-copy tensor views of Python objects, and numpy arrays of library tensors.
//
// Anything with the buffer protocol (numpy arrays and scalars, memoryview, array.array) or __dlpack__
// (torch tensors, bfloat16 and bool included: torch has no buffer protocol) becomes a trainwatch::Tensor
// over the object's own memory; Python ints, floats and bools become 0-d int64/float64/bool tensors.
// Device memory (a CUDA torch tensor, or any object with __cuda_array_interface__: cupy, numba) becomes
// a device view — the device pointer with its device type and ordinal, still zero copy — provided a
// tw_device serves that type (python_device.hpp registers them); the library never reads it itself.
// A HeldTensor keeps the object (and its exported buffer or DLPack capsule) alive until it is
// destroyed, which is what lets the library borrow the memory for a run or a session.
//
// Results come back as numpy arrays: to_numpy copies (the library's views die with the run), as_numpy
// views memory that a Python object owns. numpy has no bfloat16 or float8: those come back as their
// bits (uint16 / uint8), which the package documents and converts.
//
// Every function here needs the GIL; failures throw PythonError (TypeError, ValueError, BufferError).
#ifndef TRAINWATCH_PYTHON_TENSORS_HPP
#define TRAINWATCH_PYTHON_TENSORS_HPP

#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "python_error.hpp"
#include "trainwatch.hpp"

namespace trainwatch {
namespace python {

namespace dlpack {
// The DLPack ABI (dlpack.h v0.x, what torch 1.13 and numpy export), declared here because Debian
// ships no dlpack.h. The layout is frozen by the standard.
struct Device {
  int32_t device_type;  // 1 = CPU, 2 = CUDA, 3 = CUDA host (pinned) memory: tw_device_type's codes
  int32_t device_id;
};
struct DataType {
  uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 6 bool
  uint8_t bits;
  uint16_t lanes;
};
struct Tensor {
  void *data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t *shape;
  int64_t *strides;  // elements; NULL = row-major
  uint64_t byte_offset;
};
struct ManagedTensor {
  Tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(ManagedTensor *self);
};

inline int to_dtype(DataType t) {
  if (t.lanes != 1) return TW_DTYPE_INVALID;
  switch (t.code) {
    case 0:
      return t.bits == 8 ? TW_INT8 : t.bits == 16 ? TW_INT16 : t.bits == 32 ? TW_INT32 : t.bits == 64 ? TW_INT64 : 0;
    case 1:
      return t.bits == 8    ? TW_UINT8
             : t.bits == 16 ? TW_UINT16
             : t.bits == 32 ? TW_UINT32
             : t.bits == 64 ? TW_UINT64
                            : 0;
    case 2: return t.bits == 16 ? TW_FLOAT16 : t.bits == 32 ? TW_FLOAT32 : t.bits == 64 ? TW_FLOAT64 : 0;
    case 4: return t.bits == 16 ? TW_BFLOAT16 : 0;
    case 6: return t.bits == 8 ? TW_BOOL : 0;
    default: return TW_DTYPE_INVALID;
  }
}
}  // namespace dlpack

// The tw_dtype of a buffer-protocol format ("<f", "d", "?", …), or TW_DTYPE_INVALID.
inline int dtype_of_format(const char *format, Py_ssize_t itemsize) {
  if (format == nullptr) format = "B";
  if (*format == '@' || *format == '=' || *format == '<') ++format;
  if (format[0] == '\0' || format[1] != '\0') return TW_DTYPE_INVALID;  // big-endian, structs, repeats
  const auto by_size = [itemsize](int i8, int i16, int i32, int i64) {
    return itemsize == 1 ? i8 : itemsize == 2 ? i16 : itemsize == 4 ? i32 : itemsize == 8 ? i64 : TW_DTYPE_INVALID;
  };
  switch (format[0]) {
    case '?': return itemsize == 1 ? TW_BOOL : TW_DTYPE_INVALID;
    case 'e': return itemsize == 2 ? TW_FLOAT16 : TW_DTYPE_INVALID;
    case 'f': return itemsize == 4 ? TW_FLOAT32 : TW_DTYPE_INVALID;
    case 'd': return itemsize == 8 ? TW_FLOAT64 : TW_DTYPE_INVALID;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n': return by_size(TW_INT8, TW_INT16, TW_INT32, TW_INT64);
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N': return by_size(TW_UINT8, TW_UINT16, TW_UINT32, TW_UINT64);
    default: return TW_DTYPE_INVALID;
  }
}

inline std::string type_name(PyObject *object) { return Py_TYPE(object)->tp_name; }

// The device types a tw_device was registered for through this module (set_device, set_device_table):
// what lets a device tensor in. Read and written with the GIL.
inline std::vector<int32_t> &registered_device_types() {
  static std::vector<int32_t> types;
  return types;
}
inline bool device_registered(int32_t device_type) {
  const std::vector<int32_t> &types = registered_device_types();
  return std::find(types.begin(), types.end(), device_type) != types.end();
}
inline bool is_host_device(int32_t device_type) {
  return device_type == TW_DEVICE_HOST || device_type == TW_DEVICE_CPU || device_type == TW_DEVICE_CUDA_HOST;
}
// "cuda:0" for messages (DLPack's names for the common codes, "device type N" otherwise).
inline std::string device_label(int32_t device_type, int32_t device_id) {
  const char *name = device_type == TW_DEVICE_CUDA  ? "cuda"
                     : device_type == 10            ? "rocm"
                     : device_type == TW_DEVICE_EXT ? "ext"
                                                    : nullptr;
  return (name != nullptr ? std::string(name) : "device type " + std::to_string(device_type)) + ":" +
         std::to_string(device_id);
}

// Lets the package register its default device (trainwatch.devices: the CUDA plugin or torch) the first
// time a device tensor arrives with none registered; an import that fails leaves the error to the caller.
inline void register_default_device() {
  PyObject *module = PyImport_ImportModule("trainwatch.devices");
  PyObject *result = module != nullptr ? PyObject_CallMethod(module, "_register_default", nullptr) : nullptr;
  Py_XDECREF(result);
  Py_XDECREF(module);
  if (result == nullptr) throw_python_error();
}

// A buffer exported by an object (PEP 3118), released with the GIL when this dies — also when the
// HeldTensor owning it fails half-way through its constructor.
struct ExportedBuffer {
  Py_buffer view{};
  bool held = false;
  ExportedBuffer() = default;
  ExportedBuffer(const ExportedBuffer &) = delete;
  ExportedBuffer &operator=(const ExportedBuffer &) = delete;
  ~ExportedBuffer() {
    if (!held) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyBuffer_Release(&view);
    PyGILState_Release(gil);
  }
};

// One Python object seen as a tensor, kept alive (with its exported memory) while this lives.
class HeldTensor {
 public:
  // `what` names the value in messages ("output 'loss'"). writable: the library will write into it
  // (variables, load destinations).
  HeldTensor(const std::string &name, PyObject *object, bool writable, const std::string &what)
      : object_((Py_INCREF(object), object)), what_(what) {
    if (PyObject_CheckBuffer(object)) {
      from_buffer(name, object, writable, what);
    } else if (PyObject_HasAttrString(object, "__dlpack__")) {
      from_dlpack(name, object, what);
    } else if (PyObject_HasAttrString(object, "__cuda_array_interface__")) {
      from_cuda_array_interface(name, object, writable, what);
    } else if (!writable && (PyFloat_Check(object) || PyLong_Check(object))) {
      from_number(name, object);
    } else {
      throw_python(PyExc_TypeError, what +
                                        " must be a numpy array, a torch tensor or an object with the buffer "
                                        "protocol, __dlpack__ or __cuda_array_interface__" +
                                        (writable ? "" : ", or a Python number") + "; got " + type_name(object));
    }
    if (tensor_.on_device()) check_device_view(what);
    if (writable) {
      if (capsule_.get() != nullptr) find_memory_methods();
      registered_ = memory_now();
    }
  }
  HeldTensor(const HeldTensor &) = delete;
  HeldTensor &operator=(const HeldTensor &) = delete;

  const Tensor &tensor() const noexcept { return tensor_; }
  PyObject *object() const noexcept { return object_.get(); }

  // Throws ValueError when memory the library writes in place moved or changed size since it was
  // registered (numpy's resize(refcheck=False), torch's resize_()): the exported view would then point
  // at freed memory. A pointer and a size compare (plus two method calls for a torch tensor).
  void check_unchanged() const {
    if (!registered_.known) return;
    const Memory now = memory_now();
    if (!now.known || (now.data == registered_.data && now.bytes == registered_.bytes)) return;
    throw_python(PyExc_ValueError,
                 what_ + " was resized or reallocated after it was registered (" +
                     (now.bytes != registered_.bytes
                          ? std::to_string(registered_.bytes) + " bytes then, " + std::to_string(now.bytes) + " now"
                          : std::string("its memory moved")) +
                     "); trainwatch reads and writes the registered memory in place, so keep its size, or "
                     "register the new array with a new session or Saver");
  }

 private:
  struct Memory {
    const void *data = nullptr;
    int64_t bytes = 0;
    bool known = false;
  };

  // Where the object's memory is now, and its size: numpy arrays from their struct, torch tensors
  // (and anything else with data_ptr() and numel()) through those methods.
  Memory memory_now() const {
    Memory memory;
    PyObject *object = object_.get();
    if (PyArray_Check(object)) {
      auto *array = reinterpret_cast<PyArrayObject *>(object);
      memory.data = PyArray_DATA(array);
      memory.bytes = static_cast<int64_t>(PyArray_NBYTES(array));
      memory.known = true;
    } else if (data_ptr_.get() != nullptr && numel_.get() != nullptr) {
      PyObject *data = PyObject_Vectorcall(data_ptr_.get(), &object, 1, nullptr);
      PyObject *numel = data != nullptr ? PyObject_Vectorcall(numel_.get(), &object, 1, nullptr) : nullptr;
      if (numel != nullptr) {
        memory.data = PyLong_AsVoidPtr(data);
        memory.bytes = static_cast<int64_t>(PyLong_AsLongLong(numel)) * static_cast<int64_t>(tensor_.element_size());
        memory.known = PyErr_Occurred() == nullptr;
      }
      PyErr_Clear();  // not torch: nothing to compare with
      Py_XDECREF(data);
      Py_XDECREF(numel);
    }
    return memory;
  }

  // A DLPack exporter's data_ptr and numel methods (torch's), looked up on its type once: a lookup on
  // the tensor costs more than the call. Absent for other exporters, which are not checked.
  void find_memory_methods() {
    PyObject *type = reinterpret_cast<PyObject *>(Py_TYPE(object_.get()));
    data_ptr_ = GilRef(PyObject_GetAttrString(type, "data_ptr"));
    numel_ = GilRef(PyObject_GetAttrString(type, "numel"));
    PyErr_Clear();
  }

  void from_buffer(const std::string &name, PyObject *object, bool writable, const std::string &what) {
    Py_buffer &view = exported_.view;
    if (PyObject_GetBuffer(object, &view, writable ? PyBUF_RECORDS : PyBUF_RECORDS_RO) != 0) {
      if (writable && PyErr_ExceptionMatches(PyExc_BufferError)) {
        PyErr_Clear();
        throw_python(PyExc_ValueError, what + " is read-only; trainwatch writes into it in place");
      }
      throw_python_error();
    }
    exported_.held = true;
    const int dtype = dtype_of_format(view.format, view.itemsize);
    if (dtype == TW_DTYPE_INVALID) {
      throw_python(PyExc_TypeError, what + " has an element type trainwatch does not know (buffer format '" +
                                        (view.format != nullptr ? view.format : "B") + "')");
    }
    std::vector<int64_t> shape(view.shape, view.shape + view.ndim);
    std::vector<int64_t> strides;
    if (view.strides != nullptr) {
      for (int i = 0; i < view.ndim; ++i) {
        if (view.strides[i] % view.itemsize != 0) {
          throw_python(PyExc_ValueError, what + " has a stride that is not a multiple of its element size");
        }
        strides.push_back(view.strides[i] / view.itemsize);
      }
      if (is_row_major(shape, strides)) strides.clear();
    }
    tensor_ = Tensor(name, view.buf, dtype, std::move(shape), std::move(strides));
  }

  void from_dlpack(const std::string &name, PyObject *object, const std::string &what) {
    // torch refuses to export a tensor that requires grad; its detach() shares the same storage.
    GilRef exporter(object);
    Py_INCREF(object);
    PyObject *requires_grad = PyObject_GetAttrString(object, "requires_grad");
    if (requires_grad == nullptr) PyErr_Clear();
    const bool detach = requires_grad != nullptr && PyObject_IsTrue(requires_grad) == 1;
    Py_XDECREF(requires_grad);
    if (detach) {
      PyObject *detached = PyObject_CallMethod(object, "detach", nullptr);
      if (detached == nullptr) throw_python_error();
      exporter = GilRef(detached);
    }
    const bool torch_bool = is_torch_bool(exporter.get());
    if (torch_bool) exporter = GilRef(bytes_of_torch_bool(exporter.get()));
    PyObject *capsule = PyObject_CallMethod(exporter.get(), "__dlpack__", nullptr);
    if (capsule == nullptr) throw_python_error();
    capsule_ = GilRef(capsule);
    auto *managed = static_cast<dlpack::ManagedTensor *>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (managed == nullptr) throw_python_error();
    const dlpack::Tensor &t = managed->dl_tensor;
    if (t.device.device_type <= 0) {
      throw_python(PyExc_ValueError,
                   what + " has an unknown DLPack device type " + std::to_string(t.device.device_type));
    }
    const int dtype = torch_bool ? TW_BOOL : dlpack::to_dtype(t.dtype);
    if (dtype == TW_DTYPE_INVALID) {
      throw_python(PyExc_TypeError, what + " has a DLPack element type trainwatch does not know (code " +
                                        std::to_string(t.dtype.code) + ", " + std::to_string(t.dtype.bits) + " bits)");
    }
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    std::vector<int64_t> strides;
    if (t.strides != nullptr && !is_row_major(shape, std::vector<int64_t>(t.strides, t.strides + t.ndim))) {
      strides.assign(t.strides, t.strides + t.ndim);
    }
    tensor_ = Tensor(name, static_cast<char *>(t.data) + t.byte_offset, dtype, std::move(shape), std::move(strides));
    if (!is_host_device(t.device.device_type)) tensor_.set_device(t.device.device_type, t.device.device_id);
  }

  // Numba's CUDA Array Interface (version 2 and 3): a dict with the device pointer, shape, typestr and
  // byte strides. It says nothing of the ordinal: the object's device.id (cupy) or device.index (torch)
  // gives it, else device 0. Its "stream" is not waited for: the device's table orders its work on the
  // stream it serves (torch's current stream), so a producer on another stream synchronises first.
  void from_cuda_array_interface(const std::string &name, PyObject *object, bool writable, const std::string &what) {
    PyObject *interface = PyObject_GetAttrString(object, "__cuda_array_interface__");
    if (interface == nullptr) throw_python_error();
    GilRef held(interface);
    if (!PyDict_Check(interface)) {
      throw_python(PyExc_TypeError, what + "'s __cuda_array_interface__ is not a dict");
    }
    const auto item = [&](const char *key) { return PyDict_GetItemString(interface, key); };  // borrowed
    PyObject *mask = item("mask");
    if (mask != nullptr && mask != Py_None) {
      throw_python(PyExc_ValueError, what + " has a mask (__cuda_array_interface__); trainwatch takes plain arrays");
    }
    PyObject *data = item("data");
    PyObject *typestr = item("typestr");
    PyObject *shape_object = item("shape");
    if (data == nullptr || !PyTuple_Check(data) || PyTuple_Size(data) != 2 || typestr == nullptr ||
        !PyUnicode_Check(typestr) || shape_object == nullptr || !PyTuple_Check(shape_object)) {
      throw_python(PyExc_ValueError,
                   what + "'s __cuda_array_interface__ lacks data (pointer, read-only), typestr or shape");
    }
    void *pointer = PyLong_AsVoidPtr(PyTuple_GetItem(data, 0));
    if (PyErr_Occurred() != nullptr) throw_python_error();
    if (writable && PyObject_IsTrue(PyTuple_GetItem(data, 1)) == 1) {
      throw_python(PyExc_ValueError, what + " is read-only; trainwatch writes into it in place");
    }
    const char *format = PyUnicode_AsUTF8(typestr);
    if (format == nullptr) throw_python_error();
    const int dtype = dtype_of_typestr(format);
    if (dtype == TW_DTYPE_INVALID) {
      throw_python(PyExc_TypeError,
                   what + " has an element type trainwatch does not know (typestr '" + std::string(format) + "')");
    }
    std::vector<int64_t> shape = int64s(shape_object, what, "shape");
    std::vector<int64_t> strides;
    PyObject *strides_object = item("strides");
    if (strides_object != nullptr && strides_object != Py_None) {
      if (!PyTuple_Check(strides_object) || PyTuple_Size(strides_object) != static_cast<Py_ssize_t>(shape.size())) {
        throw_python(PyExc_ValueError, what + "'s strides do not match its shape");
      }
      const int64_t itemsize = static_cast<int64_t>(tw_dtype_size(static_cast<tw_dtype>(dtype)));
      for (int64_t bytes : int64s(strides_object, what, "strides")) {
        if (bytes % itemsize != 0) {
          throw_python(PyExc_ValueError, what + " has a stride that is not a multiple of its element size");
        }
        strides.push_back(bytes / itemsize);
      }
      if (is_row_major(shape, strides)) strides.clear();
    }
    tensor_ = Tensor(name, pointer, dtype, std::move(shape), std::move(strides));
    tensor_.set_device(TW_DEVICE_CUDA, ordinal_of(object));
  }

  // A typestr of the array interface ("<f4", "|b1", …) as a tw_dtype: little-endian or byte-sized only.
  static int dtype_of_typestr(const char *typestr) {
    const std::string text(typestr);
    if (text.size() < 3 || (text[0] != '<' && text[0] != '|' && text[0] != '=')) return TW_DTYPE_INVALID;
    const std::string kind = text.substr(1);
    if (kind == "b1") return TW_BOOL;
    if (kind == "f2") return TW_FLOAT16;
    if (kind == "f4") return TW_FLOAT32;
    if (kind == "f8") return TW_FLOAT64;
    if (kind == "i1") return TW_INT8;
    if (kind == "i2") return TW_INT16;
    if (kind == "i4") return TW_INT32;
    if (kind == "i8") return TW_INT64;
    if (kind == "u1") return TW_UINT8;
    if (kind == "u2") return TW_UINT16;
    if (kind == "u4") return TW_UINT32;
    if (kind == "u8") return TW_UINT64;
    return TW_DTYPE_INVALID;
  }

  static std::vector<int64_t> int64s(PyObject *tuple, const std::string &what, const char *field) {
    std::vector<int64_t> values;
    for (Py_ssize_t i = 0; i < PyTuple_Size(tuple); ++i) {
      values.push_back(PyLong_AsLongLong(PyTuple_GetItem(tuple, i)));
      if (PyErr_Occurred() != nullptr) {
        PyErr_Clear();
        throw_python(PyExc_ValueError, what + "'s " + field + " must hold ints");
      }
    }
    return values;
  }

  // The CUDA ordinal of an array: device.id (cupy), device.index (torch), else 0.
  static int32_t ordinal_of(PyObject *object) {
    PyObject *device = PyObject_GetAttrString(object, "device");
    if (device == nullptr) {
      PyErr_Clear();
      return 0;
    }
    GilRef held(device);
    for (const char *attribute : {"id", "index"}) {
      PyObject *value = PyObject_GetAttrString(device, attribute);
      if (value == nullptr) {
        PyErr_Clear();
        continue;
      }
      const long ordinal = PyLong_Check(value) ? PyLong_AsLong(value) : 0;
      Py_DECREF(value);
      PyErr_Clear();
      return static_cast<int32_t>(ordinal);
    }
    return 0;
  }

  // A device view must be contiguous (the table copies whole byte ranges) and served by a registered
  // device; the package's default device registers on first need.
  void check_device_view(const std::string &what) {
    const std::string where = device_label(tensor_.device_type(), tensor_.device_id());
    if (!tensor_.strides().empty()) {
      throw_python(PyExc_ValueError, what + " is a non-contiguous tensor on " + where +
                                         "; trainwatch moves device tensors as whole byte ranges, so pass a "
                                         "contiguous one (.contiguous() makes a copy)");
    }
    if (tensor_.device_id() < 0) {
      throw_python(PyExc_ValueError, what + " has a negative device ordinal (" + where + ")");
    }
    if (!device_registered(tensor_.device_type())) register_default_device();
    if (!device_registered(tensor_.device_type())) {
      throw Error(TW_FAILED_PRECONDITION, what + " is on " + where +
                                              " but no device is registered: install torch with CUDA or "
                                              "libtrainwatch_cuda (or register one with trainwatch.devices.use)");
    }
  }

  // torch (1.13) exports no bool tensor over DLPack; its bytes (one per element, 0 or 1) go as a
  // uint8 view of the same storage, and the tensor stays bool to the library.
  static bool is_torch_bool(PyObject *object) {
    PyObject *dtype = PyObject_GetAttrString(object, "dtype");
    if (dtype == nullptr) {
      PyErr_Clear();
      return false;
    }
    GilRef held(dtype);
    PyObject *text = PyObject_Str(dtype);
    if (text == nullptr) throw_python_error();
    GilRef held_text(text);
    const char *utf8 = PyUnicode_AsUTF8(text);
    if (utf8 == nullptr) throw_python_error();
    return std::string(utf8) == "torch.bool";
  }
  static PyObject *bytes_of_torch_bool(PyObject *object) {
    PyObject *torch = PyImport_ImportModule("torch");
    if (torch == nullptr) throw_python_error();
    GilRef held(torch);
    PyObject *uint8 = PyObject_GetAttrString(torch, "uint8");
    if (uint8 == nullptr) throw_python_error();
    GilRef held_uint8(uint8);
    PyObject *bytes = PyObject_CallMethod(object, "view", "O", uint8);
    if (bytes == nullptr) throw_python_error();
    return bytes;
  }

  void from_number(const std::string &name, PyObject *object) {
    int dtype;
    if (PyBool_Check(object)) {
      scalar_.b = object == Py_True ? 1 : 0;
      dtype = TW_BOOL;
    } else if (PyLong_Check(object)) {
      scalar_.i64 = PyLong_AsLongLong(object);
      if (PyErr_Occurred() != nullptr) throw_python_error();
      dtype = TW_INT64;
    } else {
      scalar_.f64 = PyFloat_AsDouble(object);
      dtype = TW_FLOAT64;
    }
    tensor_ = Tensor(name, &scalar_, dtype, {});
  }

  // True when the strides describe the row-major layout of `shape` (extents of 1 have any stride; a
  // tensor without elements has any strides: numpy and torch's DLPack give it zeros).
  static bool is_row_major(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides) {
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return true;
    int64_t expected = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      if (shape[i] != 1 && strides[i] != expected) return false;
      expected *= shape[i];
    }
    return true;
  }

  GilRef object_;
  std::string what_;
  GilRef capsule_;
  ExportedBuffer exported_;
  union {
    double f64;
    int64_t i64;
    uint8_t b;
  } scalar_{};
  Tensor tensor_;
  GilRef data_ptr_, numel_;  // see find_memory_methods
  Memory registered_;        // known for writable tensors only
};

// Tensors borrowed from Python objects, alive until clear() or destruction: a run's feeds and outputs,
// a session's variables.
class TensorSet {
 public:
  TensorSet() = default;
  TensorSet(const TensorSet &) = delete;
  TensorSet &operator=(const TensorSet &) = delete;

  // Adds `object` under `name`; `kind` names it in messages ("feed", "output", "variable").
  void add(const std::string &name, PyObject *object, bool writable = false, const std::string &kind = "value") {
    held_.push_back(std::make_unique<HeldTensor>(name, object, writable, kind + " '" + name + "'"));
    tensors_.push_back(held_.back()->tensor());
  }
  // Adds every item of a dict of name → object.
  void add_dict(PyObject *mapping, bool writable = false, const std::string &kind = "value") {
    for_each_item(mapping, kind, [&](const char *name, PyObject *value) { add(name, value, writable, kind); });
  }
  const std::vector<Tensor> &tensors() const noexcept { return tensors_; }
  size_t size() const noexcept { return held_.size(); }
  // ValueError if a registered (writable) tensor was resized or reallocated since: before every use.
  void check_unchanged() const {
    for (const std::unique_ptr<HeldTensor> &held : held_) held->check_unchanged();
  }
  void clear() {
    tensors_.clear();
    held_.clear();
  }

  // Calls fn(name, value) for every item of a dict whose keys are str.
  template <typename Fn>
  static void for_each_item(PyObject *mapping, const std::string &kind, Fn &&fn) {
    if (!PyDict_Check(mapping)) {
      throw_python(PyExc_TypeError, kind + "s must be a dict of name → array; got " + type_name(mapping));
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(mapping, &pos, &key, &value)) {
      const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
      if (name == nullptr) {
        if (PyErr_Occurred() != nullptr) throw_python_error();
        throw_python(PyExc_TypeError, kind + " names must be str; got " + type_name(key));
      }
      fn(name, value);
    }
  }

 private:
  std::vector<std::unique_ptr<HeldTensor>> held_;
  std::vector<Tensor> tensors_;
};

// Publishes each item of `outputs` (a dict name → array) zero copy; keep_alive holds them until the
// run returns.
inline void publish_outputs(StepContext &ctx, PyObject *outputs, TensorSet &keep_alive) {
  TensorSet::for_each_item(outputs, "output", [&](const char *name, PyObject *value) {
    keep_alive.add(name, value, false, "output");
    ctx.publish(keep_alive.tensors().back());
  });
}

// Adds each item of `feed_dict` as a feed of this run (SessionRunArgs.feed_dict).
inline void add_feeds(RunContext &ctx, PyObject *feed_dict, TensorSet &keep_alive) {
  TensorSet::for_each_item(feed_dict, "feed", [&](const char *name, PyObject *value) {
    keep_alive.add(name, value, false, "feed");
    ctx.add_feed(keep_alive.tensors().back());
  });
}

inline int numpy_type(int dtype) {
  switch (dtype) {
    case TW_BOOL: return NPY_BOOL;
    case TW_INT8: return NPY_INT8;
    case TW_INT16: return NPY_INT16;
    case TW_INT32: return NPY_INT32;
    case TW_INT64: return NPY_INT64;
    case TW_UINT8: return NPY_UINT8;
    case TW_UINT16: return NPY_UINT16;
    case TW_UINT32: return NPY_UINT32;
    case TW_UINT64: return NPY_UINT64;
    case TW_FLOAT16: return NPY_FLOAT16;
    case TW_BFLOAT16: return NPY_UINT16;  // the bits; trainwatch.bfloat16_to_float32 converts
    case TW_FLOAT32: return NPY_FLOAT32;
    case TW_FLOAT64: return NPY_FLOAT64;
    case TW_FLOAT8_E4M3FN:
    case TW_FLOAT8_E5M2: return NPY_UINT8;
    default: return -1;
  }
}

// A numpy array over the tensor's memory, kept alive by `base` (None: the caller guarantees it). A device
// view has no host memory to show: ValueError (the package copies those through their device).
inline PyObject *as_numpy(const Tensor &t, PyObject *base) {
  if (t.on_device()) {
    throw_python(PyExc_ValueError, "tensor '" + t.name() + "' is on " + device_label(t.device_type(), t.device_id()) +
                                       ": it has no host memory for numpy to view");
  }
  const int type = numpy_type(t.dtype());
  if (type < 0) throw_python(PyExc_TypeError, "tensor '" + t.name() + "' has no numpy dtype");
  std::vector<npy_intp> dims(t.shape().begin(), t.shape().end());
  std::vector<npy_intp> strides;
  for (int64_t s : t.strides()) strides.push_back(static_cast<npy_intp>(s * static_cast<int64_t>(t.element_size())));
  PyObject *array = PyArray_New(&PyArray_Type, static_cast<int>(dims.size()), dims.data(), type,
                                strides.empty() ? nullptr : strides.data(), t.data(), 0, NPY_ARRAY_WRITEABLE, nullptr);
  if (array == nullptr) throw_python_error();
  if (base != Py_None) {
    Py_INCREF(base);
    if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject *>(array), base) != 0) {
      Py_DECREF(array);
      throw_python_error();
    }
  }
  return array;
}

// A row-major numpy copy of the tensor.
inline PyObject *to_numpy(const Tensor &t) {
  PyObject *view = as_numpy(t, Py_None);
  PyObject *copy = PyArray_NewCopy(reinterpret_cast<PyArrayObject *>(view), NPY_CORDER);
  Py_DECREF(view);
  if (copy == nullptr) throw_python_error();
  return copy;
}

}  // namespace python
}  // namespace trainwatch

#endif  // TRAINWATCH_PYTHON_TENSORS_HPP
