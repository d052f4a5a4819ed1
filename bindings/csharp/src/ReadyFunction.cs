namespace TrainWatch {

/// <summary>
/// WorkerSessionCreator's readiness test (TF's ready_op, S2, S10), set with Options.SetReadyFunction: a
/// worker (Option.IsChief false) polls it every Option.RecoveryWaitSecs until it returns true, and
/// fails with DeadlineExceededException after Option.MaxWaitSecs. What it throws fails the session's
/// creation and comes out of that call.
/// </summary>
public delegate bool ReadyFunction(SessionRef session);

/// <summary>A ReadyFunction as the library calls it: the director of ManagedReadyFunction.</summary>
internal sealed class ReadyFunctionBridge : Native.ManagedReadyFunction {
  readonly ReadyFunction ready;

  internal ReadyFunctionBridge(ReadyFunction ready) { this.ready = ready; }

  public override bool ManagedReady(Native.SessionRef session) {
    return SessionRef.InvokeGuarded(session, "a ReadyFunction's SessionRef", s => SetReady(ready(s)));
  }
}

}  // namespace TrainWatch
