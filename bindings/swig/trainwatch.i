// SWIG interface of trainwatch: wraps the C++ facade (bindings/cpp/trainwatch.hpp), never the C
// internals. One file for every SWIG language: what is common sits here; each language's own part
// (exception mapping, typemaps, naming) is in <language>/<language>.i, included below (swig -I
// bindings/swig).
//
// Directors let the target language subclass the facade's callback classes (Hook, WrappedHook,
// CheckpointSaverListener, StepFunction, InitFunction, ReadyFunction, NanFunction, LogSink,
// ProgressSink, LogFormatter, FeedFunction, GlobalStepFunction); each language's package wraps the log
// and progress sinks in its own idiom (a Python function, a Java ProgressListener, a C# delegate). The
// facade's trampolines already catch whatever a director throws and rethrow it from the C call that ran
// it (the sinks' drop it), so each language only has to turn its own exception into a C++ one
// (director:except) and back (%exception). On LP64 systems pass -DSWIGWORDSIZE64 so that int64_t is
// `long` as in C++ (the Python and Java builds do; java_names.i then maps C long to Java long).
%module(directors="1") native  // Java and C# pass -module to choose their own name

%{
#include "trainwatch.hpp"
%}

%include <stdint.i>
%include <std_string.i>
%include <std_vector.i>
// What must precede every declaration: each language's integer widths (used by the templates below)
// and naming rules (a rename only applies to what follows it).
#if defined(SWIGJAVA)
%include "java/java_names.i"
#elif defined(SWIGCSHARP)
%include "csharp/csharp_types.i"
#endif

// ------------------------------------------------------------------------------------------------
// Constants of the C header: status codes, dtypes, option keys, enums. Its functions and structs are
// the facade's business, so those are left out.
// ------------------------------------------------------------------------------------------------
#define TW_API
#define TW_NODISCARD
%rename("$ignore", %$isfunction, regextarget=1) "^tw_";
%rename("$ignore", %$isclass, regextarget=1) "^tw_";
%rename("$ignore", regextarget=1) "_MAX_ENUM_$";
%include "trainwatch/common.h"
%include "trainwatch/session.h"
%include "trainwatch/hooks.h"
%include "trainwatch/summary.h"
%include "trainwatch/checkpoint.h"  // tw_progress_kind
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
#if !defined(SWIGPYTHON)
%ignore trainwatch::SummaryWriter::add_summary;  // serialized bytes: only python.i maps them
// A saver borrowing the options' variables: only the Python package keeps them alive with the saver.
%ignore trainwatch::Saver::Saver(const Options &);
#endif

%template(TensorVector) std::vector<trainwatch::Tensor>;
%template(Int64Vector) std::vector<int64_t>;
%template(DoubleVector) std::vector<double>;
%template(StringVector) std::vector<std::string>;
%template(HookVector) std::vector<trainwatch::HookHandle *>;
%template(ListenerVector) std::vector<trainwatch::CheckpointSaverListener *>;

%feature("director") trainwatch::Hook;
%feature("director") trainwatch::WrappedHook;  // subclassing a built-in hook (TF's class MyHook(NanTensorHook))
%feature("director") trainwatch::CheckpointSaverListener;
%feature("director") trainwatch::StepFunction;
%feature("director") trainwatch::InitFunction;
%feature("director") trainwatch::ReadyFunction;
%feature("director") trainwatch::NanFunction;
%feature("director") trainwatch::LogSink;
%feature("director") trainwatch::ProgressSink;
%feature("director") trainwatch::LogFormatter;
%feature("director") trainwatch::FeedFunction;
%feature("director") trainwatch::GlobalStepFunction;

// Each language's own part: exceptions, typemaps, naming, threads.
#if defined(SWIGPYTHON)
%include "python/python.i"
#elif defined(SWIGJAVA)
%include "java/java.i"
#elif defined(SWIGCSHARP)
%include "csharp/csharp.i"
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

// The facade's parts, each after the ones it builds on (SWIG does not follow their #includes).
%include "trainwatch/common.hpp"
%include "trainwatch/numerics.hpp"
%include "trainwatch/session.hpp"
%include "trainwatch/summary.hpp"
%include "trainwatch/hooks.hpp"
%include "trainwatch/checkpoint.hpp"
