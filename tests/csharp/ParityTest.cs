using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;

namespace TrainWatch.Tests {

/// <summary>
/// The parity scenario (tests/parity/README.md) in C#: its trace must equal tests/parity/expected.txt
/// section by section, as it does for C (dlopen), Rust, Go and Python.
/// </summary>
static class ParityTest {
  /// <summary>The counting hook, first in every hook list.</summary>
  sealed class Counter : SessionRunHook {
    readonly List<string> trace;

    public Counter(List<string> trace) : base("counter") { this.trace = trace; }

    public override void Begin(SessionRef session) { trace.Add("begin"); }

    public override void AfterCreateSession(SessionRef session) {
      trace.Add("after_create_session global_step=" + session.GlobalStep);
    }

    public override void BeforeRun(RunContext context) {
      trace.Add("before_run");
      context.RequestFetch("loss", "global_step");
    }

    public override void AfterRun(RunContext context) {
      trace.Add("after_run loss=" + Number(context.Result("loss").Item<float>()) +
                " global_step=" + context.Result("global_step").Item<long>());
    }

    public override void End(SessionRef session) { trace.Add("end global_step=" + session.GlobalStep); }

    public override void OnError(SessionRef session, Status error) { trace.Add("on_error " + error.Name()); }
  }

  /// <summary>w: float32[4] registered zero copy; each step adds the feed x and publishes loss = sum(w).</summary>
  sealed class Model {
    public readonly float[] W = new float[4];
    readonly Tensor x = Tensor.Scalar("x", 0f);
    readonly List<string> trace;

    public Model(List<string> trace) { this.trace = trace; }

    public Options Options(string checkpointDir) {
      var options = new Options().AddVariable(Tensor.FromArray("w", W));
      if (checkpointDir != null) options.SetString(Option.CheckpointDir, checkpointDir);
      return options;
    }

    void Step(StepContext ctx) {
      float value = ctx.Feed("x").Item<float>();
      trace.Add("step global_step=" + ctx.GlobalStep + " x=" + Number(value));
      for (int i = 0; i < W.Length; ++i) W[i] += value;
      ctx.Publish("loss", W.Sum());
    }

    public TrainWatchException Run(Session session, float value) {
      x.SetItem(value);
      try {
        session.Run(Step, x);
        trace.Add("run TW_OK");
        return null;
      } catch (TrainWatchException e) {
        trace.Add("run " + e.StatusName);
        return e;
      }
    }

    public void Close(Session session) {
      session.Close();
      trace.Add("close TW_OK");
      trace.Add("w=" + Weights(W));
    }
  }

  static string Number(float value) { return float.IsNaN(value) ? "nan" : ((long)value).ToString(); }

  static string Weights(float[] w) { return string.Join(",", w.Select(Number)); }

  static List<string> Train(string dir) {
    var trace = new List<string>();
    var model = new Model(trace);
    using (Options options = model.Options(dir).SetInt64(Option.EveryNSteps, 2).SetBool(Option.AsyncCheckpoint, false))
    using (var stop = new StopAtStepHook(lastStep: 5))
    using (var saver = new CheckpointSaverHook(dir, options))
    using (Session session = Session.Monitored(options, new Counter(trace), stop, saver)) {
      while (!session.ShouldStop) Check.True(model.Run(session, 1) == null, "a train run failed");
      trace.Add("global_step=" + session.GlobalStep);
      model.Close(session);
    }
    trace.Add("latest_checkpoint=" + Path.GetFileName(Checkpoints.Latest(dir)));
    return trace;
  }

  static List<string> Nan() {
    var trace = new List<string>();
    var model = new Model(trace);
    using (Options options = model.Options(null))
    using (var nan = new NanTensorHook("loss"))
    using (Session session = Session.Monitored(options, new Counter(trace), nan)) {
      Check.True(model.Run(session, 1) == null && model.Run(session, 1) == null, "a finite run failed");
      TrainWatchException diverged = model.Run(session, float.NaN);
      Check.True(diverged is NanLossDuringTrainingException, "the NaN run throws NanLossDuringTrainingException (B33)");
      Check.Contains("NaN loss during training.", diverged.Message, "the NaN run's message");
      Check.True(model.Run(session, 1) is FailedPreconditionException, "a failed session refuses to run again");
      model.Close(session);
    }
    return trace;
  }

