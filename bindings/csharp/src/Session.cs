using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// An owned session: TF's MonitoredSession (recovers from Aborted/Unavailable), SingularMonitoredSession
/// (does not) or MonitoredTrainingSession (adds TF's default hooks from the options). Hooks run around
/// every Run; Close runs their End (unless a run failed). Dispose releases the native session — an open
/// one is abandoned without End, like leaving TF's session unclosed — so close it first to end cleanly:
/// <code>using (var session = Session.Monitored(options, hooks)) { … session.Close(); }</code>
/// A session is used by one thread at a time.
/// </summary>
public sealed class Session : SessionRef, IDisposable {
  readonly Native.Session native;
  readonly Lifetime views = new Lifetime("the session was disposed");
  // Kept alive while the library may call or read them.
  readonly Hook[] hooks;
  readonly object[] fromOptions;  // the options' variables and init/ready functions
  StepBridge idleStep;
  bool disposed;

  Session(Native.Session native, Hook[] hooks, object[] fromOptions) : base(native, Lifetime.Unbounded) {
    this.native = native;
    this.hooks = hooks;
    this.fromOptions = fromOptions;
  }

  /// <summary>TF's MonitoredSession: `options` may be null (defaults).</summary>
  public static Session Monitored(Options options, params Hook[] hooks) {
    return Create(Native.Session.Kind.monitored, options, hooks, null);
  }

  /// <summary>TF's SingularMonitoredSession: no recovery.</summary>
  public static Session Singular(Options options, params Hook[] hooks) {
    return Create(Native.Session.Kind.singular, options, hooks, null);
  }

  /// <summary>TF's MonitoredTrainingSession: the options' checkpoint and summary settings add TF's hooks (T1–T10).</summary>
  public static Session MonitoredTraining(Options options, IEnumerable<Hook> hooks,
                                          IEnumerable<Hook> chiefOnlyHooks = null) {
    return Create(Native.Session.Kind.monitored_training, options, hooks, chiefOnlyHooks);
  }

  static Session Create(Native.Session.Kind kind, Options options, IEnumerable<Hook> hooks,
                        IEnumerable<Hook> chiefOnlyHooks) {
    var kept = new List<Hook>();
    using (Native.HookVector handles = HandlesOf(hooks, kept), chiefOnly = HandlesOf(chiefOnlyHooks, kept)) {
      Native.Options nativeOptions = options == null ? null : options.Checked;
      object[] fromOptions = options == null ? new object[0] : options.Borrowed;
      try {
        Native.Session session = CallbackGuard.Call(() => new Native.Session(kind, nativeOptions, handles, chiefOnly));
        return new Session(session, kept.ToArray(), fromOptions);
      } finally {
        GC.KeepAlive(fromOptions);  // the init and ready functions run during the creation
      }
    }
  }

  static Native.HookVector HandlesOf(IEnumerable<Hook> hooks, List<Hook> kept) {
    var handles = new Native.HookVector();
    if (hooks == null) return handles;
    foreach (Hook hook in hooks) {
      if (hook == null) {
        handles.Dispose();
        throw new InvalidArgumentException("a hook is null");
      }
      handles.Add(hook.SessionHandle);
      kept.Add(hook);
    }
    return handles;
  }

  internal override Native.SessionRef Checked {
    get {
      if (disposed) throw new ObjectDisposedException("Session");
      return native;
    }
  }

  internal override Lifetime ViewLifetime { get { return views; } }

  /// <summary>One step with hooks: every hook's BeforeRun, `step`, every AfterRun. Feeds are read in place.</summary>
  public void Run(Action<StepContext> step, params Tensor[] feeds) {
    Native.Session session = (Native.Session)Checked;
    StepBridge bridge = idleStep ?? new StepBridge(this);
    idleStep = null;  // a step that runs this session again gets a bridge of its own
    try {
      bridge.Run(step, feeds, (nativeStep, views) => session.Run(nativeStep, views));
    } finally {
      if (disposed) bridge.Dispose();
      else idleStep = bridge;
    }
  }

  /// <summary>TF's close(): every hook's End (unless a run failed), then the inner session is released.</summary>
  public void Close() {
    Native.Session session = (Native.Session)Checked;
    CallbackGuard.Call(() => session.Close());
  }

  /// <summary>Releases the native session (an open one is abandoned without End). Safe to call twice.</summary>
  public void Dispose() {
    if (disposed) return;
    disposed = true;
    views.End();
    native.Dispose();
    if (idleStep != null) idleStep.Dispose();
    idleStep = null;
    GC.KeepAlive(hooks);
    GC.KeepAlive(fromOptions);
  }
}

}  // namespace TrainWatch
