using System.Collections.Generic;

namespace TrainWatch {

/// <summary>What a step function sees: feeds, the names requested, outputs to publish. Valid during the step.</summary>
public sealed class StepContext {
  readonly Native.StepContext native;
  readonly SessionRef session;
  readonly List<Tensor> borrowed;
  internal readonly Lifetime lifetime = Lifetime.OfCallback("a StepContext");

  internal StepContext(Native.StepContext native, SessionRef session, List<Tensor> borrowed) {
    this.native = native;
    // Without one, the step sees the session the library runs it in, for the step only.
    this.session = session ?? new SessionRef(native.Session(), lifetime);
    this.borrowed = borrowed;
  }

  Native.StepContext Checked {
    get {
      lifetime.Check();
      return native;
    }
  }

  /// <summary>The global step at the start of this run.</summary>
  public long GlobalStep {
    get { return Checked.GlobalStep(); }
    set { Checked.SetGlobalStep(value); }
  }

  /// <summary>The feed called `name` (zero copy); NotFoundException when there is none.</summary>
  public Tensor Feed(string name) { return new Tensor(Checked.Feed(name ?? ""), lifetime); }

  public IReadOnlyList<Tensor> Feeds { get { return Tensor.ViewsOf(Checked.Feeds(), lifetime); } }

  /// <summary>Whether the caller or a hook fetches `name` in this run.</summary>
  public bool IsRequested(string name) { return Checked.IsRequested(name ?? ""); }

  public IReadOnlyList<string> Requested {
    get {
      using (Native.StringVector names = Checked.Requested()) return new List<string>(names).AsReadOnly();
    }
  }

  /// <summary>Publishes `output` by reference: its memory must not change until the run returns.</summary>
  public void Publish(Tensor output) {
    if (output == null) throw new InvalidArgumentException("output is null");
    Checked.Publish(output.native);
    borrowed.Add(output);
  }

  /// <summary>Publishes a copy of `output`, owned by the session.</summary>
  public void PublishCopy(Tensor output) {
    if (output == null) throw new InvalidArgumentException("output is null");
    Checked.PublishCopy(output.native);
  }

  /// <summary>Publishes the scalar `value` as `name` (copied).</summary>
  public void Publish<T>(string name, T value) where T : struct { PublishCopy(Tensor.Scalar(name, value)); }

  /// <summary>A registered variable of the session (zero copy).</summary>
  public Tensor Variable(string name) {
    lifetime.Check();
    return session.Variable(name);
  }

  /// <summary>
  /// TF's StepContext.request_stop(): throws StopIterationException, which ends the step at once; the
  /// run then ends cleanly and the exception comes out of Session.Run (W23).
  /// </summary>
  public void RequestStop() { Checked.RequestStop(); }

  /// <summary>The session, to run steps without hooks (TF's step_context.session).</summary>
  public SessionRef Session {
    get {
      lifetime.Check();
      return session;
    }
  }
}

}  // namespace TrainWatch
