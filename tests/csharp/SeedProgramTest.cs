namespace TrainWatch.Tests {

/// <summary>
/// The seed program in C# (a TF1 user's script): a user's NanTensorHookCustom (a NanTensorHook subclass
/// overriding AfterRun) as the only hook of a MonitoredTrainingSession training a linear model by SGD,
/// whose loss becomes NaN at a known step. With base.AfterRun the built-in check fails the run (B33)
/// after the custom action ran; without it the custom action alone runs and training goes on.
/// </summary>
static class SeedProgramTest {
  const long NanStep = 5;   // the run that ends at global step 5 reads a corrupt sample
  const long LastStep = 8;  // the training loop's stop step

  /// <summary>Fits y = 2x + 1 with w = [slope, bias], one sample per step; returns the global step reached.</summary>
  static long Train(NanTensorHookCustom hook, float[] w) {
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w)))
    using (Session sess = Session.MonitoredTraining(options, new Hook[] { hook })) {
      while (!sess.ShouldStop && sess.GlobalStep < LastStep) {
        sess.Run(ctx => {  // the graph's train_op as a step function
          long step = ctx.GlobalStep + 1;
          float x = step % 4, y = step == NanStep ? float.NaN : 2 * x + 1;
          float error = w[0] * x + w[1] - y;
          w[0] -= 0.1f * error * x;
          w[1] -= 0.1f * error;
          ctx.Publish("loss", error * error / 2);
        });
      }
      long reached = sess.GlobalStep;
      sess.Close();
      return reached;
    }
  }

  [Test]
  public static void WithBaseAfterRunTheBuiltinCheckFailsAfterTheCustomActionB33() {
    using (var hook = new NanTensorHookCustom("loss", true, true)) {
      var e = Check.Throws<NanLossDuringTrainingException>(() => Train(hook, new float[2]), "the built-in check");
      Check.Contains("NaN loss during training.", e.Message, "TF's text");
      Check.Lines(new[] { NanStep + " NaN" }, hook.Divergences, "the custom action ran first, once");
    }
  }

  [Test]
  public static void WithoutBaseOnlyTheCustomActionRunsAndTrainingGoesOn() {
    var w = new float[2];
    using (var hook = new NanTensorHookCustom("loss", true, false)) {
      Check.Equal(LastStep, Train(hook, w), "training reached the stop step");
      Check.Lines(new[] { "5 NaN", "6 NaN", "7 NaN", "8 NaN" }, hook.Divergences, "the custom action on every NaN");
    }
    Check.True(float.IsNaN(w[0]), "the model did diverge: nothing stopped it");
  }
}

}  // namespace TrainWatch.Tests
