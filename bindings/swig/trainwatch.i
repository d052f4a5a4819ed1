// SWIG interface of trainwatch: wraps the C++ facade (bindings/cpp/trainwatch.hpp), never the C
// internals. One file for every SWIG language: what only Python needs sits under SWIGPYTHON; Java and
// C# add their own sections (exception mapping, typemaps) the same way.
//
// Directors let the target language subclass the facade's callback classes (Hook,
// CheckpointSaverListener, StepFunction, InitFunction, ReadyFunction, NanFunction, LogSink,
// LogFormatter, FeedFunction, GlobalStepFunction). The facade's trampolines already catch whatever a
// director throws and rethrow it from the C call that ran it, so each language only has to turn its
// own exception into a C++ one (director:except) and back (%exception). On LP64 systems pass
// -DSWIGWORDSIZE64 so that int64_t maps to `long` (bindings/python/trainwatch/meson.build does).
%module(directors="1") native  // Java and C# pass -module to choose their own name

%{
#include "trainwatch.hpp"
%}

%include <stdint.i>
%include <std_string.i>
%include <std_vector.i>

// ------------------------------------------------------------------------------------------------
// Constants of the C header: status codes, dtypes, option keys, enums. Its functions and structs are
// the facade's business, so those are left out.
// ------------------------------------------------------------------------------------------------
#define TW_API
%rename("$ignore", %$isfunction, regextarget=1) "^tw_";
%rename("$ignore", %$isclass, regextarget=1) "^tw_";
%rename("$ignore", regextarget=1) "_MAX_ENUM_$";
%include "trainwatch/common.h"
%include "trainwatch/session.h"
%include "trainwatch/hooks.h"
%include "trainwatch/summary.h"
%constant int64_t UNSET = TW_UNSET;

// ------------------------------------------------------------------------------------------------
// What the facade keeps for C++ callers only
// ------------------------------------------------------------------------------------------------
%rename("$ignore", regextarget=1, fullname=1) "^trainwatch::detail::";
%ignore trainwatch::Tensor::from_c;
%ignore trainwatch::Tensor::c_tensor;
%ignore trainwatch::Tensor::data;
%ignore trainwatch::StepFunction::trampoline;
%ignore trainwatch::FeedFunction::trampoline;
%ignore trainwatch::HookHandle::operator=;
%ignore handle;
%copyctor trainwatch::SessionRef;

%template(TensorVector) std::vector<trainwatch::Tensor>;
%template(Int64Vector) std::vector<int64_t>;
%template(DoubleVector) std::vector<double>;
%template(StringVector) std::vector<std::string>;
%template(HookVector) std::vector<trainwatch::HookHandle *>;
%template(ListenerVector) std::vector<trainwatch::CheckpointSaverListener *>;

%feature("director") trainwatch::Hook;
%feature("director") trainwatch::CheckpointSaverListener;
%feature("director") trainwatch::StepFunction;
%feature("director") trainwatch::InitFunction;
%feature("director") trainwatch::ReadyFunction;
%feature("director") trainwatch::NanFunction;
%feature("director") trainwatch::LogSink;
%feature("director") trainwatch::LogFormatter;
%feature("director") trainwatch::FeedFunction;
%feature("director") trainwatch::GlobalStepFunction;

#ifdef SWIGPYTHON
// ------------------------------------------------------------------------------------------------
// Python: exceptions, the GIL, zero-copy tensors
// ------------------------------------------------------------------------------------------------
%{
#include "python/python_error.hpp"
#include "python/python_tensors.hpp"
%}
%init %{
  import_array1(nullptr);
%}

// A Python override that raises: keep the exception object itself for the C call to rethrow.
%feature("director:except") {
  if ($error != nullptr) throw trainwatch::python::PythonError::fetch();
}

// Any facade call: a Python exception raised in a callback comes out unchanged; a failing status
// becomes the package's exception class for it (OutOfRangeError, …).
%exception {
  try {
    $action
  } catch (const trainwatch::python::PythonError &e) {
    e.restore();
    SWIG_fail;
  } catch (const trainwatch::Error &e) {
    trainwatch::python::raise_status(e);
    SWIG_fail;
  } catch (const Swig::DirectorException &) {
    SWIG_fail;  // the Python error is already set
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
    SWIG_fail;
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    SWIG_fail;
  }
}

