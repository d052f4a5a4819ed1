namespace TrainWatch {

/// <summary>
/// GlobalStepWaiterHook's reader of the global step it waits on: in a multi-worker job the shared one
/// another process advances. What it throws fails the run and comes out of Session.Run.
/// </summary>
public delegate long GlobalStepFunction(SessionRef session);

/// <summary>A GlobalStepFunction as the library calls it: the director of ManagedGlobalStepFunction.</summary>
internal sealed class GlobalStepFunctionBridge : Native.ManagedGlobalStepFunction {
  readonly GlobalStepFunction read;

  internal GlobalStepFunctionBridge(GlobalStepFunction read) { this.read = read; }

  public override bool ManagedGlobalStep(Native.SessionRef session) {
    return SessionRef.InvokeGuarded(session, "a GlobalStepFunction's SessionRef", s => SetGlobalStep(read(s)));
  }
}

}  // namespace TrainWatch
