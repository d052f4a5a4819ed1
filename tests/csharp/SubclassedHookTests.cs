using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;

namespace TrainWatch.Tests {

/// <summary>
/// Subclassing built-in hooks as in TF (docs/ARCHITECTURE.md): overrides run in TF's order (H6, H9, H12),
/// base.&lt;Callback&gt; runs the built-in's, not calling it skips it, and the protected extension points.
/// </summary>
static class SubclassedHookTests {
  /// <summary>A step adding 1 to both elements of w and publishing loss = sum(w): 2, 4, 6, …</summary>
  static Action<StepContext> Counting(float[] w) {
    return ctx => {
      w[0] += 1;
      w[1] += 1;
      ctx.Publish("loss", w[0] + w[1]);
    };
  }

  /// <summary>A StopAtStepHook subclass recording every callback, calling the built-in's unless told not to.</summary>
  sealed class RecordingStop : StopAtStepHook {
    public readonly List<string> Calls = new List<string>();
    readonly bool callBase;

    public RecordingStop(long lastStep, bool callBase) : base(lastStep: lastStep) { this.callBase = callBase; }

    public override void Begin(SessionRef session) {
      Calls.Add("begin");
      base.Begin(session);
    }

    public override void AfterCreateSession(SessionRef session) {
      Calls.Add("after_create_session");
      base.AfterCreateSession(session);
    }

    public override void BeforeRun(RunContext context) {
      Calls.Add("before_run");
      base.BeforeRun(context);
    }

    public override void AfterRun(RunContext context) {
      Calls.Add("after_run");
      if (callBase) base.AfterRun(context);
    }

    public override void End(SessionRef session) {
      Calls.Add("end");
      base.End(session);
    }
  }

  [Test]
  public static void OverridesRunInTfOrderAndBaseRunsTheBuiltinH6H9H12B11() {
    using (var hook = new RecordingStop(2, true)) {
      using (Session session = Session.Monitored(null, hook)) {
        while (!session.ShouldStop) session.Run(Steps.Nothing);
        Check.Equal(2L, session.GlobalStep, "the built-in's stop request, made through base.AfterRun");
        session.Close();
      }
      Check.Lines(new[] { "begin", "after_create_session", "before_run", "after_run", "before_run", "after_run", "end" },
                  hook.Calls, "TF's order");
    }
  }

  [Test]
  public static void NotCallingBaseSkipsTheBuiltinBehaviour() {
    using (var hook = new RecordingStop(2, false))
    using (Session session = Session.Monitored(null, hook)) {
      for (int i = 0; i < 4; ++i) session.Run(Steps.Nothing);
      Check.True(!session.ShouldStop, "the stop at step 2 was the built-in's AfterRun: skipped");
      session.Close();
    }
  }

  sealed class PlainNan : NanTensorHook {
    public PlainNan() : base("loss") {}
  }

  [Test]
  public static void ASubclassOverridingNothingStaysNative() {
    using (var plain = new PlainNan())
    using (var builtin = new NanTensorHook("loss"))
    using (var recording = new RecordingStop(2, true)) {
      Check.Equal(0, plain.OverriddenCallbacks.Count, "no override: the native hook itself runs");
      Check.Equal(0, builtin.OverriddenCallbacks.Count, "a built-in hook");
      Check.Lines(new[] { "Begin", "AfterCreateSession", "BeforeRun", "AfterRun", "End" }, recording.OverriddenCallbacks.ToList(),
                  "what the recording subclass overrides");
      using (Session session = Session.Monitored(null, plain)) {
        Check.Throws<NanLossDuringTrainingException>(() => session.Run(Steps.Loss(float.NaN)), "the native check runs (B33)");
      }
    }
  }

  sealed class InspectingNan : NanTensorHook {
    public readonly List<string> Seen = new List<string>();

    public InspectingNan() : base("loss") {}

    public override void BeforeRun(RunContext context) {
      base.BeforeRun(context);
      Seen.Add("requested " + string.Join(",", context.Requests));  // the built-in's SessionRunArgs
    }

    public override void AfterRun(RunContext context) {
      Seen.Add("loss " + context.Result("loss").Item<float>());  // run_values.results
      base.AfterRun(context);
    }
  }

