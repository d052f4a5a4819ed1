using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// What a session runs hooks through: one reference to a native hook. Built-in hooks (the BuiltinHook
/// subclasses: StopAtStepHook, NanTensorHook, CheckpointSaverHook, …) and SessionRunHook subclasses
/// are Hooks. A session keeps the hooks it was given: disposing a SessionRunHook a session still uses
/// makes that session's callbacks to it fail with FailedPreconditionException, while a built-in hook,
/// and the C# functions it calls, keep working in the sessions that hold it.
/// </summary>
public abstract class Hook : IDisposable {
  bool disposed;

  /// <summary>The native hook; ObjectDisposedException after Dispose.</summary>
  internal Native.HookHandle Handle {
    get {
      if (disposed) throw new ObjectDisposedException(GetType().Name);
      return NativeHandle;
    }
  }

  internal abstract Native.HookHandle NativeHandle { get; }

  /// <summary>What a session runs for this hook: the hook, or the wrapper of a subclass's overrides.</summary>
  internal virtual Native.HookHandle SessionHandle { get { return Handle; } }

  /// <summary>The name used in the library's messages.</summary>
  public string Name { get { return Handle.Name(); } }

  public void Dispose() {
    if (disposed) return;
    disposed = true;
    ReleaseNative();
    GC.SuppressFinalize(this);
  }

  /// <summary>Deletes the native objects (once).</summary>
  internal abstract void ReleaseNative();
}

/// <summary>
/// A hook the library implements, held by its native handle. Subclass it as TF code subclasses
/// tf.train's hooks: override Begin, AfterCreateSession, BeforeRun, AfterRun, End (or OnError) and the
/// session calls the overrides in TF's order; base.AfterRun(context) (and the others) runs the
/// built-in's callback — base.BeforeRun requests what the built-in fetches (RunContext.Requests),
/// base.AfterRun does its work (the NaN check and its action, logging, saving, stopping…) — and not
/// calling it skips it. The overrides are found by reflection when a session first takes the hook; a
/// subclass that overrides none runs fully natively.
/// </summary>
public abstract class BuiltinHook : Hook {
  readonly Native.HookHandle handle;
  bool prepared;
  SubclassedHook overrides;  // the wrapper a session runs when the subclass overrides something

  internal BuiltinHook(Native.HookHandle handle) { this.handle = handle; }

  internal override Native.HookHandle NativeHandle { get { return handle; } }

  internal override Native.HookHandle SessionHandle {
    get {
      Native.HookHandle own = Handle;
      if (!prepared) {
        overrides = SubclassedHook.For(this, own);
        prepared = true;
      }
      return overrides != null ? overrides.Hook() : own;
    }
  }

  // The wrapper of a subclass's overrides keeps its own reference to the built-in: sessions holding
  // this hook go on calling the overrides, and their base calls, after Dispose. The wrapper is left to
  // the collector, which frees it once no session holds this hook.
  internal override void ReleaseNative() { handle.Dispose(); }

  /// <summary>The super() calls: valid inside the override of the same name while a session runs it.</summary>
  internal Native.WrappedHook Super {
    get {
      if (overrides == null) {
        throw new FailedPreconditionException(GetType().Name + ": the built-in's callbacks run as base calls from a " +
                                              "subclass's overrides, while a session runs them");
      }
      return overrides.SuperCalls;
    }
  }

  /// <summary>The callbacks and extension points this hook's class overrides (C# calls while it runs),
  /// in TF's order; empty for a built-in hook, or a subclass overriding none, which runs fully natively.</summary>
  public IReadOnlyList<string> OverriddenCallbacks { get { return SubclassedHook.Overridden(this); } }

  /// <summary>TF's begin(): the built-in's.</summary>
  public virtual void Begin(SessionRef session) {
    Native.SessionRef s = Checked(session);
    CallbackGuard.Call(() => Super.SuperBegin(s));
  }

  /// <summary>TF's after_create_session(session, coord): the built-in's.</summary>
  public virtual void AfterCreateSession(SessionRef session) {
    Native.SessionRef s = Checked(session);
    CallbackGuard.Call(() => Super.SuperAfterCreateSession(s));
  }

  /// <summary>TF's before_run(run_context): requests what the built-in fetches (RunContext.Requests) and feeds.</summary>
  public virtual void BeforeRun(RunContext context) {
    Native.RunContext c = Checked(context);
    CallbackGuard.Call(() => Super.SuperBeforeRun(c));
  }

  /// <summary>TF's after_run(run_context, run_values): the built-in's work over its fetched values.</summary>
  public virtual void AfterRun(RunContext context) {
    Native.RunContext c = Checked(context);
    CallbackGuard.Call(() => Super.SuperAfterRun(c));
  }

  /// <summary>TF's end(session): the built-in's.</summary>
  public virtual void End(SessionRef session) {
    Native.SessionRef s = Checked(session);
    CallbackGuard.Call(() => Super.SuperEnd(s));
  }

  /// <summary>Instead of End when a run failed: the built-in's. It cannot fail.</summary>
  public virtual void OnError(SessionRef session, Status error) { Super.SuperOnError(Checked(session), (int)error); }

  static Native.SessionRef Checked(SessionRef session) {
    if (session == null) throw new InvalidArgumentException("session is null");
    return session.Checked;
  }

  static Native.RunContext Checked(RunContext context) {
    if (context == null) throw new InvalidArgumentException("context is null");
    return context.Checked;
  }
}

}  // namespace TrainWatch
