using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using TrainWatch;

/// <summary>
/// A user's training loop, built outside the repository against the NuGet package's TrainWatch.dll: a
/// MonitoredTrainingSession with StopAtStepHook and a NanTensorHook on the published loss,
/// checkpointing every 25 steps into DIR, fitting w to 3 by gradient descent.
///
/// usage: TrainLoop.exe DIR LAST_STEP EXPECTED_START [NAN_AT_STEP]
///        TrainLoop.exe --version   (prints TrainWatch.dll's assembly version)
/// Exits 0 when the session started at EXPECTED_START (a resumed run restores w and the global step),
/// stopped at LAST_STEP and its latest checkpoint is model.ckpt-LAST_STEP; with NAN_AT_STEP the loss of
/// that step is NaN and the run must fail with NanLossDuringTrainingException instead.
/// </summary>
public static class TrainLoop {
  static void Check(bool ok, string what) {
    if (!ok) throw new Exception("check failed: " + what);
  }

  /// <summary>The files the process mapped libtrainwatch and the libraries it bundles from (/proc/self/maps).</summary>
  static IEnumerable<string> LoadedLibraries() {
    return File.ReadAllLines("/proc/self/maps")
        .Where(line => line.IndexOf('/') >= 0)
        .Select(line => line.Substring(line.IndexOf('/')))
        .Where(path => Regex.IsMatch(path, @"/lib(trainwatch|hwy|zstd)[^/]*\.so[^/]*$"))
        .Distinct().OrderBy(path => path, StringComparer.Ordinal);
  }

  public static int Main(string[] args) {
    if (args[0] == "--version") {
      Console.WriteLine(typeof(Session).Assembly.GetName().Version);
      return 0;
    }
    string dir = args[0];
    long lastStep = long.Parse(args[1]), expectedStart = long.Parse(args[2]);
    long nanAt = args.Length > 3 ? long.Parse(args[3]) : -1;
    // The first call into the library is a static function's (its class's constants are C# ones).
    string before = Checkpoints.Latest(dir);
    Check((before == null) == (expectedStart == 0), "latest checkpoint before training: " + before);
    var w = new float[4];
    using (var options = new Options()
               .AddVariable(Tensor.FromArray("w", w))
               .SetString(Option.CheckpointDir, dir)
               .SetInt64(Option.CheckpointEveryNSteps, 25))
    using (var nan = new NanTensorHook("loss"))
    using (var stop = new StopAtStepHook(lastStep: lastStep))
    using (Session session = Session.MonitoredTraining(options, new Hook[] { nan, stop })) {
      foreach (string path in LoadedLibraries()) Console.WriteLine("loaded: " + path);
      long start = session.GlobalStep;
      Check(start == expectedStart, "started at step " + start + ", expected " + expectedStart);
      Check((start == 0) == (w[0] == 0), "w=" + w[0] + " at step " + start + ": not restored with it");
      long runs = 0;
      try {
        while (!session.ShouldStop) {
          session.Run(ctx => {
            float loss = 0;
            for (int i = 0; i < w.Length; ++i) {
              loss += (w[i] - 3) * (w[i] - 3);
              w[i] -= 0.05f * 2 * (w[i] - 3);
            }
            ctx.Publish("loss", ctx.GlobalStep + 1 == nanAt ? float.NaN : loss);
          });
          runs++;
        }
      } catch (NanLossDuringTrainingException e) {
        Check(nanAt > 0 && runs == nanAt - 1, "unexpected after " + runs + " runs: " + e);
        session.Close();
        Console.WriteLine("NaN loss stopped training at step " + nanAt + ": " + e.Message);
        return 0;
      }
      Check(nanAt < 0, "the NaN loss at step " + nanAt + " did not fail the run");
      Check(session.GlobalStep == lastStep, "stopped at step " + session.GlobalStep);
      Check(runs == lastStep - start, runs + " runs from step " + start + " to " + lastStep);
      session.Close();  // the final checkpoint
      string latest = Path.GetFileName(Checkpoints.Latest(dir));
      Check(latest == "model.ckpt-" + lastStep, "latest checkpoint " + latest);
      Console.WriteLine("trained steps " + start + ".." + lastStep + ", w[0]=" + w[0] + ", " + latest);
      return 0;
    }
  }
}
