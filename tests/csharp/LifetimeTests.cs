using System;
using System.Collections.Generic;

namespace TrainWatch.Tests {

/// <summary>IDisposable sessions, hooks and options; wrappers used past their lifetime throw, never crash.</summary>
static class LifetimeTests {
  [Test]
  public static void UsingDisposesAndDoubleDisposeIsSafe() {
    Session kept;
    using (Session session = Session.Monitored(null)) {
      session.Run(Steps.Nothing);
      kept = session;
    }
    kept.Dispose();
    Check.Throws<ObjectDisposedException>(() => kept.Run(Steps.Nothing), "Run after Dispose");
    Check.Throws<ObjectDisposedException>(() => { long step = kept.GlobalStep; }, "GlobalStep after Dispose");
    Check.Throws<ObjectDisposedException>(() => kept.Close(), "Close after Dispose");
  }

  [Test]
  public static void DisposeInsideItsOwnStepThrowsAndTheSessionSurvives() {
    using (Session session = Session.Monitored(null)) {
      var e = Check.Throws<FailedPreconditionException>(() => session.Run(ctx => session.Dispose()), "Dispose in the step");
      Check.Contains("own callback", e.Message, "why");
      Check.Equal(0L, session.GlobalStep, "the session is still there (the failed run did not free it)");
    }
  }

  [Test]
  public static void DisposeWithoutCloseAbandonsTheSessionWithoutEnd() {
    var log = new List<string>();
    using (var hook = new Recorder("r", log)) {
      using (Session session = Session.Monitored(null, hook)) session.Run(Steps.Nothing);
      Check.True(!log.Contains("r:end"), "an abandoned session does not call end(): " + string.Join(" ", log));
      Check.True(log.Contains("r:after_run"), "the run happened");
    }
  }

  [Test]
  public static void CloseRunsEndOnceAndASecondCloseIsFailedPreconditionW17W18() {
    var log = new List<string>();
    using (var hook = new Recorder("r", log))
    using (Session session = Session.Monitored(null, hook)) {
      session.Run(Steps.Nothing);
      session.Close();
      Check.Equal(1, log.FindAll(e => e == "r:end").Count, "end() once");
      Check.Contains("already closed", Check.Throws<FailedPreconditionException>(() => session.Close(), "second close").Message,
                     "W18's message");
      Check.Throws<FailedPreconditionException>(() => session.Run(Steps.Nothing), "run after close (W6)");
    }
  }

  [Test]
  public static void AVariableViewOfADisposedSessionThrows() {
    var w = new float[] { 1, 2 };
    Tensor view;
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w))) {
      using (Session session = Session.Monitored(options)) view = session.Variable("w");
    }
    Check.Contains("disposed", Check.Throws<FailedPreconditionException>(() => view.ToArray<float>(), "read").Message, "message");
  }

  [Test]
  public static void ContextsKeptPastTheirCallbackThrowFailedPrecondition() {
    StepContext step = null;
    Tensor feed = null;
    using (Session session = Session.Monitored(null)) {
      session.Run(ctx => {
        step = ctx;
        feed = ctx.Feed("x");
      }, Tensor.Scalar("x", 1f));
      Check.Throws<FailedPreconditionException>(() => { long s = step.GlobalStep; }, "a StepContext after its step");
      Check.Throws<FailedPreconditionException>(() => feed.Item<float>(), "a feed view after its step");
      Check.Throws<FailedPreconditionException>(() => step.Publish("loss", 1f), "publishing after the step");
    }
  }

  [Test]
  public static void AHookDisposedWhileASessionUsesItFailsTheRunCleanly() {
    var hook = new Recorder("r", new List<string>());
    using (Session session = Session.Monitored(null, hook)) {
      hook.Dispose();
      hook.Dispose();
      Check.Contains("destroyed", Check.Throws<FailedPreconditionException>(() => session.Run(Steps.Nothing), "run").Message,
                     "the callback object is gone");
      Check.Throws<ObjectDisposedException>(() => { string name = hook.Name; }, "a disposed hook's Name");
    }
  }

  [Test]
  public static void ANanTensorHookDisposedWhileASessionHoldsItKeepsItsCallback() {
    int calls = 0;
    using (var options = new Options().SetInt64(Option.NanAction, (long)NanAction.Callback)) {
      var nan = new NanTensorHook(new[] { "loss" }, options, (session, e) => ++calls);
      using (Session session = Session.Monitored(null, nan)) {
        nan.Dispose();
        GC.Collect();
        GC.WaitForPendingFinalizers();
        session.Run(Steps.Loss(float.NaN));
      }
    }
    Check.Equal(1, calls, "the session still runs the hook it holds, callback included");
  }

  [Test]
  public static void AFeedFnHookDisposedWhileASessionHoldsItKeepsItsFunction() {
    int calls = 0;
    var feeder = new FeedFnHook(() => {
      ++calls;
      return new[] { Tensor.Scalar("x", 2f) };
    });
    float seen = 0;
    using (Session session = Session.Monitored(null, feeder)) {
      feeder.Dispose();
      GC.Collect();
      GC.WaitForPendingFinalizers();
      session.Run(ctx => seen = ctx.Feed("x").Item<float>());
    }
    Check.Equal(1, calls, "the session still runs the hook it holds, function included");
    Check.Equal(2f, seen, "and its feed");
  }

  [Test]
  public static void ASessionKeepsTheInitFunctionOfOptionsDisposedBeforeIt() {
    int calls = 0, attempts = 0;
    var options = new Options().SetInitFunction(session => ++calls).SetDouble(Option.RecoveryBackoffSecs, 0);
    using (Session session = Session.Monitored(options)) {
      options.Dispose();
      GC.Collect();
      GC.WaitForPendingFinalizers();
      session.Run(ctx => {
        if (++attempts == 1) throw new AbortedException("preempted");
      });
    }
    Check.Equal(2, calls, "the recovery calls the init function again");
  }

  [Test]
  public static void DisposedOptionsThrowObjectDisposed() {
    var options = new Options();
    options.Dispose();
    options.Dispose();
    Check.Throws<ObjectDisposedException>(() => options.SetInt64(Option.MaxToKeep, 1), "set");
    Check.Throws<ObjectDisposedException>(() => Session.Monitored(options), "a session from disposed options");
  }

  [Test]
  public static void SessionsAndHooksLeftToTheCollectorDoNotCrash() {
    for (int i = 0; i < 50; ++i) {
      Session session = Session.Monitored(null, new Recorder("r", new List<string>()), new StopAtStepHook(lastStep: 100));
      session.Run(Steps.Loss(1));
    }
    GC.Collect();
    GC.WaitForPendingFinalizers();
    GC.Collect();
    using (Session session = Session.Monitored(null)) session.Run(Steps.Nothing);
  }
}

}  // namespace TrainWatch.Tests
