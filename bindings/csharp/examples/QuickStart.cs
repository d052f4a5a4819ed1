using System;
using TrainWatch;

// A custom hook, a NaN guard, a stop step and checkpoints. A second call with the same directory
// restores w and the global step in place and trains the remaining steps.
public static class QuickStart {
  sealed class Progress : SessionRunHook {
    public int Runs;
    public float LastLoss;

    public override void BeforeRun(RunContext context) { context.RequestFetch("loss"); }

    public override void AfterRun(RunContext context) {
      LastLoss = context.Result("loss").Item<float>();
      Runs++;
    }
  }

  // Fits w to minimise (w - 3)^2 by gradient descent; returns how many steps this call ran.
  public static int Train(string checkpointDir, float[] w, long lastStep) {
    using (var progress = new Progress())
    using (var options = new Options()
               .AddVariable(Tensor.FromArray("w", w))  // zero copy: saved and restored in place
               .SetString(Option.CheckpointDir, checkpointDir)
               .SetInt64(Option.EveryNSteps, 10))
    using (var stop = new StopAtStepHook(lastStep: lastStep))
    using (var nan = new NanTensorHook("loss"))
    using (var saver = new CheckpointSaverHook(checkpointDir, options))
    using (Session session = Session.Monitored(options, progress, nan, stop, saver)) {
      Tensor learningRate = Tensor.Scalar("lr", 0.25f);
      while (!session.ShouldStop) {
        session.Run(ctx => {
          float lr = ctx.Feed("lr").Item<float>();
          float loss = 0;
          for (int i = 0; i < w.Length; ++i) {
            loss += (w[i] - 3) * (w[i] - 3);
            w[i] -= lr * 2 * (w[i] - 3);
          }
          ctx.Publish("loss", loss);
        }, learningRate);
      }
      session.Close();  // runs the hooks' End: the final checkpoint
      Console.WriteLine("step " + lastStep + ": loss " + progress.LastLoss);
      return progress.Runs;
    }
  }
}
