using System;
using System.Collections.Generic;
using System.Linq;

namespace TrainWatch.Tests {

/// <summary>The other callback kinds: checkpoint listeners, the NaN callback, the log sink.</summary>
static class CallbackTests {
  sealed class Listener : CheckpointSaverListener {
    public readonly List<string> Log = new List<string>();
    public long StopAt = -1;
    public Exception ThrowInBeforeSave;

    public override void Begin() { Log.Add("begin"); }

    public override void BeforeSave(SessionRef session, long globalStep) {
      Log.Add("before_save " + globalStep);
      if (ThrowInBeforeSave != null && globalStep > 0) throw ThrowInBeforeSave;
    }

    public override bool AfterSave(SessionRef session, long globalStep) {
      Log.Add("after_save " + globalStep);
      return globalStep == StopAt;
    }

    public override void End(SessionRef session, long globalStep) { Log.Add("end " + globalStep); }
  }

  static Options CheckpointOptions(string dir, float[] w) {
    return new Options().AddVariable(Tensor.FromArray("w", w)).SetString(Option.CheckpointDir, dir)
        .SetInt64(Option.CheckpointEveryNSteps, 2).SetInt64(Option.EveryNSteps, 2).SetBool(Option.AsyncCheckpoint, false);
  }

  [Test]
  public static void CheckpointListenerHearsEverySaveAndCanRequestAStopB17B22B23() {
    string dir = Scratch.Directory("listener");
    var w = new float[2];
    using (var listener = new Listener { StopAt = 4 })
    using (Options options = CheckpointOptions(dir, w))
    using (var saver = new CheckpointSaverHook(dir, options, listener))
    using (Session session = Session.Monitored(options, saver)) {
      while (!session.ShouldStop) session.Run(ctx => ctx.Variable("w").CopyFrom(new float[] { ctx.GlobalStep, 1 }));
      session.Close();
      Check.Lines(new[] { "begin", "before_save 0", "after_save 0", "before_save 2", "after_save 2", "before_save 4",
                          "after_save 4", "end 4" }, listener.Log, "listener calls");
    }
    Check.Equal("model.ckpt-4", System.IO.Path.GetFileName(Checkpoints.Latest(dir)), "latest checkpoint");
    Checkpoints.Verify(Checkpoints.Latest(dir));
  }

  [Test]
  public static void ACheckpointSavedIsRestoredInPlace() {
    string dir = Scratch.Directory("restore");
    var saved = new float[] { 0, 0 };
    using (Options options = CheckpointOptions(dir, saved))
    using (var saver = new CheckpointSaverHook(dir, options))
    using (Session session = Session.Monitored(options, saver)) {
      for (int i = 0; i < 3; ++i) session.Run(ctx => { saved[0] += 1.5f; saved[1] -= 1; });
      session.Close();  // the final save (B23)
    }
    var restored = new float[2];
    using (var options = new Options().AddVariable(Tensor.FromArray("w", restored)).SetString(Option.CheckpointDir, dir))
    using (Session session = Session.Monitored(options)) {
      Check.Equal(3L, session.GlobalStep, "the global step is restored");
      Check.Equal(4.5f, restored[0], "w[0] restored into the caller's array");
      Check.Equal(-3f, restored[1], "w[1]");
    }
    Check.Equal(null, Checkpoints.Latest(Scratch.Directory("empty")), "no checkpoint: null (TF's None)");
  }

  [Test]
  public static void MonitoredTrainingSessionAddsTheCheckpointSaverFromItsOptionsT6() {
    string dir = Scratch.Directory("training");
    var log = new List<string>();
    using (Options options = CheckpointOptions(dir, new float[2]).SetInt64(Option.StepCountEveryNSteps, 0))
    using (var stop = new StopAtStepHook(lastStep: 3))
    using (var chiefOnly = new Recorder("chief", log))
    using (Session session = Session.MonitoredTraining(options, new Hook[] { stop }, new Hook[] { chiefOnly })) {
      while (!session.ShouldStop) session.Run(Steps.Nothing);
      session.Close();
    }
    Check.Equal("model.ckpt-3", System.IO.Path.GetFileName(Checkpoints.Latest(dir)), "the final checkpoint (B23)");
    Check.True(log.Contains("chief:end"), "a chief runs its chief-only hooks");
  }

