using System;
using System.Collections.Generic;
using System.Reflection;

namespace TrainWatch {

/// <summary>
/// How a C# subclass of a built-in hook runs: what its class overrides — TF's callbacks and the
/// extension points (LogTensors, LogAndRecord, Save) — is found by reflection
/// (MethodInfo.GetBaseDefinition) when a session first takes the hook, and the session gets this
/// wrapper, the director of ManagedWrappedHook, whose overridden methods call the C# ones guarded by
/// CallbackGuard; the rest stays the built-in's, run natively. Base calls go through SuperCalls
/// calls.
/// </summary>
internal sealed class SubclassedHook : Native.ManagedWrappedHook {
  /// <summary>An overridable method: where the built-in declares it, its parameters, its bit in the mask.</summary>
  sealed class Overridable {
    internal readonly Type Declarer;
    internal readonly string Name;
    internal readonly Type[] Parameters;
    internal readonly Native.WrappedHook.Overrides Bit;

    internal Overridable(Type declarer, string name, Native.WrappedHook.Overrides bit, params Type[] parameters) {
      Declarer = declarer;
      Name = name;
      Bit = bit;
      Parameters = parameters;
    }
  }

  // TF's order.
  static readonly Overridable[] Methods = {
    new Overridable(typeof(BuiltinHook), "Begin", Native.WrappedHook.Overrides.overrides_begin, typeof(SessionRef)),
    new Overridable(typeof(BuiltinHook), "AfterCreateSession", Native.WrappedHook.Overrides.overrides_after_create_session,
                    typeof(SessionRef)),
    new Overridable(typeof(BuiltinHook), "BeforeRun", Native.WrappedHook.Overrides.overrides_before_run, typeof(RunContext)),
    new Overridable(typeof(BuiltinHook), "AfterRun", Native.WrappedHook.Overrides.overrides_after_run, typeof(RunContext)),
    new Overridable(typeof(BuiltinHook), "End", Native.WrappedHook.Overrides.overrides_end, typeof(SessionRef)),
    new Overridable(typeof(BuiltinHook), "OnError", Native.WrappedHook.Overrides.overrides_on_error, typeof(SessionRef),
                    typeof(Status)),
    new Overridable(typeof(LoggingTensorHook), "LogTensors", Native.WrappedHook.Overrides.overrides_log_tensors,
                    typeof(IReadOnlyList<Tensor>)),
    new Overridable(typeof(StepCounterHook), "LogAndRecord", Native.WrappedHook.Overrides.overrides_log_and_record,
                    typeof(long), typeof(double), typeof(long)),
    new Overridable(typeof(CheckpointSaverHook), "Save", Native.WrappedHook.Overrides.overrides_save, typeof(SessionRef),
                    typeof(long)),
  };

  readonly BuiltinHook hook;
  readonly List<Tensor> feeds = new List<Tensor>();  // what the overrides fed, read during the run
  internal readonly Native.WrappedHook SuperCalls;   // this object, as the class with the super calls

  SubclassedHook(BuiltinHook hook, Native.HookHandle inner, int overridden) : base(inner, overridden) {
    this.hook = hook;
    SuperCalls = Wrapped();
  }

  /// <summary>The wrapper running `hook`'s overrides around `inner`, or null when it overrides nothing.</summary>
  internal static SubclassedHook For(BuiltinHook hook, Native.HookHandle inner) {
    int overridden = 0;
    foreach (Overridable m in Methods) {
      if (Overrides(hook, m)) overridden |= (int)m.Bit;
    }
    return overridden == 0 ? null : new SubclassedHook(hook, inner, overridden);
  }

  /// <summary>The names of what `hook`'s class overrides, in TF's order.</summary>
  internal static IReadOnlyList<string> Overridden(BuiltinHook hook) {
    var names = new List<string>();
    foreach (Overridable m in Methods) {
      if (Overrides(hook, m)) names.Add(m.Name);
    }
    return names.AsReadOnly();
  }

  static bool Overrides(BuiltinHook hook, Overridable m) {
    if (!m.Declarer.IsInstanceOfType(hook)) return false;
    MethodInfo method = hook.GetType().GetMethod(m.Name, BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic,
                                                 null, m.Parameters, null);
    return method != null && method.DeclaringType != method.GetBaseDefinition().DeclaringType;
  }

  public override bool ManagedBegin(Native.SessionRef session) {
    return SessionRef.InvokeGuarded(session, "a hook's SessionRef", s => hook.Begin(s));
  }

  public override bool ManagedAfterCreateSession(Native.SessionRef session) {
    return SessionRef.InvokeGuarded(session, "a hook's SessionRef", s => hook.AfterCreateSession(s));
  }

  public override bool ManagedBeforeRun(Native.RunContext ctx) {
    feeds.Clear();
    return RunContext.InvokeGuarded(ctx, feeds, c => hook.BeforeRun(c));
  }

  public override bool ManagedAfterRun(Native.RunContext ctx) {
    return RunContext.InvokeGuarded(ctx, feeds, c => hook.AfterRun(c));
  }

  public override bool ManagedEnd(Native.SessionRef session) {
    return SessionRef.InvokeGuarded(session, "a hook's SessionRef", s => hook.End(s));
  }

  public override void ManagedOnError(Native.SessionRef session, int error) {
    var s = new SessionRef(session, Lifetime.OfCallback("a hook's SessionRef"));
    CallbackGuard.InvokeDropping(() => hook.OnError(s, (Status)error));
    s.ViewLifetime.End();
  }

  public override bool ManagedLogTensors(Native.TensorVector values) {
    Lifetime lifetime = Lifetime.OfCallback("a logged value");
    try {
      return CallbackGuard.Invoke(() => ((LoggingTensorHook)hook).CallLogTensors(Tensor.ViewsOf(values, lifetime)));
    } finally {
      lifetime.End();
    }
  }

  public override bool ManagedLogAndRecord(long elapsedSteps, double elapsedTime, long globalStep) {
    return CallbackGuard.Invoke(() => ((StepCounterHook)hook).CallLogAndRecord(elapsedSteps, elapsedTime, globalStep));
  }

  public override bool ManagedSave(Native.SessionRef session, long step) {
    return SessionRef.InvokeGuarded(session, "a CheckpointSaverHook's SessionRef",
                                    s => SetStop(((CheckpointSaverHook)hook).CallSave(s, step)));
  }
}

}  // namespace TrainWatch
