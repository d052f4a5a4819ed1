using System;
using System.Collections.Generic;
using System.Reflection;

namespace TrainWatch {

/// <summary>
/// How a C# subclass of a built-in hook runs: the callbacks its class overrides are found by
/// reflection (MethodInfo.GetBaseDefinition) when a session first takes the hook, and the session gets
/// this wrapper — the director of ManagedWrappedHook — whose overridden slots call the C# methods,
/// guarded by CallbackGuard; the other slots stay the built-in's, run natively.
/// </summary>
internal sealed class SubclassedHook : Native.ManagedWrappedHook {
  /// <summary>The callbacks of TF's protocol with their parameters and wrapper slot, in TF's order.</summary>
  static readonly KeyValuePair<string, Type[]>[] Callbacks = {
    Callback("Begin", typeof(SessionRef)),
    Callback("AfterCreateSession", typeof(SessionRef)),
    Callback("BeforeRun", typeof(RunContext)),
    Callback("AfterRun", typeof(RunContext)),
    Callback("End", typeof(SessionRef)),
    Callback("OnError", typeof(SessionRef), typeof(Status)),
  };
  static readonly uint[] Slots = {
    (uint)Native.WrappedHook.Slot.BEGIN, (uint)Native.WrappedHook.Slot.AFTER_CREATE_SESSION, (uint)Native.WrappedHook.Slot.BEFORE_RUN,
    (uint)Native.WrappedHook.Slot.AFTER_RUN, (uint)Native.WrappedHook.Slot.END, (uint)Native.WrappedHook.Slot.ON_ERROR,
  };

  readonly BuiltinHook hook;
  readonly List<Tensor> feeds = new List<Tensor>();  // what the overrides fed, read during the run

  SubclassedHook(BuiltinHook hook, Native.HookHandle inner, uint overridden) : base(inner, overridden) {
    this.hook = hook;
  }

  static KeyValuePair<string, Type[]> Callback(string name, params Type[] parameters) {
    return new KeyValuePair<string, Type[]>(name, parameters);
  }

  /// <summary>The wrapper running `hook`'s overrides around `inner`, or null when it overrides none.</summary>
  internal static SubclassedHook For(BuiltinHook hook, Native.HookHandle inner) {
    uint overridden = 0;
    for (int i = 0; i < Callbacks.Length; ++i) {
      if (Overrides(hook.GetType(), Callbacks[i].Key, Callbacks[i].Value)) overridden |= Slots[i];
    }
    return overridden == 0 ? null : new SubclassedHook(hook, inner, overridden);
  }

  /// <summary>The names of the callbacks `type` overrides, in TF's order.</summary>
  internal static IReadOnlyList<string> Overridden(Type type) {
    var names = new List<string>();
    foreach (var c in Callbacks) {
      if (Overrides(type, c.Key, c.Value)) names.Add(c.Key);
    }
    return names.AsReadOnly();
  }

  /// <summary>True when `type` overrides the virtual (public or protected) method `name`.</summary>
  internal static bool Overrides(Type type, string name, params Type[] parameters) {
    MethodInfo method = type.GetMethod(name, BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic,
                                       null, parameters, null);
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
}

}  // namespace TrainWatch
