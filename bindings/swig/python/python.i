// The Python part of bindings/swig/trainwatch.i (included there, before the facade).
// ------------------------------------------------------------------------------------------------
// Python: exceptions, the GIL, zero-copy tensors
// ------------------------------------------------------------------------------------------------
%{
#include "python/python_error.hpp"
#include "python/python_tensors.hpp"
#include "python/python_collective.hpp"
#include "python/python_device.hpp"
%}
%init %{
  import_array1(nullptr);
%}

// A Python override that raises: keep the exception object itself for the C call to rethrow.
%feature("director:except") {
  if ($error != nullptr) throw trainwatch::python::PythonError::fetch();
}

// Any facade call: a Python exception raised in a callback comes out unchanged (with the library's
// context as a note, when it added some); a failing status becomes the package's exception class for
// it (OutOfRangeError, …).
%exception {
  try {
    $action
  } catch (const trainwatch::python::PythonError &e) {
    e.restore(tw_last_error_message());
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
%thread trainwatch::tensor_stats;
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
%thread trainwatch::Saver::close;
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
%thread trainwatch::ProgressSink::report;
%thread trainwatch::LogFormatter::format;
%thread trainwatch::FeedFunction::feeds;
%thread trainwatch::GlobalStepFunction::global_step;
// WrappedHook: the same for its upcalls; calling a default (super()) from Python releases the GIL, since
// the built-in may wait for a background checkpoint write.
%thread trainwatch::WrappedHook::~WrappedHook;
%thread trainwatch::WrappedHook::begin;
%thread trainwatch::WrappedHook::after_create_session;
%thread trainwatch::WrappedHook::before_run;
%thread trainwatch::WrappedHook::after_run;
%thread trainwatch::WrappedHook::end;
%thread trainwatch::WrappedHook::on_error;
%thread trainwatch::WrappedHook::log_tensors;
%thread trainwatch::WrappedHook::log_and_record;
%thread trainwatch::WrappedHook::save;
%thread trainwatch::WrappedHook::super_begin;
%thread trainwatch::WrappedHook::super_after_create_session;
%thread trainwatch::WrappedHook::super_before_run;
%thread trainwatch::WrappedHook::super_after_run;
%thread trainwatch::WrappedHook::super_end;
%thread trainwatch::WrappedHook::super_on_error;
%thread trainwatch::WrappedHook::super_log_tensors;
%thread trainwatch::WrappedHook::super_log_and_record;
%thread trainwatch::WrappedHook::super_save;

%typemap(out) PyObject * "$result = $1;";
// A serialized protobuf comes as bytes (SWIG's std::string typemap takes str only).
%typemap(in) const std::string &serialized (std::string bytes) {
  char *data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize($input, &data, &size) < 0) SWIG_fail;
  bytes.assign(data, static_cast<size_t>(size));
  $1 = &bytes;
}
%typemap(freearg) const std::string &serialized "";
// A path is bytes (os.fsencode's, as the Python package passes it) or str, encoded as os.fsencode does
// on Linux (UTF-8, surrogateescape): a name that is not UTF-8 (a directory b"ckpt\xff") round-trips,
// where SWIG's std::string typemap refuses the surrogates os.fsdecode gives such a name. Paths come
// back as SWIG gives every std::string, decoded with surrogateescape (os.fsdecode's str).
%typemap(in) const std::string &FSPATH (std::string bytes) {
  PyObject *encoded = PyUnicode_Check($input) ? PyUnicode_AsEncodedString($input, "utf-8", "surrogateescape")
                                              : (Py_XINCREF($input), $input);
  char *data = nullptr;
  Py_ssize_t size = 0;
  if (encoded == nullptr) SWIG_fail;
  if (PyBytes_AsStringAndSize(encoded, &data, &size) < 0) {
    Py_DECREF(encoded);
    SWIG_exception_fail(SWIG_TypeError, "in method '$symname', argument $argnum of type 'str' or 'bytes' expected");
  }
  bytes.assign(data, static_cast<size_t>(size));
  Py_DECREF(encoded);
  $1 = &bytes;
}
%typemap(freearg) const std::string &FSPATH "";
%typemap(typecheck, precedence=SWIG_TYPECHECK_STRING) const std::string &FSPATH {
  $1 = PyUnicode_Check($input) || PyBytes_Check($input);
}
%apply const std::string &FSPATH {
  const std::string &path, const std::string &dir, const std::string &prefix, const std::string &checkpoint_dir,
  const std::string &checkpoint_path, const std::string &logdir, const std::string &output_dir,
  const std::string &value
};
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
  void check_unchanged() const;
};
void publish_outputs(trainwatch::StepContext &ctx, PyObject *outputs, TensorSet &keep_alive);
void add_feeds(trainwatch::RunContext &ctx, PyObject *feed_dict, TensorSet &keep_alive);
PyObject *to_numpy(const trainwatch::Tensor &t);
PyObject *as_numpy(const trainwatch::Tensor &t, PyObject *base);
void set_error_factory(PyObject *factory);
void set_collective(trainwatch::Options &options, PyObject *collective, int rank, int world_size);
void set_device(PyObject *device, int device_type, const std::string &name);
void set_device_table(uintptr_t table, uintptr_t user_data);
void unset_device(int device_type);
bool device_registered(int32_t device_type);
}}
