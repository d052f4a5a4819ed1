namespace TrainWatch {

/// <summary>
/// Scaffold's init_fn (S7, S13), set with Options.SetInitFunction: a chief that restored nothing calls
/// it once the inner session exists, at creation and after every recovery that restores nothing.
/// What it throws fails the session's creation (or the recovering Run) and comes out of that call.
/// </summary>
public delegate void InitFunction(SessionRef session);

/// <summary>An InitFunction as the library calls it: the director of ManagedInitFunction.</summary>
internal sealed class InitFunctionBridge : Native.ManagedInitFunction {
  readonly InitFunction init;

  internal InitFunctionBridge(InitFunction init) { this.init = init; }

  public override bool ManagedRun(Native.SessionRef session) {
    return SessionRef.InvokeGuarded(session, "an InitFunction's SessionRef", s => init(s));
  }
}

}  // namespace TrainWatch
