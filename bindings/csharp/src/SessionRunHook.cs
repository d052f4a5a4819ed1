using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// A hook written in C# (TF's SessionRunHook): override what you need. Whatever a callback throws fails
/// the call that ran it (the session's creation, Run or Close) and comes out of that call as the same
/// exception object; the other hooks hear OnError. Throw AbortedException to make the run recoverable,
/// OutOfRangeException to end the input cleanly.
/// </summary>
public abstract class SessionRunHook : Hook {
  readonly HookBridge bridge;

  /// <summary>`name` names the hook in the library's messages (default: the class name).</summary>
  protected SessionRunHook(string name = null) { bridge = new HookBridge(this, name ?? GetType().Name); }

  /// <summary>Once, when the session is created, before the inner session exists (TF's begin()).</summary>
  public virtual void Begin(SessionRef session) {}
  /// <summary>After each inner session is created: at the start and after every recovery.</summary>
  public virtual void AfterCreateSession(SessionRef session) {}
  /// <summary>Before each run: request fetches and feeds through `context`.</summary>
  public virtual void BeforeRun(RunContext context) {}
  /// <summary>After each successful step: read this hook's fetches through `context`.</summary>
  public virtual void AfterRun(RunContext context) {}
  /// <summary>When the session is closed, unless a run failed.</summary>
  public virtual void End(SessionRef session) {}
  /// <summary>Instead of End when a run failed. It cannot fail: what it throws is dropped.</summary>
  public virtual void OnError(SessionRef session, Status error) {}

  internal override Native.HookHandle NativeHandle { get { return bridge.Hook(); } }
  internal override void ReleaseNative() { bridge.Dispose(); }

  /// <summary>The director of ManagedHook: each callback guarded, its arguments expired on return.</summary>
  sealed class HookBridge : Native.ManagedHook {
    readonly SessionRunHook hook;
    readonly List<Tensor> feeds = new List<Tensor>();  // what BeforeRun fed, read during the run

    internal HookBridge(SessionRunHook hook, string name) : base(name) { this.hook = hook; }

    public override bool ManagedBegin(Native.SessionRef session) {
      return WithSession(session, s => hook.Begin(s));
    }

    public override bool ManagedAfterCreateSession(Native.SessionRef session) {
      return WithSession(session, s => hook.AfterCreateSession(s));
    }

    public override bool ManagedBeforeRun(Native.RunContext ctx) {
      feeds.Clear();
      return WithContext(ctx, c => hook.BeforeRun(c));
    }

    public override bool ManagedAfterRun(Native.RunContext ctx) {
      return WithContext(ctx, c => hook.AfterRun(c));
    }

    public override bool ManagedEnd(Native.SessionRef session) {
      return WithSession(session, s => hook.End(s));
    }

    public override void ManagedOnError(Native.SessionRef session, int error) {
      var s = new SessionRef(session, Lifetime.OfCallback("a hook's SessionRef"));
      CallbackGuard.InvokeDropping(() => hook.OnError(s, (Status)error));
      s.ViewLifetime.End();
    }

    static bool WithSession(Native.SessionRef session, System.Action<SessionRef> callback) {
      return SessionRef.InvokeGuarded(session, "a hook's SessionRef", callback);
    }

    bool WithContext(Native.RunContext ctx, System.Action<RunContext> callback) {
      return RunContext.InvokeGuarded(ctx, feeds, callback);
    }
  }
}

}  // namespace TrainWatch
