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

  /// <summary>
  /// TF's scaffold.saver.Save(sess, prefix, globalStep) inside a session (C27): the registered variables
  /// and the global step saved to "&lt;prefix&gt;-&lt;globalStep&gt;" (`prefix` itself without a step)
  /// by the session's own saver — its lock on the checkpoint directory, its state file, its retention;
  /// no listener runs. Returns the checkpoint's path. InvalidArgumentException when `prefix` is neither
  /// in the session's checkpoint directory nor in one of its CheckpointSaverHooks' (or it has none);
  /// FailedPreconditionException when another writer holds the directory (the message names it) or for
  /// a worker.
  /// </summary>
  public string SaveCheckpoint(string prefix, long? globalStep = null) {
    return Checked.SaveCheckpoint(prefix ?? "", globalStep ?? Native.native.UNSET);
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

  /// <summary>
  /// TF's session.run(name) (the session.run(self._global_step_tensor) idiom): the value of an output
  /// published in the run in progress (AfterRun), else of a registered variable, else of "global_step" —
  /// a copy, read without running a step or any hook. NotFoundException names a name that matches none.
  /// </summary>
  public Tensor Run(string name) {
    if (name == null) throw new InvalidArgumentException("name is null");
    if (name.Length == 0) throw new InvalidArgumentException("a fetch name must not be empty");
    Native.SessionRef session = Checked;
    try {
      return Tensor.CopyOf(new Tensor(session.Output(name), ViewLifetime));
    } catch (NotFoundException) {  // not published in this run
    } catch (FailedPreconditionException) {  // no run in progress
    }
    try {
      return Tensor.CopyOf(new Tensor(session.Variable(name), ViewLifetime));
    } catch (NotFoundException) {  // the global step, or nothing
    }
    if (name == "global_step") return Tensor.Scalar("global_step", session.GlobalStep());
    throw new NotFoundException("'" + name + "' is neither a registered variable, nor an output published in the " +
                                "run in progress, nor 'global_step'");
  }

  /// <summary>The values of `names`, in their order (TF's session.run([a, b])).</summary>
  public IReadOnlyList<Tensor> Run(params string[] names) {
    return Run((IEnumerable<string>)names);
  }

  /// <summary>The values of `names`, in their order.</summary>
  public IReadOnlyList<Tensor> Run(IEnumerable<string> names) {
    if (names == null) throw new InvalidArgumentException("names is null");
    var values = new List<Tensor>();
    foreach (string name in names) values.Add(Run(name));
    return values;
  }

  /// <summary>Key → the value of its name (TF's session.run({"k": tensor})).</summary>
  public IDictionary<string, Tensor> Run(IDictionary<string, string> names) {
    if (names == null) throw new InvalidArgumentException("names is null");
    var values = new Dictionary<string, Tensor>();
    foreach (KeyValuePair<string, string> entry in names) values.Add(entry.Key, Run(entry.Value));
    return values;
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
