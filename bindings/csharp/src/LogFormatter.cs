using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// LoggingTensorHook's formatter (B9): the text of one INFO line from the logged values, in print
/// order, each named by its tag; no elapsed time is appended. The values are views valid during the
/// call. What it throws fails the run and comes out of the call that ran the hook.
/// </summary>
public delegate string LogFormatter(IReadOnlyList<Tensor> values);

/// <summary>A LogFormatter as the library calls it: the director of ManagedLogFormatter.</summary>
internal sealed class LogFormatterBridge : Native.ManagedLogFormatter {
  readonly LogFormatter format;

  internal LogFormatterBridge(LogFormatter format) { this.format = format; }

  public override bool ManagedFormat(Native.TensorVector values) {
    Lifetime lifetime = Lifetime.OfCallback("a LogFormatter's value");
    try {
      return CallbackGuard.Invoke(() => SetText(format(Tensor.ViewsOf(values, lifetime)) ?? ""));
    } finally {
      lifetime.End();
    }
  }
}

}  // namespace TrainWatch
