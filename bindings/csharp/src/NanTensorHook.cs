using System.Collections.Generic;

namespace TrainWatch {

/// <summary>What a NanTensorHook found in one watched value: the scan's counts, the value's name and the step.</summary>
public sealed class NanEvent : ScanResult {
  internal NanEvent(Native.NanEvent e) : base(e.NanCount, e.PosInfCount, e.NegInfCount, e.FirstNonfiniteIndex) {
    TensorName = e.TensorName;
    GlobalStep = e.GlobalStep;
  }

  public string TensorName { get; private set; }
  public long GlobalStep { get; private set; }
}

/// <summary>NanAction.Callback: decides what a divergence does; throw to fail the run.</summary>
public delegate void NanCallback(SessionRef session, NanEvent divergence);

/// <summary>
/// TF's NanTensorHook (B31–B34): fails the run with NanLossDuringTrainingException when the loss is
/// NaN, or requests a stop. The options form watches several values (names or patterns) and reads
/// Option.NanAction, NanDetectInf, NanEveryNSteps, NanMaxRollbacks; its messages name the tensor and
/// the step.
/// </summary>
public class NanTensorHook : BuiltinHook {
  // Called through a raw pointer by the native hook, which sessions keep after this wrapper is
  // disposed: the bridge is left to the collector, which frees it only once no session holds this hook.
#pragma warning disable 414  // only ever assigned: it exists to keep the bridge alive
  readonly NanBridge callback;
#pragma warning restore 414

  /// <summary>TF's NanTensorHook(loss_tensor, fail_on_nan_loss=True).</summary>
  public NanTensorHook(string lossName, bool failOnNanLoss = true)
      : base(new Native.NanTensorHook(lossName ?? "", failOnNanLoss)) {}

  public NanTensorHook(IEnumerable<string> watch, Options options, NanCallback callback = null)
      : this(watch, options, callback == null ? null : new NanBridge(callback)) {}

  NanTensorHook(IEnumerable<string> watch, Options options, NanBridge bridge)
      : base(NewNative(watch, options, bridge)) {
    callback = bridge;
  }

  static Native.NanTensorHook NewNative(IEnumerable<string> watch, Options options, NanBridge bridge) {
    if (watch == null) throw new InvalidArgumentException("watch is null");
    using (var names = new Native.StringVector(new List<string>(watch))) {
      return new Native.NanTensorHook(names, options == null ? null : options.Checked,
                                      bridge == null ? null : bridge.Function());
    }
  }

  sealed class NanBridge : Native.ManagedNanFunction {
    readonly NanCallback callback;

    internal NanBridge(NanCallback callback) { this.callback = callback; }

    public override bool ManagedOnNan(Native.SessionRef session, Native.NanEvent e) {
      return SessionRef.InvokeGuarded(session, "a NanCallback's SessionRef", s => callback(s, new NanEvent(e)));
    }
  }
}

}  // namespace TrainWatch
