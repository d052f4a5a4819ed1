using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// A session seen from a callback (TF's run_context.session): valid during the callback that received
/// it. Session, the owned session, is one too.
/// </summary>
public class SessionRef {
  readonly Native.SessionRef native;
  readonly Lifetime lifetime;

  internal SessionRef(Native.SessionRef native, Lifetime lifetime) {
    this.native = native;
    this.lifetime = lifetime;
  }

  /// <summary>The native session, or an exception when this wrapper may no longer use it.</summary>
  internal virtual Native.SessionRef Checked {
    get {
      lifetime.Check();
      return native;
    }
  }

  /// <summary>
  /// Runs the body of a callback that receives a session, guarded by CallbackGuard (false: it threw);
  /// the SessionRef it sees, and the views taken through it, expire when it returns. `what` names the
  /// SessionRef in the error of a use after that.
  /// </summary>
  internal static bool InvokeGuarded(Native.SessionRef session, string what, Action<SessionRef> body) {
    var s = new SessionRef(session, Lifetime.OfCallback(what));
    try {
      return CallbackGuard.Invoke(() => body(s));
    } finally {
      s.lifetime.End();
    }
  }

  /// <summary>How long views of this session's variables stay valid.</summary>
  internal virtual Lifetime ViewLifetime { get { return lifetime; } }

  public bool ShouldStop { get { return Checked.ShouldStop(); } }
  public void RequestStop() { Checked.RequestStop(); }

  public long GlobalStep {
    get { return Checked.GlobalStep(); }
    set { Checked.SetGlobalStep(value); }
  }

  public bool IsChief { get { return Checked.IsChief(); } }
  /// <summary>How many inner sessions were created: 1, plus one per recovery.</summary>
  public long CreationCount { get { return Checked.CreationCount(); } }

  /// <summary>A registered variable: a zero-copy view of its memory.</summary>
  public Tensor Variable(string name) {
    return new Tensor(Checked.Variable(name ?? ""), ViewLifetime);
  }

  public IReadOnlyList<Tensor> Variables {
    get { return Tensor.ViewsOf(Checked.Variables(), ViewLifetime); }
  }

  /// <summary>One step without hooks and without touching global_step (evaluation, iterator resets).</summary>
  public void RunWithoutHooks(Action<StepContext> step, params Tensor[] feeds) {
    if (step == null) throw new InvalidArgumentException("step is null");
    Native.SessionRef session = Checked;
    using (var bridge = new StepBridge(this)) {
      bridge.Run(step, feeds, (nativeStep, views) => session.RunWithoutHooks(nativeStep, views));
    }
  }
}

}  // namespace TrainWatch