  [Test]
  public static void BaseBeforeRunRequestsTheBuiltinFetchAndAfterRunReadsItsValue() {
    using (var hook = new InspectingNan())
    using (Session session = Session.Monitored(null, hook)) {
      session.Run(Counting(new float[2]));
      session.Close();
      Check.Lines(new[] { "requested loss", "loss 2" }, hook.Seen, "the loss fetch and its value");
    }
  }

  [Test]
  public static void ADisposedSubclassKeepsWorkingInTheSessionHoldingIt() {
    var hook = new InspectingNan();
    var logging = new CapturingLogger(new Options().SetInt64(Option.EveryNSteps, 1), false);
    using (Session session = Session.Monitored(null, logging, hook)) {  // NaN skips the later after_runs (H14)
      hook.Dispose();
      logging.Dispose();
      session.Run(Steps.Loss(1));
      Check.Throws<NanLossDuringTrainingException>(() => session.Run(Steps.Loss(float.NaN)), "base.AfterRun still checks");
      Check.Lines(new[] { "requested loss", "loss 1", "requested loss", "loss NaN" }, hook.Seen, "the overrides ran");
      Check.Lines(new[] { "loss=1", "loss=NaN" }, logging.Captured, "the extension point ran");
    }
    Check.Throws<ObjectDisposedException>(() => Session.Monitored(null, hook), "a disposed hook joins no new session");
  }

  sealed class ThrowingNan : NanTensorHook {
    public readonly Exception Error;

    public ThrowingNan(Exception error) : base("loss") { Error = error; }

    public override void AfterRun(RunContext context) { throw Error; }
  }

  [Test]
  public static void AnExceptionFromAnOverrideComesOutOfRunAsTheSameObject() {
    var log = new List<string>();
    using (var hook = new ThrowingNan(new Boom("override failed")))
    using (var other = new Recorder("other", log))
    using (Session session = Session.Monitored(null, hook, other)) {
      Boom thrown = Check.Throws<Boom>(() => session.Run(Steps.Loss(1)), "the override's exception");
      Check.True(ReferenceEquals(hook.Error, thrown), "the same object");
      Check.True(thrown.StackTrace.Contains("AfterRun"), "with its stack trace: " + thrown.StackTrace);
    }
    Check.Equal("other:on_error TW_CALLBACK_FAILED", log.Last(), "the other hooks hear OnError");
  }

  sealed class CallbackNan : NanTensorHook {
    public readonly List<string> Calls = new List<string>();

    public CallbackNan(Options options, NanCallback callback) : base(new[] { "loss" }, options, callback) {}

    public override void AfterRun(RunContext context) {
      Calls.Add("after_run");
      base.AfterRun(context);  // runs the built-in, which calls the NanCallback
      Calls.Add("not reached");
    }
  }

  [Test]
  public static void AnExceptionFromACSharpCallbackTheBuiltinRunsComesThroughBaseAsTheSameObject() {
    var boom = new Boom("the NaN callback failed");
    using (var options = new Options().SetInt64(Option.NanAction, (long)NanAction.Callback))
    using (var hook = new CallbackNan(options, (session, e) => { throw boom; }))
    using (Session session = Session.Monitored(null, hook)) {
      Check.True(ReferenceEquals(boom, Check.Throws<Boom>(() => session.Run(Steps.Loss(float.NaN)), "the callback's")),
                 "the same object");
      Check.Lines(new[] { "after_run" }, hook.Calls, "the exception left the override at the base call");
    }
  }

  sealed class ForgivingNan : NanTensorHook {
    public readonly List<string> Caught = new List<string>();

    public ForgivingNan() : base("loss") {}

    public override void AfterRun(RunContext context) {
      try {
        base.AfterRun(context);
      } catch (NanLossDuringTrainingException e) {
        Caught.Add(e.Message);  // the subclass decides: the run goes on
      }
    }
  }

  [Test]
  public static void TheBuiltinsFailureThroughBaseKeepsItsClassAndTheOverrideMayCatchIt() {
    using (var hook = new ForgivingNan())
    using (Session session = Session.Monitored(null, hook)) {
      session.Run(Steps.Loss(float.NaN));
      session.Run(Steps.Loss(1));
      session.Close();
      Check.Equal(1, hook.Caught.Count, "one NaN");
      Check.Contains("NaN loss during training.", hook.Caught[0], "TF's text");
    }
  }

  /// <summary>A LoggingTensorHook subclass overriding TF's _log_tensors; base logs as the built-in does.</summary>
  sealed class CapturingLogger : LoggingTensorHook {
    public readonly List<string> Captured = new List<string>();
    readonly bool callBase;

