using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// A C# step function as the facade runs it: the director of ManagedStep, guarded by CallbackGuard.
/// It keeps what a step publishes by reference (and the feeds) alive until the run returns. A standing
/// bridge (FinalOpsHook's final step) always runs the same step, in the session the library runs it
/// in, and keeps what the step published until the step runs again.
/// </summary>
internal sealed class StepBridge : Native.ManagedStep {
  readonly SessionRef session;  // null for a standing bridge: the step sees the session it runs in
  readonly bool standing;
  readonly List<Tensor> borrowed = new List<Tensor>();
  Action<StepContext> step;

  internal StepBridge(SessionRef session) { this.session = session; }

  StepBridge(Action<StepContext> step) {
    this.step = step;
    standing = true;
  }

  /// <summary>A bridge that runs `step` whenever the library calls it.</summary>
  internal static StepBridge Standing(Action<StepContext> step) {
    if (step == null) throw new InvalidArgumentException("step is null");
    return new StepBridge(step);
  }

  /// <summary>Runs `nativeRun` (a session's run) with this bridge as its step.</summary>
  internal void Run(Action<StepContext> step, Tensor[] feeds,
                    Action<Native.StepFunction, Native.TensorVector> nativeRun) {
    if (step == null) throw new InvalidArgumentException("step is null");
    this.step = step;
    try {
      using (Native.TensorVector views = Tensor.Views(feeds)) {
        CallbackGuard.Call(() => nativeRun(Step(), views));
      }
    } finally {
      this.step = null;
      borrowed.Clear();
      GC.KeepAlive(feeds);
    }
  }

  public override bool ManagedRun(Native.StepContext ctx) {
    if (standing) borrowed.Clear();  // the run that borrowed them has returned
    var context = new StepContext(ctx, session, borrowed);
    try {
      return CallbackGuard.Invoke(() => step(context));
    } finally {
      context.lifetime.End();
    }
  }
}

}  // namespace TrainWatch
