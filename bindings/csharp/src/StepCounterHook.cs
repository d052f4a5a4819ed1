namespace TrainWatch {

/// <summary>
/// TF's StepCounterHook(every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None)
/// (B26–B30): logs "global_step/sec: rate" at INFO (and writes it as the scalar summary
/// "global_step/sec" to `writer`, or to outputDir's shared writer, when given) every N global steps or
/// seconds. Give exactly one of the two periods: pass everyNSteps: null with everyNSecs.
/// </summary>
public class StepCounterHook : BuiltinHook {
  public StepCounterHook(long? everyNSteps = 100, double? everyNSecs = null, string outputDir = null,
                         SummaryWriter writer = null)
      : base(new Native.StepCounterHook(everyNSteps ?? Native.native.UNSET, everyNSecs ?? -1.0, outputDir ?? "",
                                        writer == null ? null : writer.Checked)) {}

  /// <summary>
  /// TF's _log_and_record(elapsed_steps, elapsed_time, global_step): logs the step rate and writes the
  /// "global_step/sec" summary. Override it to record elsewhere; base.LogAndRecord(…) does the built-in's.
  /// </summary>
  protected virtual void LogAndRecord(long elapsedSteps, double elapsedTime, long globalStep) {
    var hook = (Native.StepCounterHook)Inner;
    CallbackGuard.Call(() => hook.LogAndRecord(elapsedSteps, elapsedTime, globalStep));
  }

  internal override bool InstallExtensionPoints() {
    if (!SubclassedHook.Overrides(GetType(), "LogAndRecord", typeof(long), typeof(double), typeof(long))) return false;
    record = new RecordBridge(this);
    ((Native.StepCounterHook)NativeHandle).SetRecordFunction(record.Function());
    return true;
  }

  RecordBridge record;  // called by the native hook while it lives

  sealed class RecordBridge : Native.ManagedStepRateFunction {
    readonly StepCounterHook hook;

    internal RecordBridge(StepCounterHook hook) { this.hook = hook; }

    public override bool ManagedLogAndRecord(long elapsedSteps, double elapsedTime, long globalStep) {
      return CallbackGuard.Invoke(() => hook.LogAndRecord(elapsedSteps, elapsedTime, globalStep));
    }
  }
}

}  // namespace TrainWatch
