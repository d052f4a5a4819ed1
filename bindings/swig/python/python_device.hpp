// A Python object as a device (tw_device, trainwatch/device.h), and the registrations of this module.
//
// The library calls the table from the thread that called it — a session's run, a save, a restore —
// usually with the GIL released (those calls are %thread): each trampoline takes the GIL, calls the
// object's method and turns what it raised into a status, so no exception crosses the C ABI. Addresses
// cross as Python ints (device pointers and pinned host memory alike), tensors as tuples:
//
//   copy_to_host(device_id, copies)       copies: [(dst, src, size, name)], dst pinned host memory
//   copy_to_device(device_id, copies)     copies: [(dst, src, size, name)], src pinned host memory
//   count_nonfinite(device_id, tensors, results)
//                                         tensors: [(address, dtype, shape, name)]; results: the address
//                                         of len(tensors) tw_device_scan records (5 int64 each)
//   record(device_id) -> event            any object; wait(event), query(event) -> bool, release(event)
//   alloc_pinned(size) -> address         free_pinned(address)
//
// Errors: an exception becomes the status of its class (an OpError's code, else TW_CALLBACK_FAILED) with
// "<operation>: <Type>: <text>" as its message; the library prefixes the device and the tensor, and the
// session call raises the package's exception for that status. release and free_pinned cannot fail: what
// they raise is reported as unraisable.
#ifndef TRAINWATCH_PYTHON_DEVICE_HPP
#define TRAINWATCH_PYTHON_DEVICE_HPP

#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "python_error.hpp"
#include "python_tensors.hpp"
#include "trainwatch.hpp"

