// The C# part of bindings/swig/trainwatch.i (included there, before the facade).
//
// What SWIG generates here is the assembly's internal layer (namespace TrainWatch.Native, made
// internal by bindings/csharp/run_swig.py); the public API is hand-written over it
// (bindings/csharp/src). C# subclasses only the Managed* classes, generated from the table in
// managed_callbacks.py, whose callbacks return false instead of throwing, so no managed exception
// unwinds through native frames (csharp/managed_error.hpp).
%{
#include "managed_callbacks.hpp"
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
// Callbacks: only the Managed* classes are directors in C#. managed_callbacks.i is generated (in the
// build directory, on swig's -I path) from the table of callback kinds in managed_callbacks.py: the
// facade classes' directors off, the Managed* ones on, and the Managed* classes as SWIG sees them.
// ------------------------------------------------------------------------------------------------
namespace trainwatch {
namespace csharp {
void record_failure(int code, const std::string &message, int64_t ticket);
}  // namespace csharp
}  // namespace trainwatch
%include "managed_callbacks.i"
