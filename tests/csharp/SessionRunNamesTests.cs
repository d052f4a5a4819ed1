using System;
using System.Collections.Generic;
using System.Linq;

namespace TrainWatch.Tests {

/// <summary>
/// session.Run(name) as TF hook code calls it: inside hooks and on the monitored session,
/// an output of the run in progress, a variable or "global_step" is read without a step or hooks.
/// </summary>
static class SessionRunNamesTests {
  /// <summary>A step adding 1 to both elements of w and publishing loss = sum(w): 2, 4, 6, …</summary>
  static Action<StepContext> Counting(float[] w) {
    return ctx => {
      w[0] += 1;
      w[1] += 1;
      ctx.Publish("loss", w[0] + w[1]);
    };
  }

  static Session SessionOver(float[] w, params Hook[] hooks) {
    return Session.Monitored(new Options().AddVariable(Tensor.FromArray("w", w)), hooks);
  }

  /// <summary>TF1's hook idiom: self._global_step_tensor read with session.run in after_create_session and after_run.</summary>
  sealed class GlobalStepReader : SessionRunHook {
    public readonly List<string> Seen = new List<string>();

    public override void AfterCreateSession(SessionRef session) {
      Tensor step = session.Run("global_step");
      Seen.Add("created at " + step.Item<long>() + " " + step.DType);
    }

    public override void AfterRun(RunContext context) {
      SessionRef session = context.Session;
      Seen.Add("step " + session.Run("global_step").Item<long>() + " loss " + session.Run("loss").Item<float>() +
               " w " + string.Join(",", session.Run("w").ToArray<float>()));
    }
  }

  [Test]
  public static void TheGlobalStepIdiomOutputsAndVariablesInsideAHookB14() {
    var w = new float[2];
    var hook = new GlobalStepReader();
    using (hook)
    using (Session session = SessionOver(w, hook)) {
      session.Run(Counting(w));
      session.Run(Counting(w));
      session.Close();
    }
    // The current global step after the run, as TF's re-read in after_run (B14).
    Check.Lines(new[] { "created at 0 " + DType.Int64, "step 1 loss 2 w 1,1", "step 2 loss 4 w 2,2" }, hook.Seen,
                "values read by name");
  }

  sealed class ReadingNanHook : NanTensorHook {
    public readonly List<string> Seen = new List<string>();

    public ReadingNanHook() : base("loss") {}

    public override void AfterRun(RunContext context) {
      Seen.Add(context.Session.Run("loss").Item<float>() + " at " + context.Session.Run("global_step").Item<long>());
      base.AfterRun(context);
    }
  }

  [Test]
  public static void ASubclassedBuiltinReadsThroughItsRunContextSession() {
    var w = new float[2];
    var hook = new ReadingNanHook();
    using (hook)
    using (Session session = SessionOver(w, hook)) {
      session.Run(Counting(w));
      session.Close();
    }
    Check.Lines(new[] { "2 at 1" }, hook.Seen, "the loss and global step in after_run");
  }

  [Test]
  public static void TheMonitoredSessionReadsBetweenRunsWithoutAStepOrHooksH9() {
    var w = new float[2];
    var log = new List<string>();
    using (var recorder = new Recorder("r", log))
    using (Session session = SessionOver(w, recorder)) {
      session.Run(Counting(w));
      int calls = log.Count;
      Check.Equal(1L, session.Run("global_step").Item<long>(), "global_step");
      IReadOnlyList<Tensor> values = session.Run("w", "global_step");
      Check.Equal("1,1", string.Join(",", values[0].ToArray<float>()), "w in the list");
      Check.Equal(1L, values[1].Item<long>(), "global_step in the list");
      Check.Equal(2, session.Run(new List<string> { "global_step", "w" }).Count, "an enumerable of names");
      IDictionary<string, Tensor> byKey = session.Run(new Dictionary<string, string> { { "step", "global_step" } });
      Check.Equal(1L, byKey["step"].Item<long>(), "a dictionary of names");
      Check.Equal(calls, log.Count, "no hook ran");
      Check.Equal(1L, session.GlobalStep, "no step ran");
    }
  }

  sealed class Keeper : SessionRunHook {
    public Tensor Kept;
    public override void AfterRun(RunContext context) { Kept = context.Session.Run("loss"); }
  }

  [Test]
  public static void ValuesAreCopiesThatOutliveTheRun() {
    var w = new float[2];
    var keeper = new Keeper();
    using (keeper)
    using (Session session = SessionOver(w, keeper)) {
      Tensor before = session.Run("w");
      session.Run(Counting(w));
      Check.Equal("0,0", string.Join(",", before.ToArray<float>()), "read before the step, not a view");
    }
    Check.Equal(2f, keeper.Kept.Item<float>(), "the step's loss, after its memory is gone");
  }

  [Test]
  public static void ANameThatMatchesNothingIsNotFoundWithTheName() {
    var w = new float[2];
    using (Session session = SessionOver(w)) {
      var e = Check.Throws<NotFoundException>(() => session.Run("nope"), "an unknown name");
      Check.Contains("'nope'", e.Message, "the name");
      e = Check.Throws<NotFoundException>(() => session.Run("w", "loss"), "an output between runs");
      Check.Contains("'loss'", e.Message, "outputs exist only while a run is in progress");
      Check.Throws<InvalidArgumentException>(() => session.Run(""), "an empty name");
      Check.Throws<InvalidArgumentException>(() => session.Run((string)null), "a null name");
      Check.Throws<InvalidArgumentException>(() => session.Run((IEnumerable<string>)null), "null names");
    }
  }

  sealed class Missing : SessionRunHook {
    public override void AfterRun(RunContext context) { context.Session.Run("accuracy"); }
  }

  [Test]
  public static void AnOutputNotPublishedInThisRunIsNotFoundInsideAHook() {
    var w = new float[2];
    using (var hook = new Missing())
    using (Session session = SessionOver(w, hook)) {
      var e = Check.Throws<NotFoundException>(() => session.Run(Counting(w)), "the run");
      Check.Contains("'accuracy'", e.Message, "the name");
    }
  }

  [Test]
  public static void ReadingIsNotARunSoItWorksAfterAStopH29() {
    var w = new float[2];
    using (var stop = new StopAtStepHook(numSteps: 1))
    using (Session session = SessionOver(w, stop)) {
      session.Run(Counting(w));
      Check.True(session.ShouldStop, "stopped");
      Check.Equal(1L, session.Run("global_step").Item<long>(), "global_step after the stop");
      Check.Throws<TrainWatchException>(() => session.Run(Counting(w)), "a step after the stop is refused");
    }
  }
}

}  // namespace TrainWatch.Tests
