// A Python object as the job's collective (tw_collective, trainwatch/distributed.h).
//
// The session calls the table from the thread that runs it, with the GIL released (Session::run,
// creation and close are %thread): each trampoline takes the GIL, calls the object's method and turns
// what it raised into a status. The buffers reach Python as numpy arrays over the session's own memory
// (int64 for allreduce_int64, uint8 for broadcast), filled in place. The session votes with the same
// vector every run, so the bridge keeps the last array of each kind and hands it out again when the
// pointer and size match: a vote allocates nothing on this side, and an adapter may cache what it
// builds on top (TorchCollective keeps its torch view of the array).
//
// Errors: an OpError (DeadlineExceededError, UnavailableError, …) returns its own status with its
// message, and the session reports it prefixed by the operation and the rank. Any other exception is
// TW_CALLBACK_FAILED and is raised again, unchanged, from the session call that ran the collective
// (the facade's pending-exception path).
#ifndef TRAINWATCH_PYTHON_COLLECTIVE_HPP
#define TRAINWATCH_PYTHON_COLLECTIVE_HPP

#include <Python.h>

#include <cstdint>

#include "python_error.hpp"
#include "python_tensors.hpp"
#include "trainwatch.hpp"

namespace trainwatch {
namespace python {

namespace collective_detail {

// One cached numpy view: reused while the C side passes the same memory.
struct CachedView {
  PyObject *array = nullptr;
  const void *data = nullptr;
  size_t size = 0;

  PyObject *view(void *data_in, size_t count, int typenum) {
    if (array != nullptr && data == data_in && size == count) return array;
    static int64_t empty[1];  // numpy allocates for a NULL pointer; a zero-length view needs none
    npy_intp dims[1] = {static_cast<npy_intp>(count)};
    PyObject *fresh = PyArray_SimpleNewFromData(1, dims, typenum, data_in != nullptr ? data_in : empty);
    if (fresh == nullptr) throw_python_error();
    Py_XDECREF(array);
    array = fresh;
    data = data_in;
    size = count;
    return array;
  }
  void clear() {
    Py_CLEAR(array);
    data = nullptr;
    size = 0;
  }
};

struct Bridge {
  PyObject *target = nullptr;  // strong references, released by destroy (with the GIL)
  PyObject *allreduce_name = nullptr;
  PyObject *broadcast_name = nullptr;
  PyObject *barrier_name = nullptr;
  CachedView int64_view;
  CachedView byte_view;
};

// None for "no limit" (negative), else the seconds as a float.
inline PyObject *timeout_object(double timeout_secs) {
  if (timeout_secs < 0) Py_RETURN_NONE;
  PyObject *value = PyFloat_FromDouble(timeout_secs);
  if (value == nullptr) throw_python_error();
  return value;
}

// Calls target.name(args…) with the GIL; the result is dropped. OpErrors become their status with their
// message; anything else is kept for the session call to re-raise.
template <typename Body>
tw_status upcall(Body &&body) noexcept {
  PyGILState_STATE gil = PyGILState_Ensure();
  tw_status status = TW_OK;
  try {
    body();
  } catch (const PythonError &e) {
    // A status of its own (DeadlineExceededError, …) unless it would read as a clean end of input.
    const bool own_status =
        e.code() != TW_CALLBACK_FAILED && e.code() != TW_OUT_OF_RANGE && e.code() != TW_STOP_ITERATION;
    if (!own_status) detail::pending_exception() = std::current_exception();  // re-raised unchanged
    status = tw_set_error(own_status ? e.code() : TW_CALLBACK_FAILED, e.what());
  } catch (...) {
    status = detail::guarded([] { throw; });
  }
  PyGILState_Release(gil);
  return status;
}

inline void call_method(PyObject *target, PyObject *name, PyObject *a, PyObject *b, PyObject *c) {
  PyObject *result = PyObject_CallMethodObjArgs(target, name, a, b, c, nullptr);
  if (result == nullptr) throw_python_error();
  Py_DECREF(result);
}

inline tw_status allreduce_int64(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout_secs) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall([&] {
    PyObject *array = bridge->int64_view.view(values, count, NPY_INT64);
    Owned op_object(PyLong_FromLong(op));
    Owned timeout(timeout_object(timeout_secs));
    call_method(bridge->target, bridge->allreduce_name, array, op_object.object, timeout.object);
  });
}

inline tw_status broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout_secs) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall([&] {
    PyObject *array = bridge->byte_view.view(data, size, NPY_UINT8);
    Owned root_object(PyLong_FromLong(root));
    Owned timeout(timeout_object(timeout_secs));
    call_method(bridge->target, bridge->broadcast_name, array, root_object.object, timeout.object);
  });
}

inline tw_status barrier(void *user_data, double timeout_secs) {
  auto *bridge = static_cast<Bridge *>(user_data);
  return upcall([&] {
    Owned timeout(timeout_object(timeout_secs));
    PyObject *result = PyObject_CallMethodObjArgs(bridge->target, bridge->barrier_name, timeout.object, nullptr);
    if (result == nullptr) throw_python_error();
    Py_DECREF(result);
  });
}

inline void destroy(void *user_data) {
  auto *bridge = static_cast<Bridge *>(user_data);
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    bridge->int64_view.clear();
    bridge->byte_view.clear();
    Py_XDECREF(bridge->target);
    Py_XDECREF(bridge->allreduce_name);
    Py_XDECREF(bridge->broadcast_name);
    Py_XDECREF(bridge->barrier_name);
    PyGILState_Release(gil);
  }
  delete bridge;
}

}  // namespace collective_detail

// Makes `collective` (an object with allreduce_int64(values, op, timeout), broadcast(data, root,
// timeout) and barrier(timeout)) the collective of every session created from `options`, as rank
// `rank` of `world_size`. None removes it. The options keep a reference to the object.
inline void set_collective(Options &options, PyObject *collective, int rank, int world_size) {
  if (collective == Py_None) {
    detail::call([&] { return tw_options_set_collective(options.handle(), nullptr, nullptr); });
    return;
  }
  auto *bridge = new collective_detail::Bridge;
  Py_INCREF(collective);
  bridge->target = collective;
  bridge->allreduce_name = PyUnicode_InternFromString("allreduce_int64");
  bridge->broadcast_name = PyUnicode_InternFromString("broadcast");
  bridge->barrier_name = PyUnicode_InternFromString("barrier");
  tw_collective table = TW_COLLECTIVE_INIT;
  table.rank = rank;
  table.world_size = world_size;
  table.allreduce_int64 = &collective_detail::allreduce_int64;
  table.broadcast = &collective_detail::broadcast;
  table.barrier = &collective_detail::barrier;
  table.destroy = &collective_detail::destroy;
  if (bridge->allreduce_name == nullptr || bridge->broadcast_name == nullptr || bridge->barrier_name == nullptr) {
    collective_detail::destroy(bridge);
    throw_python_error();
  }
  const tw_status status = tw_options_set_collective(options.handle(), &table, bridge);
  if (status != TW_OK) {
    const std::string message = tw_last_error_message();
    collective_detail::destroy(bridge);  // on error the options did not take it
    throw Error(status, message);
  }
}

}  // namespace python
}  // namespace trainwatch

#endif  // TRAINWATCH_PYTHON_COLLECTIVE_HPP
