namespace TrainWatch {

/// <summary>
/// TF's StopAtStepHook(num_steps, last_step) (B11–B15): requests a stop after the run that makes the
/// global step reach last_step, or num_steps past the step the session started at. Give exactly one.
/// </summary>
public class StopAtStepHook : BuiltinHook {
  public StopAtStepHook(long? numSteps = null, long? lastStep = null)
      : base(new Native.StopAtStepHook(numSteps ?? Native.native.UNSET, lastStep ?? Native.native.UNSET)) {}
}

}  // namespace TrainWatch
