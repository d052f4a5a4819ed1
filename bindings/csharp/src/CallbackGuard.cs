using System;
using System.Runtime.ExceptionServices;
using System.Threading;

namespace TrainWatch {

/// <summary>
/// Keeps managed exceptions out of native frames, and brings them back out of the call that ran the
/// callback. A callback's body runs in Invoke: what it throws is kept on this thread under a fresh
/// ticket, recorded natively (ticket, status, message; see bindings/swig/csharp/managed_callbacks.hpp)
/// and the callback returns false. The facade fails the C call with that status and rethrows a
/// ManagedError after the library has returned; csharp.i's %exception calls RaiseFromNative with its
/// ticket, which makes the kept object SWIG's pending exception, thrown by the generated proxy. Call
/// then restores the stack trace the exception had in the callback.
/// </summary>
internal static class CallbackGuard {
  internal delegate void RaiseDelegate(int code, string message, long ticket);

  /// <summary>Registered with the glue (nativePINVOKE's static constructor) for the life of the process.</summary>
  internal static readonly RaiseDelegate RaiseFromNative = Raise;

  static long lastTicket;
  [ThreadStatic] static long keptTicket;
  [ThreadStatic] static ExceptionDispatchInfo kept;
  [ThreadStatic] static ExceptionDispatchInfo raised;

  /// <summary>Runs a callback body: true when it returned, false when it threw (the exception is kept).</summary>
  internal static bool Invoke(Action body) {
    try {
      body();
      return true;
    } catch (Exception e) {
      Keep(e);
      return false;
    }
  }

  /// <summary>Runs a callback that cannot fail (on_error, log lines): what it throws is dropped.</summary>
  internal static void InvokeDropping(Action body) {
    try {
      body();
    } catch (Exception) {
      // Nothing can fail here, and nothing may reach native code.
    }
  }

  /// <summary>Runs a call into the library that may run callbacks.</summary>
  internal static void Call(Action nativeCall) {
    try {
      nativeCall();
    } catch (Exception e) {
      RethrowFromCallback(e);
      throw;
    }
  }

  internal static T Call<T>(Func<T> nativeCall) {
    try {
      return nativeCall();
    } catch (Exception e) {
      RethrowFromCallback(e);
      throw;
    }
  }

  static void Keep(Exception e) {
    try {
      long ticket = Interlocked.Increment(ref lastTicket);
      kept = ExceptionDispatchInfo.Capture(e);
      keptTicket = ticket;
      var failed = e as TrainWatchException;
      Native.native.record_failure((int)(failed != null ? failed.Code : Status.CallbackFailed), Describe(e), ticket);
    } catch (Exception) {
      // Recording failed (out of memory): the run still fails, as CallbackFailed without the object.
    }
  }

  static string Describe(Exception e) {
    return e is TrainWatchException ? e.Message : e.GetType().FullName + ": " + e.Message;
  }

  // Called from native code (csharp.i's %exception): must not throw.
  static void Raise(int code, string message, long ticket) {
    try {
      Exception pending;
      if (ticket != 0 && ticket == keptTicket && kept != null) {
        raised = kept;
        pending = kept.SourceException;
        kept = null;
        keptTicket = 0;
      } else {
        pending = TrainWatchException.FromStatus((Status)code, message ?? "");
      }
      Native.nativePINVOKE.SWIGPendingException.Set(pending);
    } catch (Exception) {
      // An earlier pending exception is still unthrown: the proxy throws that one.
    }
  }

  // A callback's exception, thrown again by the generated proxy, gets its callback stack trace back.
  static void RethrowFromCallback(Exception e) {
    ExceptionDispatchInfo origin = raised;
    raised = null;
    if (origin != null && ReferenceEquals(origin.SourceException, e)) origin.Throw();
  }
}

}  // namespace TrainWatch