    public CapturingLogger(Options options, bool callBase) : base(new[] { "loss" }, options) { this.callBase = callBase; }

    protected override void LogTensors(IReadOnlyList<Tensor> values) {
      foreach (Tensor t in values) Captured.Add(t.Name + "=" + t.Item<float>());
      if (callBase) base.LogTensors(values);
    }
  }

  [Test]
  public static void LoggingTensorHookLogTensorsIsAnExtensionPointB9() {
    foreach (bool callBase in new[] { false, true }) {
      using (var options = new Options().SetInt64(Option.EveryNSteps, 1))
      using (var hook = new CapturingLogger(options, callBase)) {
        List<string> lines = BuiltinHookTests.LinesOf(() => {
          using (Session session = Session.Monitored(null, hook)) {
            Action<StepContext> step = Counting(new float[2]);
            session.Run(step);
            session.Run(step);
            session.Close();
          }
        });
        Check.Lines(new[] { "loss=2", "loss=4" }, hook.Captured, "the values each trigger logs");
        Check.Equal(callBase, lines.Any(l => l.Contains("loss = 2")), "the built-in line only through base: " + string.Join(" | ", lines));
        Check.Lines(new[] { "LogTensors" }, hook.OverriddenCallbacks.ToList(), "its callbacks stay native");
      }
    }
  }

  sealed class RecordingCounter : StepCounterHook {
    public readonly List<string> Records = new List<string>();

    public RecordingCounter() : base(everyNSteps: 1) {}

    protected override void LogAndRecord(long elapsedSteps, double elapsedTime, long globalStep) {
      Check.True(elapsedTime >= 0, "an elapsed time");
      Records.Add(elapsedSteps + "@" + globalStep);
    }
  }

  [Test]
  public static void StepCounterHookLogAndRecordIsAnExtensionPointB27() {
    using (var hook = new RecordingCounter()) {
      List<string> lines = BuiltinHookTests.LinesOf(() => {
        using (Session session = Session.Monitored(null, hook)) {
          for (int i = 0; i < 3; ++i) session.Run(Steps.Nothing);
          session.Close();
        }
      });
      Check.True(hook.Records.Count > 0 && hook.Records.All(r => r.StartsWith("1@")), "one step each: " + string.Join(",", hook.Records));
      Check.Equal("1@3", hook.Records.Last(), "the last at global step 3");
      Check.True(!lines.Any(l => l.Contains("global_step/sec")), "the override replaced the rate line");
    }
  }

  sealed class StoppingSaver : CheckpointSaverHook {
    public readonly List<long> Saved = new List<long>();

    public StoppingSaver(string dir, Options options) : base(dir, options) {}

    protected override bool Save(SessionRef session, long step) {
      Saved.Add(step);
      base.Save(session, step);
      return step >= 2;  // TF: a true _save result makes after_run request a stop
    }
  }

