using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// A C# step function as the facade runs it: the director of ManagedStep, guarded by CallbackGuard.
/// It keeps what a step publishes by reference (and the feeds) alive until the run returns.
/// </summary>
internal sealed class StepBridge : Native.ManagedStep {
  readonly SessionRef session;
  readonly List<Tensor> borrowed = new List<Tensor>();
  Action<StepContext> step;

  internal StepBridge(SessionRef session) { this.session = session; }

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
    var context = new StepContext(ctx, session, borrowed);
    try {
      return CallbackGuard.Invoke(() => step(context));
    } finally {
      context.lifetime.End();
    }
  }
}

}  // namespace TrainWatch
