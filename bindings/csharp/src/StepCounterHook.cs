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
    CallbackGuard.Call(() => Super.SuperLogAndRecord(elapsedSteps, elapsedTime, globalStep));
  }

  internal void CallLogAndRecord(long elapsedSteps, double elapsedTime, long globalStep) {
    LogAndRecord(elapsedSteps, elapsedTime, globalStep);
  }
}

}  // namespace TrainWatch