  [Test]
  public static void CheckpointSaverHookSaveIsAnExtensionPointWhoseResultRequestsAStopB18B23() {
    string dir = Scratch.Directory("subclass-save");
    var w = new float[2];
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w)).SetInt64(Option.EveryNSteps, 2)
                                      .SetBool(Option.AsyncCheckpoint, false))
    using (var hook = new StoppingSaver(dir, options)) {
      using (Session session = Session.Monitored(options, hook)) {
        while (!session.ShouldStop) session.Run(Counting(w));
        Check.Equal(2L, session.GlobalStep, "stopped by the override's result");
        session.Close();
      }
      Check.Lines(new[] { "0", "2" }, hook.Saved.Select(s => s.ToString()).ToList(),
                  "after_create_session, step 2; End: the step did not move (B23)");
      Check.Equal(Path.Combine(dir, "model.ckpt-2"), Checkpoints.Latest(dir), "base.Save wrote the checkpoints");
    }
  }

  sealed class ThrowingLogger : LoggingTensorHook {
    public readonly Exception Error = new Boom("cannot log");

    public ThrowingLogger(Options options) : base(new[] { "loss" }, options) {}

    protected override void LogTensors(IReadOnlyList<Tensor> values) { throw Error; }
  }

  [Test]
  public static void AnExceptionFromAnExtensionPointComesOutAsTheSameObject() {
    using (var options = new Options().SetInt64(Option.EveryNSteps, 1))
    using (var hook = new ThrowingLogger(options))
    using (Session session = Session.Monitored(null, hook)) {
      Check.True(ReferenceEquals(hook.Error, Check.Throws<Boom>(() => session.Run(Steps.Loss(1)), "LogTensors threw")),
                 "the same object");
    }
  }

  // One subclass per remaining built-in kind, each recording its override and calling the built-in's.
  static readonly List<string> KindCalls = new List<string>();

  sealed class SubNan : NanTensorHook {
    public SubNan() : base("loss") {}
    public override void AfterRun(RunContext c) { KindCalls.Add("NanTensorHook " + c.Result("loss").Item<float>()); base.AfterRun(c); }
  }
  sealed class SubStop : StopAtStepHook {
    public SubStop() : base(lastStep: 5) {}
    public override void AfterRun(RunContext c) { KindCalls.Add("StopAtStepHook"); base.AfterRun(c); }
  }
  sealed class SubLogging : LoggingTensorHook {
    public SubLogging(Options o) : base(new[] { "loss" }, o) {}
    public override void AfterRun(RunContext c) { KindCalls.Add("LoggingTensorHook " + c.Result("loss").Item<float>()); base.AfterRun(c); }
  }
  sealed class SubCounter : StepCounterHook {
    public SubCounter() : base(everyNSteps: 1) {}
    public override void AfterRun(RunContext c) { KindCalls.Add("StepCounterHook"); base.AfterRun(c); }
  }
  sealed class SubSummary : SummarySaverHook {
    public SubSummary(Options o) : base(new[] { "loss" }, o) {}
    public override void AfterRun(RunContext c) { KindCalls.Add("SummarySaverHook"); base.AfterRun(c); }
  }
  sealed class SubSaver : CheckpointSaverHook {
    public SubSaver(string dir, Options o) : base(dir, o) {}
    public override void AfterRun(RunContext c) { KindCalls.Add("CheckpointSaverHook"); base.AfterRun(c); }
  }
  sealed class SubFeed : FeedFnHook {
    public SubFeed() : base(() => new Tensor[0]) {}
    public override void BeforeRun(RunContext c) { KindCalls.Add("FeedFnHook"); base.BeforeRun(c); }
  }
  sealed class SubFinal : FinalOpsHook {
    public SubFinal() : base(ctx => {}) {}
    public override void End(SessionRef s) { KindCalls.Add("FinalOpsHook"); base.End(s); }
  }
  sealed class SubWaiter : GlobalStepWaiterHook {
    public SubWaiter() : base(0) {}
    public override void BeforeRun(RunContext c) { KindCalls.Add("GlobalStepWaiterHook"); base.BeforeRun(c); }
  }
  sealed class SubProfiler : ProfilerHook {
    public SubProfiler(string dir) : base(saveSteps: 100, outputDir: dir) {}
    public override void AfterRun(RunContext c) { KindCalls.Add("ProfilerHook"); base.AfterRun(c); }
  }

  [Test]
  public static void EveryBuiltinKindCanBeSubclassed() {
    string dir = Scratch.Directory("subclass-kinds");
    KindCalls.Clear();
    var w = new float[2];
    using (var every = new Options().SetInt64(Option.EveryNSteps, 1).SetString(Option.OutputDir, dir))
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w)).SetInt64(Option.EveryNSteps, 1)) {
      var hooks = new BuiltinHook[] {
        new SubNan(), new SubStop(), new SubLogging(every), new SubCounter(), new SubSummary(every),
        new SubSaver(Path.Combine(dir, "ckpt"), options), new SubFeed(), new SubFinal(), new SubWaiter(), new SubProfiler(dir),
      };
      BuiltinHookTests.LinesOf(() => {
        using (Session session = Session.Monitored(options, hooks)) {
          session.Run(Counting(w));
          session.Close();
        }
      });
      Check.Lines(new[] { "FeedFnHook", "GlobalStepWaiterHook", "NanTensorHook 2", "StopAtStepHook", "LoggingTensorHook 2",
                          "StepCounterHook", "SummarySaverHook", "CheckpointSaverHook", "ProfilerHook", "FinalOpsHook" },
                  KindCalls, "each override, in TF's order");
      foreach (BuiltinHook h in hooks) {
        Check.Equal(1, h.OverriddenCallbacks.Count, h.GetType().Name + " overrides one callback");
        h.Dispose();
      }
    }
  }
}

}  // namespace TrainWatch.Tests
