using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// TF's FinalOpsHook(final_ops, final_ops_feed_dict) (B43): when the session is closed, runs `finalStep`
/// once without hooks (the global step untouched) with `feeds` (copied, data included, now) and keeps
/// copies of what it publishes: Values. Like every End it does not run after a failed run; what the
/// step throws comes out of Session.Close (OutOfRange/StopIteration after TF's warning).
/// </summary>
public class FinalOpsHook : BuiltinHook {
  // Called by the native hook, which sessions keep after this wrapper is disposed: left to the
  // collector, which frees it only once no session holds this hook.
#pragma warning disable 414  // only ever assigned: it exists to keep the bridge alive
  readonly StepBridge finalStep;
#pragma warning restore 414

  public FinalOpsHook(Action<StepContext> finalStep, params Tensor[] feeds) : this(StepBridge.Standing(finalStep), feeds) {}

  FinalOpsHook(StepBridge finalStep, Tensor[] feeds) : base(NewNative(finalStep, feeds)) { this.finalStep = finalStep; }

  static Native.FinalOpsHook NewNative(StepBridge finalStep, Tensor[] feeds) {
    using (Native.TensorVector views = Tensor.Views(feeds)) {
      try {
        return new Native.FinalOpsHook(finalStep.Step(), views);
      } finally {
        GC.KeepAlive(feeds);
      }
    }
  }

  Native.FinalOpsHook Final { get { return (Native.FinalOpsHook)Handle; } }

  /// <summary>False until the final step has completed.</summary>
  public bool HasValues { get { return Final.HasValues(); } }

  /// <summary>
  /// What the final step published, in publish order: copies of their own (TF's final_ops_values);
  /// null until the final step has completed (TF's None).
  /// </summary>
  public IReadOnlyList<Tensor> Values {
    get {
      Native.FinalOpsHook hook = Final;
      if (!hook.HasValues()) return null;
      var values = new List<Tensor>();
      using (Native.TensorVector natives = hook.Values()) {
        foreach (Tensor view in Tensor.ViewsOf(natives, Lifetime.Unbounded)) values.Add(Tensor.CopyOf(view));
      }
      GC.KeepAlive(hook);  // the views point into the native hook's copies
      return values.AsReadOnly();
    }
  }
}

}  // namespace TrainWatch
