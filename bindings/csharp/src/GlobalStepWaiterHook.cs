namespace TrainWatch {

/// <summary>
/// TF's GlobalStepWaiterHook(wait_until_step) (B41–B42): the first run of a session waits until the
/// global step reaches `waitUntilStep` (&lt;= 0: no wait), reading it every Option.WaitPollSecs (0.5 s)
/// through `globalStep` (the shared step of a multi-worker job), or the session's own without one.
/// Option.WaitMaxSecs bounds the wait (DeadlineExceededException; default forever, as TF).
/// </summary>
public class GlobalStepWaiterHook : BuiltinHook {
  // Called by the native hook, which sessions keep after this wrapper is disposed: left to the
  // collector, which frees it only once no session holds this hook.
#pragma warning disable 414  // only ever assigned: it exists to keep the bridge alive
  readonly GlobalStepFunctionBridge bridge;
#pragma warning restore 414

  public GlobalStepWaiterHook(long waitUntilStep, Options options = null, GlobalStepFunction globalStep = null)
      : this(waitUntilStep, options, globalStep == null ? null : new GlobalStepFunctionBridge(globalStep)) {}

  GlobalStepWaiterHook(long waitUntilStep, Options options, GlobalStepFunctionBridge bridge)
      : base(new Native.GlobalStepWaiterHook(waitUntilStep, options == null ? null : options.Checked,
                                             bridge == null ? null : bridge.Function())) {
    this.bridge = bridge;
  }
}

}  // namespace TrainWatch
