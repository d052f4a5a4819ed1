using System;
using System.Collections.Generic;

namespace TrainWatch.Tests {

/// <summary>
/// Exceptions through native frames: what a C# callback throws is caught before it reaches native
/// code, fails the call, and comes out of that call as the same object; other hooks hear OnError; the
/// process keeps running.
/// </summary>
static class ExceptionTests {
  [Test]
  public static void HookExceptionIsTheSameObjectFromEveryCallbackH14H18() {
    foreach (string where in new[] { "begin", "after_create_session", "before_run", "after_run", "end" }) {
      var log = new List<string>();
      var error = new Boom("from " + where);
      using (var thrower = new Recorder("thrower", log) { ThrowIn = where, Error = error })
      using (var other = new Recorder("other", log)) {
        var caught = Check.Throws<Boom>(() => {
          using (Session session = Session.Monitored(null, thrower, other)) {
            session.Run(Steps.Nothing);
            session.Close();
          }
        }, where);
        Check.True(ReferenceEquals(error, caught), where + ": the same exception object comes out");
        Check.Contains("Recorder.Event", caught.StackTrace, where + ": the callback's stack trace is kept");
      }
    }
  }

  [Test]
  public static void HookThatThrowsFailsTheRunOthersHearOnErrorAndTheSessionRefusesFurtherRunsH13() {
    var log = new List<string>();
    var error = new Boom("after_run exploded");
    using (var thrower = new Recorder("thrower", log) { ThrowIn = "after_run", Error = error })
    using (var other = new Recorder("other", log))
    using (Session session = Session.Monitored(null, thrower, other)) {
      Check.True(ReferenceEquals(error, Check.Throws<Boom>(() => session.Run(Steps.Nothing), "run")), "same object");
      Check.True(!log.Contains("other:after_run"), "later hooks' after_run is skipped (H14)");
      Check.True(log.Contains("other:on_error TW_CALLBACK_FAILED"), "the other hook hears on_error: " + string.Join(" ", log));
      Check.Throws<FailedPreconditionException>(() => session.Run(Steps.Nothing), "a failed session refuses to run");
      session.Close();
      Check.True(!log.Contains("other:end"), "end() is skipped after a failure (H15)");
    }
  }

  [Test]
  public static void StepExceptionIsTheSameObjectAndSkipsAfterRunH13() {
    var log = new List<string>();
    var error = new InvalidOperationException("step exploded");
    using (var hook = new Recorder("r", log))
    using (Session session = Session.Monitored(null, hook)) {
      var caught = Check.Throws<InvalidOperationException>(() => session.Run(ctx => { throw error; }), "run");
      Check.True(ReferenceEquals(error, caught), "the same exception object comes out of Run");
      Check.True(!log.Contains("r:after_run"), "no after_run for a failed step (H13)");
      Check.True(log.Contains("r:on_error TW_CALLBACK_FAILED"), "hooks hear on_error with TW_CALLBACK_FAILED");
    }
  }

  [Test]
  public static void AbortedFromTheStepTriggersRecoveryW25H19() {
    int attempts = 0;
    using (Session session = Session.Monitored(null)) {
      session.Run(ctx => {
        if (++attempts == 1) throw new AbortedException("preempted");
      });
      Check.Equal(2, attempts, "the whole step is run again after the recovery");
      Check.Equal(2L, session.CreationCount, "a new inner session was created");
      session.Close();
    }
  }

  [Test]
  public static void AbortedFromAHookRerunsAfterCreateSessionNotBeginH8H19() {
    var log = new List<string>();
    using (var preempted = new Recorder("p", new List<string>()) { ThrowIn = "after_run", Error = new AbortedException("preempted") })
    using (var hook = new Recorder("r", log))
    using (Session session = Session.Monitored(null, preempted, hook)) {
      int steps = 0;
      session.Run(ctx => {
        ++steps;
        preempted.ThrowIn = steps == 1 ? "after_run" : null;
      });
      Check.Equal(2, steps, "the run was retried");
      Check.Equal(1, log.FindAll(e => e == "r:begin").Count, "begin once");
      Check.Equal(2, log.FindAll(e => e == "r:after_create_session").Count, "after_create_session per inner session");
    }
  }

  [Test]
  public static void SingularSessionDoesNotRecoverW26() {
    var error = new UnavailableException("gone");
    using (Session session = Session.Singular(null)) {
      var caught = Check.Throws<UnavailableException>(() => session.Run(ctx => { throw error; }), "run");
      Check.True(ReferenceEquals(error, caught), "the step's own UnavailableException");
    }
  }

  [Test]
  public static void OutOfRangeFromTheStepEndsTheInputCleanlyH15() {
    var log = new List<string>();
    var endOfInput = new OutOfRangeException("end of input");
    using (var hook = new Recorder("r", log))
    using (Session session = Session.Monitored(null, hook)) {
      var caught = Check.Throws<OutOfRangeException>(() => session.Run(ctx => { throw endOfInput; }), "run");
      Check.True(ReferenceEquals(endOfInput, caught), "the step's own OutOfRangeException");
      session.Close();
      Check.True(log.Contains("r:end"), "end() runs on close after OutOfRange, as TF's with-block (H15): " + string.Join(" ", log));
    }
  }

  [Test]
  public static void RequestStopInTheStepThrowsStopIterationW23() {
    using (Session session = Session.Monitored(null)) {
      Check.Throws<StopIterationException>(() => session.Run(ctx => ctx.RequestStop()), "run");
      session.Close();
    }
  }

  [Test]
  public static void OnErrorThatThrowsIsDroppedAndTheRunsErrorComesOut() {
    var log = new List<string>();
    var stepError = new Boom("step");
    using (var badOnError = new Recorder("bad", log) { ThrowIn = "on_error TW_CALLBACK_FAILED", Error = new Boom("on_error") })
    using (Session session = Session.Monitored(null, badOnError)) {
      var caught = Check.Throws<Boom>(() => session.Run(ctx => { throw stepError; }), "run");
      Check.True(ReferenceEquals(stepError, caught), "the step's exception, not on_error's");
      Check.True(log.Contains("bad:on_error TW_CALLBACK_FAILED"), "on_error was called");
    }
  }

  [Test]
  public static void ExceptionFromANestedRunWithoutHooksComesOutOfTheOuterRunW21() {
    var inner = new Boom("inner step");
    using (Session session = Session.Monitored(null)) {
      var caught = Check.Throws<Boom>(() => session.Run(ctx => ctx.Session.RunWithoutHooks(c => { throw inner; })), "run");
      Check.True(ReferenceEquals(inner, caught), "the inner step's exception, through two native calls");
      Check.Throws<FailedPreconditionException>(() => session.Run(Steps.Nothing), "the failed session refuses");
    }
  }

  [Test]
  public static void ManyFailuresInARowDoNotCrashOrMixUpExceptions() {
    for (int i = 0; i < 200; ++i) {
      var error = new Boom("failure " + i);
      using (Session session = Session.Monitored(null)) {
        Check.True(ReferenceEquals(error, Check.Throws<Boom>(() => session.Run(ctx => { throw error; }), "run")),
                   "failure " + i + " is its own object");
      }
    }
  }
}

}  // namespace TrainWatch.Tests