// The module is built with -threads. Calls keep the GIL by default (most are quick, and the Python
// helpers touch Python objects); the ones that take long or may wait for the library's background
// threads release it — those threads log through Python meanwhile, and checkpoint I/O and scans let
// other Python threads run.
%nothread;
%thread trainwatch::Session::Session;
%thread trainwatch::Session::~Session;
%thread trainwatch::Session::run;
%thread trainwatch::Session::close;
%thread trainwatch::SessionRef::run_without_hooks;
%thread trainwatch::HookHandle::~HookHandle;
%thread trainwatch::Hook::~Hook;
%thread trainwatch::CheckpointSaverHook::~CheckpointSaverHook;
%thread trainwatch::scan;
%thread trainwatch::summarize;
%thread trainwatch::has_nonfinite;
%thread trainwatch::check_numerics;
%thread trainwatch::Saver;
%thread trainwatch::Saver::Saver;
%thread trainwatch::Saver::~Saver;
%thread trainwatch::Saver::save;
%thread trainwatch::Saver::restore;
%thread trainwatch::Saver::restore_variables;
%thread trainwatch::Saver::restore_newest_good;
%thread trainwatch::Saver::recover_last_checkpoints;
%thread trainwatch::latest_checkpoint;
%thread trainwatch::list_variables;
%thread trainwatch::load_variable;
%thread trainwatch::verify_checkpoint;
%thread trainwatch::SummaryWriter::SummaryWriter;
%thread trainwatch::SummaryWriter::~SummaryWriter;
%thread trainwatch::SummaryWriter::flush;
%thread trainwatch::SummaryWriter::close;
%thread trainwatch::EventReader::next;
// Director upcalls take the GIL (they may come from a thread that released it, or from a background one).
%thread trainwatch::Hook::begin;
%thread trainwatch::Hook::after_create_session;
%thread trainwatch::Hook::before_run;
%thread trainwatch::Hook::after_run;
%thread trainwatch::Hook::end;
%thread trainwatch::Hook::on_error;
%thread trainwatch::CheckpointSaverListener::begin;
%thread trainwatch::CheckpointSaverListener::before_save;
%thread trainwatch::CheckpointSaverListener::after_save;
%thread trainwatch::CheckpointSaverListener::end;
%thread trainwatch::StepFunction::run;
%thread trainwatch::InitFunction::run;
%thread trainwatch::ReadyFunction::ready;
%thread trainwatch::NanFunction::on_nan;
%thread trainwatch::LogSink::write;
%thread trainwatch::LogFormatter::format;
%thread trainwatch::FeedFunction::feeds;
%thread trainwatch::GlobalStepFunction::global_step;

%typemap(out) PyObject * "$result = $1;";
%ignore trainwatch::python::HeldTensor;
%ignore trainwatch::python::TensorSet::for_each_item;
namespace trainwatch { namespace python {
class TensorSet {
 public:
  TensorSet();
  ~TensorSet();
  void add(const std::string &name, PyObject *object, bool writable = false, const std::string &kind = "value");
  void add_dict(PyObject *mapping, bool writable = false, const std::string &kind = "value");
  const std::vector<trainwatch::Tensor> &tensors() const;
  size_t size() const;
  void clear();
};
void publish_outputs(trainwatch::StepContext &ctx, PyObject *outputs, TensorSet &keep_alive);
void add_feeds(trainwatch::RunContext &ctx, PyObject *feed_dict, TensorSet &keep_alive);
PyObject *to_numpy(const trainwatch::Tensor &t);
PyObject *as_numpy(const trainwatch::Tensor &t, PyObject *base);
void set_error_factory(PyObject *factory);
}}
#else
%include <exception.i>
%exception {
  try {
    $action
  } catch (const std::exception &e) {
    SWIG_exception(SWIG_RuntimeError, e.what());
  }
}
#endif

%include "trainwatch.hpp"
