namespace TrainWatch {

/// <summary>
/// TF's FeedFnHook(feed_fn) (B44): every BeforeRun feeds what `feeds` returns, under TF's conflict
/// rules (a name another hook or the caller feeds too is FeedConflictException, H22/H23).
/// </summary>
public class FeedFnHook : BuiltinHook {
  // Called by the native hook, which sessions keep after this wrapper is disposed: left to the
  // collector, which frees it only once no session holds this hook.
#pragma warning disable 414  // only ever assigned: it exists to keep the bridge alive
  readonly FeedFunctionBridge bridge;
#pragma warning restore 414

  public FeedFnHook(FeedFunction feeds) : this(feeds == null ? null : new FeedFunctionBridge(feeds)) {}

  FeedFnHook(FeedFunctionBridge bridge) : base(NewNative(bridge)) { this.bridge = bridge; }

  static Native.FeedFnHook NewNative(FeedFunctionBridge bridge) {
    if (bridge == null) throw new InvalidArgumentException("FeedFnHook: feeds is null");
    return new Native.FeedFnHook(bridge.Function());
  }
}

}  // namespace TrainWatch
