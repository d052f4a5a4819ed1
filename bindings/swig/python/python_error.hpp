// Python exceptions through the C++ facade, both ways.
//
// Python → C: a Python callback (director method) that raises is turned into PythonError, which owns
// the exception object (type, value, traceback). The facade's trampoline stores it and returns its
// status to the library; the C call's wrapper rethrows it and restore() raises the very same object
// in Python, traceback included.
//
// C → Python: trainwatch::Error becomes the Python exception class the package registered for the
// status code (set_error_factory), e.g. OutOfRangeError for TW_OUT_OF_RANGE.
//
// Every function here needs the GIL, except ~PythonError, which takes it.
#ifndef TRAINWATCH_PYTHON_ERROR_HPP
#define TRAINWATCH_PYTHON_ERROR_HPP

#include <Python.h>

#include <string>
#include <utility>

#include "trainwatch.hpp"

namespace trainwatch {
namespace python {

// A strong reference that takes the GIL to let go (it may die where the GIL was released).
class GilRef {
 public:
  GilRef() = default;
  explicit GilRef(PyObject *owned) noexcept : object_(owned) {}
  GilRef(const GilRef &other) : object_(other.object_) {
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_XINCREF(object_);
    PyGILState_Release(gil);
  }
  GilRef(GilRef &&other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  GilRef &operator=(GilRef &&other) noexcept {
    std::swap(object_, other.object_);
    return *this;
  }
  ~GilRef() {
    if (object_ == nullptr) return;
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(object_);
    PyGILState_Release(gil);
  }
  PyObject *get() const noexcept { return object_; }

 private:
  PyObject *object_ = nullptr;
};

// The status a Python exception stands for: an OpError's error_code (AbortedError → TW_ABORTED, so a
// callback can trigger recovery), StopIteration → TW_STOP_ITERATION, anything else TW_CALLBACK_FAILED.
inline tw_status status_of(PyObject *exception) {
  if (PyErr_GivenExceptionMatches(exception, PyExc_StopIteration)) return TW_STOP_ITERATION;
  PyObject *code = PyObject_GetAttrString(exception, "error_code");
  if (code == nullptr) {
    PyErr_Clear();
    return TW_CALLBACK_FAILED;
  }
  const long value = PyLong_Check(code) ? PyLong_AsLong(code) : 0;
  Py_DECREF(code);
  if (PyErr_Occurred() != nullptr) PyErr_Clear();
  return value > 0 && value != TW_CALLBACK_FAILED && value <= INT32_MAX ? static_cast<tw_status>(value)
                                                                        : TW_CALLBACK_FAILED;
}

// "ValueError: the text" for the library's error message.
inline std::string describe(PyObject *exception) {
  std::string text = Py_TYPE(exception)->tp_name;
  PyObject *str = PyObject_Str(exception);
  const char *utf8 = str != nullptr ? PyUnicode_AsUTF8(str) : nullptr;
  if (utf8 != nullptr && utf8[0] != '\0') text += std::string(": ") + utf8;
  Py_XDECREF(str);
  if (PyErr_Occurred() != nullptr) PyErr_Clear();
  return text;
}

class PythonError : public Error {
 public:
  // Takes the pending Python exception off this thread (PyErr_Occurred() must be set).
  static PythonError fetch() {
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != nullptr) PyException_SetTraceback(value, traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    return PythonError(GilRef(value));
  }

  // Raises the original exception object again (its traceback included). `library_message` is the
  // failed call's status message: where the library added to the exception's own text (the operation
  // it ended, "voting on the parts of checkpoint …"), that text becomes a note on the exception
  // (PEP 678), so the one report the caller gets carries it — the library does not log it (H34).
  void restore(const char *library_message) const {
    PyObject *value = exception_.get();
    if (library_message != nullptr && library_message[0] != '\0' && what() != std::string(library_message)) {
      add_note(value, context_of(library_message));
    }
    Py_INCREF(value);
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(value)), value);
    Py_DECREF(value);
  }

 private:
  // What the library said beyond the exception's own text: "during <context>" for the usual
  // "<context>: <exception>", else the whole message.
  std::string context_of(const std::string &library_message) const {
    const std::string own = std::string(": ") + what();
    if (library_message.size() > own.size() &&
        library_message.compare(library_message.size() - own.size(), own.size(), own) == 0) {
      return "during " + library_message.substr(0, library_message.size() - own.size());
    }
    return library_message;
  }

  // exception.add_note("trainwatch: <text>") once; nothing before Python 3.11 (no add_note).
  static void add_note(PyObject *exception, const std::string &text) {
    PyObject *note = PyUnicode_FromFormat("trainwatch: %s", text.c_str());
    PyObject *notes = note != nullptr ? PyObject_GetAttrString(exception, "__notes__") : nullptr;
    if (notes == nullptr) PyErr_Clear();
    const int present = notes != nullptr ? PySequence_Contains(notes, note) : 0;
    if (note != nullptr && present == 0) {
      PyObject *result = PyObject_CallMethod(exception, "add_note", "O", note);
      Py_XDECREF(result);
    }
    Py_XDECREF(notes);
    Py_XDECREF(note);
    if (PyErr_Occurred() != nullptr) PyErr_Clear();
  }

  explicit PythonError(GilRef exception)
      : Error(status_of(exception.get()), describe(exception.get())), exception_(std::move(exception)) {}

  GilRef exception_;
};

// The callable (code, message) → exception instance that the package registers.
inline PyObject *&error_factory() {
  static PyObject *factory = nullptr;
  return factory;
}

inline void set_error_factory(PyObject *factory) {
  Py_XINCREF(factory);
  Py_XDECREF(error_factory());
  error_factory() = factory;
}

// Sets the Python error for a failing status.
inline void raise_status(const Error &error) {
  PyObject *factory = error_factory();
  PyObject *exception =
      factory != nullptr ? PyObject_CallFunction(factory, "is", static_cast<int>(error.code()), error.what()) : nullptr;
  if (exception == nullptr) {
    if (PyErr_Occurred() == nullptr) PyErr_SetString(PyExc_RuntimeError, error.what());
    return;
  }
  PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exception)), exception);
  Py_DECREF(exception);
}

// Throws the Python exception just set (by a CPython call that failed) as a PythonError.
[[noreturn]] inline void throw_python_error() {
  if (PyErr_Occurred() == nullptr) PyErr_SetString(PyExc_SystemError, "a Python call failed without an exception");
  throw PythonError::fetch();
}

// Sets `type` with `message` and throws it.
[[noreturn]] inline void throw_python(PyObject *type, const std::string &message) {
  PyErr_SetString(type, message.c_str());
  throw PythonError::fetch();
}

// Owns one new reference (a CPython call's result) until the scope ends; a null result, the call's
// failure, is thrown as the PythonError it set.
struct Owned {
  PyObject *object;
  explicit Owned(PyObject *o) : object(o) {
    if (o == nullptr) throw_python_error();
  }
  ~Owned() { Py_DECREF(object); }
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
};

}  // namespace python
}  // namespace trainwatch

#endif  // TRAINWATCH_PYTHON_ERROR_HPP