namespace trainwatch {
namespace python {

namespace device_detail {

struct Bridge {
  PyObject *target = nullptr;  // a strong reference, released by destroy (with the GIL)
  std::string name;            // the table's name: lives as long as the registration
};

// Calls body() with the GIL; what it raises becomes a status whose message names `operation`.
template <typename Body>
tw_status upcall(const char *operation, Body &&body) noexcept {
  if (!Py_IsInitialized()) return tw_set_error(TW_FAILED_PRECONDITION, "the Python interpreter has exited");
  PyGILState_STATE gil = PyGILState_Ensure();
  tw_status status = TW_OK;
  try {
    body();
  } catch (const PythonError &e) {
    // Never a status that reads as a clean end of input or of the loop.
    const bool own_status = e.code() != TW_OUT_OF_RANGE && e.code() != TW_STOP_ITERATION;
    status =
        tw_set_error(own_status ? e.code() : TW_CALLBACK_FAILED, (std::string(operation) + ": " + e.what()).c_str());
  } catch (const std::exception &e) {
    status = tw_set_error(TW_CALLBACK_FAILED, (std::string(operation) + ": " + e.what()).c_str());
  } catch (...) {
    status = tw_set_error(TW_CALLBACK_FAILED, operation);
  }
  PyGILState_Release(gil);
  return status;
}

// Calls a method that cannot fail (release, free_pinned): an exception is reported, not returned.
template <typename Body>
void upcall_void(Body &&body) noexcept {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  try {
    body();
  } catch (const PythonError &e) {
    e.restore(nullptr);
    PyErr_WriteUnraisable(nullptr);
  } catch (...) {
  }
  PyGILState_Release(gil);
}

inline PyObject *address(const void *pointer) { return PyLong_FromVoidPtr(const_cast<void *>(pointer)); }

// [(dst, src, size, name)]
inline PyObject *copy_list(const tw_device_copy *copies, size_t count) {
  Owned list(PyList_New(static_cast<Py_ssize_t>(count)));
  for (size_t i = 0; i < count; ++i) {
    const tw_device_copy &c = copies[i];
    PyObject *item = Py_BuildValue("(NNns)", address(c.dst), address(c.src), static_cast<Py_ssize_t>(c.size),
                                   c.name != nullptr ? c.name : "");
    if (item == nullptr) throw_python_error();
    PyList_SET_ITEM(list.object, static_cast<Py_ssize_t>(i), item);
  }
  Py_INCREF(list.object);
  return list.object;
}

// [(address, dtype, shape, name)]
inline PyObject *tensor_list(const tw_tensor *tensors, size_t count) {
  Owned list(PyList_New(static_cast<Py_ssize_t>(count)));
  for (size_t i = 0; i < count; ++i) {
    const tw_tensor &t = tensors[i];
    Owned shape(PyTuple_New(t.ndim));
    for (int32_t d = 0; d < t.ndim; ++d) {
      PyObject *extent = PyLong_FromLongLong(t.shape[d]);
      if (extent == nullptr) throw_python_error();
      PyTuple_SET_ITEM(shape.object, d, extent);
    }
    PyObject *item = Py_BuildValue("(NiOs)", address(t.data), static_cast<int>(t.dtype), shape.object,
                                   t.name != nullptr ? t.name : "");
    if (item == nullptr) throw_python_error();
    PyList_SET_ITEM(list.object, static_cast<Py_ssize_t>(i), item);
  }
  Py_INCREF(list.object);
  return list.object;
}

inline PyObject *call_method(PyObject *target, const char *method, PyObject *args) {
  Owned callable(PyObject_GetAttrString(target, method));
  PyObject *result = PyObject_CallObject(callable.object, args);
  if (result == nullptr) throw_python_error();
  return result;
}

inline tw_status copy(const char *operation, void *user_data, int32_t device_id, const tw_device_copy *copies,
                      size_t count) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall(operation, [&] {
    Owned list(copy_list(copies, count));
    Owned args(Py_BuildValue("(iO)", device_id, list.object));
    Owned result(call_method(bridge->target, operation, args.object));
  });
}

inline tw_status copy_to_host(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count) {
  return copy("copy_to_host", user_data, device_id, copies, count);
}

inline tw_status copy_to_device(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count) {
  return copy("copy_to_device", user_data, device_id, copies, count);
}

inline tw_status count_nonfinite(void *user_data, int32_t device_id, const tw_tensor *tensors, size_t count,
                                 tw_device_scan *results) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall("count_nonfinite", [&] {
    Owned list(tensor_list(tensors, count));
    Owned args(Py_BuildValue("(iON)", device_id, list.object, address(results)));
    Owned result(call_method(bridge->target, "count_nonfinite", args.object));
  });
}

// The event is the object record() returned, kept alive by one reference until release.
inline tw_status record(void *user_data, int32_t device_id, tw_device_event **out) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall("record", [&] {
    Owned args(Py_BuildValue("(i)", device_id));
    PyObject *event = call_method(bridge->target, "record", args.object);
    *out = reinterpret_cast<tw_device_event *>(event);
  });
}

inline tw_status wait(void *user_data, tw_device_event *event) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall("wait", [&] {
    Owned args(Py_BuildValue("(O)", reinterpret_cast<PyObject *>(event)));
    Owned result(call_method(bridge->target, "wait", args.object));
  });
}

inline tw_status query(void *user_data, tw_device_event *event, int *out_done) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall("query", [&] {
    Owned args(Py_BuildValue("(O)", reinterpret_cast<PyObject *>(event)));
    Owned result(call_method(bridge->target, "query", args.object));
    const int done = PyObject_IsTrue(result.object);
    if (done < 0) throw_python_error();
    *out_done = done;
  });
}

inline void release(void *user_data, tw_device_event *event) {
  auto *bridge = static_cast<Bridge *>(user_data);
  upcall_void([&] {
    auto *object = reinterpret_cast<PyObject *>(event);
    Owned owned(object);  // the reference record() handed over
    Owned args(Py_BuildValue("(O)", object));
    Owned result(call_method(bridge->target, "release", args.object));
  });
}