  static List<string> Restore(string dir) {
    var trace = new List<string>();
    var model = new Model(trace);
    using (Options options = model.Options(dir))
    using (var stop = new StopAtStepHook(lastStep: 6))
    using (Session session = Session.Monitored(options, new Counter(trace), stop)) {
      trace.Add("restored w=" + Weights(model.W));  // restored in place into the caller's array
      while (!session.ShouldStop) Check.True(model.Run(session, 1) == null, "a restore run failed");
      model.Close(session);
    }
    return trace;
  }

  /// <summary>
  /// A MonitoredTrainingSession (T1–T10) whose only default hook is its CheckpointSaverHook, every 3
  /// steps: summaries and step counting off. A second one on the same directory resumes.
  /// </summary>
  static List<string> TrainingSession(string dir, long lastStep) {
    var trace = new List<string>();
    var model = new Model(trace);
    using (Options options = model.Options(dir).SetInt64(Option.IsChief, 1).SetInt64(Option.CheckpointEveryNSteps, 3)
               .SetInt64(Option.SummaryEveryNSteps, 0).SetInt64(Option.StepCountEveryNSteps, 0))
    using (var stop = new StopAtStepHook(lastStep: lastStep))
    using (Session session = Session.MonitoredTraining(options, new Hook[] { new Counter(trace), stop })) {
      while (!session.ShouldStop) Check.True(model.Run(session, 1) == null, "a MonitoredTrainingSession run failed");
      model.Close(session);
    }
    trace.Add("latest=" + Path.GetFileName(Checkpoints.Latest(dir)));
    return trace;
  }

  /// <summary>The sections of expected.txt: "[name]" headers; '#' comments and blank lines skipped.</summary>
  static Dictionary<string, List<string>> Expected() {
    var sections = new Dictionary<string, List<string>>();
    List<string> current = null;
    foreach (string raw in File.ReadAllLines(Path.Combine(SourceTree.Root, "tests", "parity", "expected.txt"))) {
      string line = raw.Trim();
      if (line.Length == 0 || line.StartsWith("#")) continue;
      if (line.StartsWith("[") && line.EndsWith("]")) {
        current = sections[line.Substring(1, line.Length - 2)] = new List<string>();
      } else {
        Check.True(current != null, "expected.txt: \"" + line + "\" before the first section");
        current.Add(line);
      }
    }
    return sections;
  }

  [Test]
  public static void ParityScenarioMatchesExpectedTrace() {
    Dictionary<string, List<string>> expected = Expected();
    string dir = Scratch.Directory("parity"), trainingSessionDir = Scratch.Directory("parity-mts");
    Log.SetLevel(LogLevel.Error);  // the scenario's warnings are expected
    try {
      var traces = new Dictionary<string, List<string>> {
        { "train", Train(dir) }, { "nan", Nan() }, { "restore", Restore(dir) },
        { "mts", TrainingSession(trainingSessionDir, 4) }, { "mts_resume", TrainingSession(trainingSessionDir, 6) },
      };
      foreach (string name in new[] { "train", "nan", "restore", "mts", "mts_resume" }) {
        Check.True(expected.ContainsKey(name) && expected[name].Count > 0, "expected.txt has a [" + name + "] section");
        Check.Lines(expected[name], traces[name], "[" + name + "]");
      }
    } finally {
      Log.SetLevel(LogLevel.Info);
    }
  }
}

/// <summary>Fresh temporary directories, deleted when the runner ends.</summary>
static class Scratch {
  static readonly List<string> created = new List<string>();

  public static string Directory(string name) {
    string dir = Path.Combine(Path.GetTempPath(), "trainwatch-csharp-" + name + "-" + Guid.NewGuid().ToString("N"));
    System.IO.Directory.CreateDirectory(dir);
    created.Add(dir);
    return dir;
  }

  public static void DeleteAll() {
    foreach (string dir in created) System.IO.Directory.Delete(dir, true);
    created.Clear();
  }
}

}  // namespace TrainWatch.Tests
