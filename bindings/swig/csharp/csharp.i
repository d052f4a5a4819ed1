// The C# part of bindings/swig/trainwatch.i (included there, before the facade).
//
// What SWIG generates here is the assembly's internal layer (namespace TrainWatch.Native, made
// internal by bindings/csharp/run_swig.py); the public API is hand-written over it
// (bindings/csharp/src). C# subclasses only the Managed* classes of managed_callbacks.hpp, whose
// callbacks return false instead of throwing, so no managed exception unwinds through native frames.
%{
#include "csharp/managed_callbacks.hpp"
%}

// std::runtime_error is the facade's business.
%warnfilter(401) trainwatch::Error;

// PascalCase methods and fields, as C# names them (members only: a rename of free functions would
// override the common file's %ignore of the facade's internals).
%rename("%(camelcase)s", %$isfunction, %$ismember) "";
%rename("%(camelcase)s", %$isvariable, %$ismember) "";

// Raw addresses cross as IntPtr (a pinned array, unmanaged memory).
%apply void *VOID_INT_PTR { void *data };

// ------------------------------------------------------------------------------------------------
// Exceptions: a failing call leaves one pending C# exception, thrown by the generated proxy after the
// P/Invoke returns (SWIGPendingException). TrainWatch.CallbackGuard registers the function that makes
// it: the exception object a C# callback threw (by its ticket), or the class of the status.
// ------------------------------------------------------------------------------------------------
%{
typedef void (SWIGSTDCALL *tw_csharp_raise_fn)(int code, const char *message, int64_t ticket);
static tw_csharp_raise_fn tw_csharp_raise = nullptr;

extern "C" SWIGEXPORT void SWIGSTDCALL TrainWatch_RegisterRaise(tw_csharp_raise_fn raise) { tw_csharp_raise = raise; }

static void tw_csharp_raise_error(tw_status code, const char *message, int64_t ticket) {
  if (tw_csharp_raise != nullptr) {
    tw_csharp_raise(static_cast<int>(code), message, ticket);
  } else {
    SWIG_CSharpSetPendingException(SWIG_CSharpApplicationException, message);
  }
}
%}

%pragma(csharp) imclasscode=%{
  [global::System.Runtime.InteropServices.DllImport("$dllimport", EntryPoint="TrainWatch_RegisterRaise")]
  private static extern void TrainWatch_RegisterRaise(global::TrainWatch.CallbackGuard.RaiseDelegate raise);

  // Registers CallbackGuard.Raise before the first call into the library.
  protected class TrainWatchRaiseHelper {
    static TrainWatchRaiseHelper() {
      TrainWatch_RegisterRaise(global::TrainWatch.CallbackGuard.RaiseFromNative);
    }
  }
  static protected TrainWatchRaiseHelper trainWatchRaiseHelper = new TrainWatchRaiseHelper();
%}

%exception {
  try {
    $action
  } catch (const trainwatch::csharp::ManagedError &e) {
    tw_csharp_raise_error(e.code(), e.what(), e.ticket());
    return $null;
  } catch (const trainwatch::Error &e) {
    tw_csharp_raise_error(e.code(), e.what(), 0);
    return $null;
  } catch (const std::bad_alloc &) {
    SWIG_CSharpSetPendingException(SWIG_CSharpOutOfMemoryException, "out of memory");
    return $null;
  } catch (const std::exception &e) {
    tw_csharp_raise_error(TW_INTERNAL, e.what(), 0);
    return $null;
  } catch (...) {
    tw_csharp_raise_error(TW_INTERNAL, "an unknown C++ exception", 0);
    return $null;
  }
}

// ------------------------------------------------------------------------------------------------
// Callbacks: only the Managed* classes are directors in C#.
// ------------------------------------------------------------------------------------------------
%feature("director", "0") trainwatch::Hook;
%feature("director", "0") trainwatch::WrappedHook;
%feature("director", "0") trainwatch::CheckpointSaverListener;
%feature("director", "0") trainwatch::StepFunction;
%feature("director", "0") trainwatch::InitFunction;
%feature("director", "0") trainwatch::ReadyFunction;
%feature("director", "0") trainwatch::NanFunction;
%feature("director", "0") trainwatch::LogSink;
%feature("director", "0") trainwatch::LogFormatter;
%feature("director", "0") trainwatch::FeedFunction;
%feature("director", "0") trainwatch::GlobalStepFunction;

%feature("director") trainwatch::csharp::ManagedHook;
%feature("director") trainwatch::csharp::ManagedStep;
%feature("director") trainwatch::csharp::ManagedListener;
%feature("director") trainwatch::csharp::ManagedNanFunction;
%feature("director") trainwatch::csharp::ManagedLogSink;
%feature("director") trainwatch::csharp::ManagedInitFunction;
%feature("director") trainwatch::csharp::ManagedReadyFunction;
%feature("director") trainwatch::csharp::ManagedLogFormatter;
%feature("director") trainwatch::csharp::ManagedFeedFunction;
%feature("director") trainwatch::csharp::ManagedGlobalStepFunction;
%feature("director") trainwatch::csharp::ManagedWrappedHook;

