using System.Collections.Generic;

namespace TrainWatch.Tests {

/// <summary>
/// The seed user's own NaN hook, as a TF1 user writes it: TF's NanTensorHook with AfterRun
/// overridden by the action they need, here recording the step and loss of every NaN it sees. With
/// callSuper it then runs the built-in check too (base.AfterRun: TF's super().after_run): NaN fails the
/// run with NanLossDuringTrainingException; without it the custom action is all that happens.
/// </summary>
class NanTensorHookCustom : NanTensorHook {
  /// <summary>The custom action's record: "step loss" per NaN seen.</summary>
  public readonly List<string> Divergences = new List<string>();
  readonly bool callSuper;

  public NanTensorHookCustom(string lossTensor, bool failOnNanLoss, bool callSuper) : base(lossTensor, failOnNanLoss) {
    this.callSuper = callSuper;
  }

  public override void AfterRun(RunContext runContext) {
    float loss = runContext.Result("loss").Item<float>();  // run_values.results: the loss the built-in fetched
    if (float.IsNaN(loss)) Divergences.Add(runContext.Session.GlobalStep + " " + loss);
    if (callSuper) base.AfterRun(runContext);
  }
}

}  // namespace TrainWatch.Tests
