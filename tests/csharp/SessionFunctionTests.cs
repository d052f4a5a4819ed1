using System;
using System.Collections.Generic;

namespace TrainWatch.Tests {

/// <summary>The options' init function (Scaffold's init_fn: S7, S13, W10) and ready function (WorkerSessionCreator: S2, S10).</summary>
static class SessionFunctionTests {
  [Test]
  public static void AChiefThatRestoredNothingCallsTheInitFunctionS7W10() {
    var calls = new List<string>();
    var attempts = 0;
    using (var options = new Options().SetInitFunction(session => calls.Add("init at " + session.GlobalStep + (session.IsChief ? " (chief)" : "")))
                                      .SetDouble(Option.RecoveryBackoffSecs, 0))
    using (Session session = Session.Monitored(options)) {
      Check.Lines(new[] { "init at 0 (chief)" }, calls, "called once the session exists (S7)");
      session.Run(ctx => {
        if (++attempts == 1) throw new AbortedException("preempted");
      });
      Check.Equal(2, calls.Count, "and again after a recovery that restored nothing (W10)");
    }
  }

  [Test]
  public static void TheInitFunctionIsNotCalledWhenACheckpointWasRestoredS7() {
    string dir = Scratch.Directory("init-restored");
    var w = new float[1];
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w)).SetString(Option.CheckpointDir, dir)
                                      .SetInt64(Option.EveryNSteps, 100))
    using (var saver = new CheckpointSaverHook(dir, options))
    using (Session session = Session.Monitored(options, saver)) {
      session.Run(Steps.Nothing);
      session.Close();
    }
    int calls = 0;
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w)).SetString(Option.CheckpointDir, dir)
                                      .SetInitFunction(session => ++calls))
    using (Session session = Session.Monitored(options)) {
      Check.Equal(1L, session.GlobalStep, "restored");
    }
    Check.Equal(0, calls, "not called after a restore");
  }

  [Test]
  public static void AnInitFunctionThatThrowsFailsTheCreationWithItsException() {
    var log = new List<string>();
    var error = new Boom("init failed");
    using (var hook = new Recorder("r", log))
    using (var options = new Options().SetInitFunction(session => { throw error; })) {
      var caught = Check.Throws<Boom>(() => Session.Monitored(options, hook), "creation");
      Check.True(ReferenceEquals(error, caught), "the init function's own exception");
      Check.True(log.Contains("r:on_error TW_CALLBACK_FAILED"), "the hooks hear the error: " + string.Join(" ", log));
      options.SetInitFunction(null);
      using (Session session = Session.Monitored(options)) session.Run(Steps.Nothing);  // none any more
    }
  }

  static Options Worker() {
    return new Options().SetBool(Option.IsChief, false).SetDouble(Option.RecoveryWaitSecs, 0.001);
  }

  [Test]
  public static void AWorkerPollsTheReadyFunctionUntilReadyS2() {
    int polls = 0, inits = 0;
    using (var options = Worker().SetReadyFunction(session => ++polls >= 3).SetInitFunction(session => ++inits))
    using (Session session = Session.Monitored(options)) {
      Check.Equal(3, polls, "polled until ready");
      Check.Equal(0, inits, "a worker does not initialize");
      Check.True(!session.IsChief, "a worker");
    }
  }

  [Test]
  public static void AWorkerNeverReadyGivesUpAfterMaxWaitSecsS10() {
    int polls = 0;
    using (var options = Worker().SetReadyFunction(session => { ++polls; return false; }).SetDouble(Option.MaxWaitSecs, 0.02)
                                 .SetDouble(Option.RecoveryWaitSecs, 0.005)) {
      Check.Contains("Session was not ready after waiting",
                     Check.Throws<DeadlineExceededException>(() => Session.Monitored(options), "creation").Message, "TF's text");
    }
    Check.True(polls >= 2, "it polled: " + polls);
  }

  [Test]
  public static void AReadyFunctionThatThrowsFailsTheCreationWithItsException() {
    var error = new Boom("cannot tell");
    using (var options = Worker().SetReadyFunction(session => { throw error; })) {
      Check.True(ReferenceEquals(error, Check.Throws<Boom>(() => Session.Monitored(options), "creation")), "the ready function's own exception");
    }
  }
}

}  // namespace TrainWatch.Tests