// What SWIG sees of managed_callbacks.hpp: the classes without their facade bases (whose virtuals are
// final there), reaching the facade object through an accessor.
namespace trainwatch {
class HookHandle;
class SessionRef;
class RunContext;
class StepContext;
class StepFunction;
class CheckpointSaverListener;
class NanFunction;
struct NanEvent;
class Tensor;
class InitFunction;
class ReadyFunction;
class LogFormatter;
class FeedFunction;
class GlobalStepFunction;
class WrappedHook;
namespace csharp {
void record_failure(int code, const std::string &message, int64_t ticket);

class ManagedHook {
 public:
  explicit ManagedHook(const std::string &name);
  virtual ~ManagedHook();
  trainwatch::HookHandle *hook();
  virtual bool managed_begin(trainwatch::SessionRef &session) = 0;
  virtual bool managed_after_create_session(trainwatch::SessionRef &session) = 0;
  virtual bool managed_before_run(trainwatch::RunContext &ctx) = 0;
  virtual bool managed_after_run(trainwatch::RunContext &ctx) = 0;
  virtual bool managed_end(trainwatch::SessionRef &session) = 0;
  virtual void managed_on_error(trainwatch::SessionRef &session, int error) = 0;
};

class ManagedWrappedHook {
 public:
  ManagedWrappedHook(const trainwatch::HookHandle &inner, int overridden);
  virtual ~ManagedWrappedHook();
  trainwatch::HookHandle *hook();
  trainwatch::WrappedHook *wrapped();
  void set_stop(bool stop);
  virtual bool managed_begin(trainwatch::SessionRef &session) = 0;
  virtual bool managed_after_create_session(trainwatch::SessionRef &session) = 0;
  virtual bool managed_before_run(trainwatch::RunContext &ctx) = 0;
  virtual bool managed_after_run(trainwatch::RunContext &ctx) = 0;
  virtual bool managed_end(trainwatch::SessionRef &session) = 0;
  virtual void managed_on_error(trainwatch::SessionRef &session, int error) = 0;
  virtual bool managed_log_tensors(const std::vector<trainwatch::Tensor> &values) = 0;
  virtual bool managed_log_and_record(int64_t elapsed_steps, double elapsed_time, int64_t global_step) = 0;
  virtual bool managed_save(trainwatch::SessionRef &session, int64_t step) = 0;
};

class ManagedStep {
 public:
  ManagedStep();
  virtual ~ManagedStep();
  trainwatch::StepFunction &step();
  virtual bool managed_run(trainwatch::StepContext &ctx) = 0;
};

class ManagedListener {
 public:
  explicit ManagedListener(const std::string &name);
  virtual ~ManagedListener();
  trainwatch::CheckpointSaverListener *listener();
  void request_stop();
  virtual bool managed_begin() = 0;
  virtual bool managed_before_save(trainwatch::SessionRef &session, int64_t global_step) = 0;
  virtual bool managed_after_save(trainwatch::SessionRef &session, int64_t global_step) = 0;
  virtual bool managed_end(trainwatch::SessionRef &session, int64_t global_step) = 0;
};

class ManagedNanFunction {
 public:
  ManagedNanFunction();
  virtual ~ManagedNanFunction();
  trainwatch::NanFunction *function();
  virtual bool managed_on_nan(trainwatch::SessionRef &session, const trainwatch::NanEvent &event) = 0;
};

class ManagedInitFunction {
 public:
  ManagedInitFunction();
  virtual ~ManagedInitFunction();
  trainwatch::InitFunction *function();
  virtual bool managed_run(trainwatch::SessionRef &session) = 0;
};

class ManagedReadyFunction {
 public:
  ManagedReadyFunction();
  virtual ~ManagedReadyFunction();
  trainwatch::ReadyFunction *function();
  void set_ready(bool ready);
  virtual bool managed_ready(trainwatch::SessionRef &session) = 0;
};

class ManagedLogFormatter {
 public:
  ManagedLogFormatter();
  virtual ~ManagedLogFormatter();
  trainwatch::LogFormatter *formatter();
  void set_text(const std::string &text);
  virtual bool managed_format(const std::vector<trainwatch::Tensor> &values) = 0;
};

class ManagedFeedFunction {
 public:
  ManagedFeedFunction();
  virtual ~ManagedFeedFunction();
  trainwatch::FeedFunction *function();
  void add_feed(const trainwatch::Tensor &feed);
  virtual bool managed_feeds() = 0;
};

class ManagedGlobalStepFunction {
 public:
  ManagedGlobalStepFunction();
  virtual ~ManagedGlobalStepFunction();
  trainwatch::GlobalStepFunction *function();
  void set_global_step(int64_t step);
  virtual bool managed_global_step(trainwatch::SessionRef &session) = 0;
};

class ManagedLogSink {
 public:
  ManagedLogSink();
  virtual ~ManagedLogSink();
  virtual void managed_write(int level, const std::string &message) = 0;
};

void set_managed_log_sink(ManagedLogSink *sink);
}  // namespace csharp
}  // namespace trainwatch