inline tw_status alloc_pinned(void *user_data, size_t size, void **out) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall("alloc_pinned", [&] {
    Owned args(Py_BuildValue("(n)", static_cast<Py_ssize_t>(size)));
    Owned result(call_method(bridge->target, "alloc_pinned", args.object));
    void *pointer = PyLong_AsVoidPtr(result.object);
    if (PyErr_Occurred() != nullptr) throw_python_error();
    if (pointer == nullptr || reinterpret_cast<uintptr_t>(pointer) % 64 != 0) {
      throw_python(PyExc_ValueError, "alloc_pinned returned an address that is NULL or not 64-byte aligned");
    }
    *out = pointer;
  });
}

inline void free_pinned(void *user_data, void *pointer) {
  auto *bridge = static_cast<Bridge *>(user_data);
  upcall_void([&] {
    Owned args(Py_BuildValue("(N)", address(pointer)));
    Owned result(call_method(bridge->target, "free_pinned", args.object));
  });
}

inline void destroy(void *user_data) {
  auto *bridge = static_cast<Bridge *>(user_data);
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(bridge->target);
    PyGILState_Release(gil);
  }
  delete bridge;
}

inline void registered(int32_t device_type) {
  if (!device_registered(device_type)) registered_device_types().push_back(device_type);
}

}  // namespace device_detail

// Registers `device` (an object with the methods above) for the views of `device_type`, named `name` in
// messages; the registration keeps a reference to it. Replaces an earlier registration of that type.
inline void set_device(PyObject *device, int device_type, const std::string &name) {
  auto *bridge = new device_detail::Bridge;
  Py_INCREF(device);
  bridge->target = device;
  bridge->name = name;
  tw_device table = TW_DEVICE_INIT;
  table.device_type = device_type;
  table.name = bridge->name.c_str();
  table.copy_to_host = &device_detail::copy_to_host;
  table.copy_to_device = &device_detail::copy_to_device;
  table.count_nonfinite = &device_detail::count_nonfinite;
  table.record = &device_detail::record;
  table.wait = &device_detail::wait;
  table.query = &device_detail::query;
  table.release = &device_detail::release;
  table.alloc_pinned = &device_detail::alloc_pinned;
  table.free_pinned = &device_detail::free_pinned;
  table.destroy = &device_detail::destroy;
  const tw_status status = tw_set_device(&table, bridge);
  if (status != TW_OK) {
    const std::string message = tw_last_error_message();
    device_detail::destroy(bridge);  // on error the library did not take it
    throw Error(status, message);
  }
  device_detail::registered(device_type);
}

// Registers a table built in C (libtrainwatch_cuda's tw_cuda_device_create, reached through ctypes):
// `table` and `user_data` are addresses. The table is copied; user_data belongs to the registration
// from here on: if the library refuses the table, its destroy frees user_data before this raises.
inline void set_device_table(uintptr_t table, uintptr_t user_data) {
  const auto *device = reinterpret_cast<const tw_device *>(table);
  if (device == nullptr) throw Error(TW_INVALID_ARGUMENT, "set_device_table: the table's address is 0");
  const tw_status status = tw_set_device(device, reinterpret_cast<void *>(user_data));
  if (status != TW_OK) {
    const std::string message = tw_last_error_message();
    if (device->struct_size >= TW_DEVICE_SIZE_V1 && device->destroy != nullptr) {
      device->destroy(reinterpret_cast<void *>(user_data));
    }
    throw Error(status, message);
  }
  device_detail::registered(device->device_type);
}

// Removes the registration of `device_type` (not an error when there is none).
inline void unset_device(int device_type) {
  detail::call([&] { return tw_unset_device(device_type); });
  std::vector<int32_t> &types = registered_device_types();
  types.erase(std::remove(types.begin(), types.end(), device_type), types.end());
}

}  // namespace python
}  // namespace trainwatch

#endif  // TRAINWATCH_PYTHON_DEVICE_HPP