  [Test]
  public static void AListenerThatThrowsFailsTheRunWithItsExceptionAndNothingCrashes() {
    string dir = Scratch.Directory("listener-throws");
    var error = new Boom("disk on fire");
    using (var listener = new Listener { ThrowInBeforeSave = error })
    using (Options options = CheckpointOptions(dir, new float[2]))
    using (var saver = new CheckpointSaverHook(dir, options, listener))
    using (Session session = Session.Monitored(options, saver)) {
      session.Run(Steps.Nothing);
      var caught = Check.Throws<Boom>(() => session.Run(Steps.Nothing), "the run that saves at step 2");
      Check.True(ReferenceEquals(error, caught), "the listener's own exception object");
      Check.Throws<FailedPreconditionException>(() => session.Run(Steps.Nothing), "the failed session refuses");
    }
  }

  [Test]
  public static void NanTensorHookWithOptionsNamesTheTensorAndTheStepB31B33() {
    using (var options = new Options().SetInt64(Option.NanAction, (long)NanAction.Fail))
    using (var nan = new NanTensorHook(new[] { "loss" }, options))
    using (Session session = Session.Monitored(null, nan)) {
      session.Run(Steps.Loss(1));
      var e = Check.Throws<NanLossDuringTrainingException>(() => session.Run(Steps.Loss(float.NaN)), "the NaN run");
      Check.Contains("NaN loss during training.", e.Message, "TF's text");
      Check.Contains("tensor 'loss'", e.Message, "the tensor");
      Check.Contains("step 1", e.Message, "the step");
    }
  }

  [Test]
  public static void NanTensorHookWithoutFailingRequestsAStopB34() {
    using (var nan = new NanTensorHook("loss", failOnNanLoss: false))
    using (Session session = Session.Monitored(null, nan)) {
      Log.SetLevel(LogLevel.Error);
      try {
        session.Run(Steps.Loss(float.NaN));
      } finally {
        Log.SetLevel(LogLevel.Info);
      }
      Check.True(session.ShouldStop, "a stop was requested");
      session.Close();
    }
  }

  [Test]
  public static void NanCallbackSeesTheDivergenceAndWhatItThrowsComesOut() {
    var events = new List<NanEvent>();
    var error = new Boom("diverged");
    using (var options = new Options().SetInt64(Option.NanAction, (long)NanAction.Callback))
    using (var nan = new NanTensorHook(new[] { "loss" }, options, (session, e) => {
      events.Add(e);
      if (e.GlobalStep > 0) throw error;
    }))
    using (Session session = Session.Monitored(null, nan)) {
      session.Run(Steps.Loss(float.PositiveInfinity));  // the callback returns: the run goes on
      var caught = Check.Throws<Boom>(() => session.Run(Steps.Loss(float.NaN)), "the callback throws");
      Check.True(ReferenceEquals(error, caught), "the callback's own exception object");
    }
    Check.Equal(2, events.Count, "one event per divergence");
    Check.Equal("loss", events[0].TensorName, "tensor name");
    Check.Equal(1L, events[0].PosInfCount, "+Inf count");
    Check.Equal(1L, events[1].NanCount, "NaN count");
    Check.Equal(1L, events[1].GlobalStep, "step");
  }

  [Test]
  public static void LogSinkReceivesLinesAndOneThatThrowsDoesNotCrash() {
    var lines = new List<string>();
    try {
      Log.SetSink((level, message) => {
        lines.Add(level + " " + message);
        throw new Boom("the sink fails");
      });
      using (var nan = new NanTensorHook("loss"))
      using (Session session = Session.Monitored(null, nan)) {
        Check.Throws<NanLossDuringTrainingException>(() => session.Run(Steps.Loss(float.NaN)), "the NaN run");
      }
    } finally {
      Log.SetSink(null);
    }
    Check.True(lines.Any(l => l.StartsWith("Error ") && l.Contains("Model diverged with loss = NaN.")),
               "the ERROR line of B33 reached the sink: " + string.Join(" | ", lines));
  }
}

}  // namespace TrainWatch.Tests
