using System;
using System.Collections.Generic;
using System.Linq;

namespace TrainWatch.Tests {

/// <summary>
/// The hooks that call C# functions: FeedFnHook (B44), FinalOpsHook (B43), GlobalStepWaiterHook (B41,
/// B42) and LoggingTensorHook's formatter (B9). What each function throws comes out as the same object.
/// </summary>
static class HookFunctionTests {
  /// <summary>Collects everything collectable and fills the freed memory with new arrays of -1.</summary>
  static void CollectAndOverwrite() {
    GC.Collect();
    GC.WaitForPendingFinalizers();
    GC.Collect();
    var garbage = new List<float[]>();
    for (int i = 0; i < 10000; ++i) garbage.Add(Enumerable.Repeat(-1f, 64).ToArray());
    GC.KeepAlive(garbage);
  }

  [Test]
  public static void FeedFnHookFeedsTheStepWhatItsFunctionReturnsB44() {
    var batches = new Queue<float[]>(new[] { new float[] { 1, 2 }, new float[] { 3, 4 } });
    var seen = new List<string>();
    IntPtr fedAt = IntPtr.Zero;
    using (var feeder = new FeedFnHook(() => {
      // Only the hook keeps this tensor, and so its array pinned, during the run.
      Tensor x = Tensor.FromArray("x", batches.Dequeue().Concat(Enumerable.Repeat(0f, 62)).ToArray());
      fedAt = x.Data;
      return new[] { x };
    }))
    using (Session session = Session.Monitored(null, feeder)) {
      for (int i = 0; i < 2; ++i) {
        session.Run(ctx => {
          CollectAndOverwrite();
          Tensor x = ctx.Feed("x");
          seen.Add(string.Join(",", x.ToArray<float>().Take(2)) + (x.Data == fedAt ? " in place" : " copied"));
        });
      }
      session.Close();
    }
    Check.Lines(new[] { "1,2 in place", "3,4 in place" }, seen, "each run sees its batch, read in place (zero copy)");
  }

  [Test]
  public static void FeedFnHookFeedsConflictWithTheCallersH23() {
    using (var feeder = new FeedFnHook(() => new[] { Tensor.Scalar("x", 1f) }))
    using (Session session = Session.Monitored(null, feeder)) {
      Check.Contains("Same tensor is fed by a SessionRunHook and user. Conflict(s): ['x']",
                     Check.Throws<FeedConflictException>(() => session.Run(Steps.Nothing, Tensor.Scalar("x", 2f)), "run").Message,
                     "TF's text");
    }
  }

  [Test]
  public static void AFeedFunctionThatThrowsFailsTheRunWithItsException() {
    var log = new List<string>();
    var error = new Boom("no more batches");
    int calls = 0;
    using (var feeder = new FeedFnHook(() => {
      if (++calls == 2) throw error;
      return null;  // no feeds
    }))
    using (var recorder = new Recorder("r", log))
    using (Session session = Session.Monitored(null, feeder, recorder)) {
      session.Run(Steps.Nothing);
      Check.True(ReferenceEquals(error, Check.Throws<Boom>(() => session.Run(Steps.Nothing), "run")), "the function's own exception");
    }
    Check.True(log.Contains("r:on_error TW_CALLBACK_FAILED"), "the other hooks hear the error: " + string.Join(" ", log));
    using (var feeder = new FeedFnHook(() => new Tensor[] { null }))
    using (Session session = Session.Monitored(null, feeder)) {
      Check.Throws<InvalidArgumentException>(() => session.Run(Steps.Nothing), "a null feed");
    }
    Check.Throws<InvalidArgumentException>(() => new FeedFnHook(null), "a null function");
  }

  [Test]
  public static void AFeedFunctionThrowingOutOfRangeEndsTheInputCleanlyH15() {
    var log = new List<string>();
    using (var feeder = new FeedFnHook(() => { throw new OutOfRangeException("end of input"); }))
    using (var recorder = new Recorder("r", log))
    using (Session session = Session.Monitored(null, feeder, recorder)) {
      Check.Throws<OutOfRangeException>(() => session.Run(Steps.Nothing), "run");
      session.Close();
    }
    Check.True(log.Contains("r:end"), "a clean end: end() runs: " + string.Join(" ", log));
  }

  [Test]
  public static void FinalOpsHookRunsItsStepOnceAtCloseB43() {
    var w = new float[] { 2, 2, 2 };
    var bias = new float[] { 1 };
    var stepsSeen = new List<long>();
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w)))
    using (var final = new FinalOpsHook(ctx => {
      stepsSeen.Add(ctx.GlobalStep);
      float total = ctx.Variable("w").ToArray<float>().Sum() + ctx.Feed("bias").Item<float>();
      ctx.Publish("total", total);
      ctx.Publish(Tensor.FromArray("w_seen", (float[])w.Clone()));  // by reference: the hook copies it
    }, Tensor.FromArray("bias", bias, new long[0]))) {
      bias[0] = 100;  // the feeds were copied when the hook was created
      IReadOnlyList<Tensor> values;
      using (Session session = Session.Monitored(options, final)) {
        session.Run(Steps.Nothing);
        session.Run(Steps.Nothing);
        Check.True(!final.HasValues, "no values before end (TF's None)");
        Check.Equal(null, final.Values, "Values is null before end");
        session.Close();
        Check.Equal(2L, session.GlobalStep, "the final step does not advance the global step");
      }
      Check.Equal("2", string.Join(",", stepsSeen), "run once, at the global step of the end");
      Check.True(final.HasValues, "values after end");
      values = final.Values;
      final.Dispose();
      Check.Equal("total,w_seen", string.Join(",", values.Select(v => v.Name)), "what it published, in order");
      Check.Equal(7f, values[0].Item<float>(), "sum(w) + bias");
      Check.Equal("2,2,2", string.Join(",", values[1].ToArray<float>()), "a published array, copied");
      Check.Throws<ObjectDisposedException>(() => { bool has = final.HasValues; }, "a disposed hook");
    }
  }

  [Test]
  public static void AFinalStepThatThrowsFailsCloseWithItsException() {
    var error = new Boom("final ops failed");
    using (var final = new FinalOpsHook(ctx => { throw error; }))
    using (Session session = Session.Monitored(null, final)) {
      session.Run(Steps.Nothing);
      Check.True(ReferenceEquals(error, Check.Throws<Boom>(() => session.Close(), "close")), "the final step's own exception");
      Check.True(!final.HasValues, "no values");
    }
    Check.Throws<InvalidArgumentException>(() => new FinalOpsHook(null), "a null step");
    Check.Throws<InvalidArgumentException>(() => new FinalOpsHook(Steps.Nothing, (Tensor)null), "a null feed");
  }

  [Test]
  public static void GlobalStepWaiterHookPollsTheSharedStepUntilItIsReachedB42() {
    var reads = new List<long>();
    using (var options = new Options().SetDouble(Option.WaitPollSecs, 0.001))
    using (var waiter = new GlobalStepWaiterHook(10, options, session => {
      reads.Add(reads.Count * 5);
      return reads[reads.Count - 1];
    }))
    using (Session session = Session.Monitored(null, waiter)) {
      session.Run(Steps.Nothing);
      session.Run(Steps.Nothing);
      session.Close();
    }
    Check.Equal("0,5,10", string.Join(",", reads), "polled until the target, then never again");
  }

  [Test]
  public static void GlobalStepWaiterHookWaitIsBoundedAndItsFunctionsExceptionComesOut() {
    using (var options = new Options().SetDouble(Option.WaitPollSecs, 0.001).SetDouble(Option.WaitMaxSecs, 0.01))
    using (var waiter = new GlobalStepWaiterHook(100, options))
    using (Session session = Session.Monitored(null, waiter)) {
      Check.Contains("Global step did not reach 100",
                     Check.Throws<DeadlineExceededException>(() => session.Run(Steps.Nothing), "run").Message, "the message");
    }
    var error = new Boom("the parameter server is gone");
    using (var options = new Options().SetDouble(Option.WaitPollSecs, 0.001))
    using (var waiter = new GlobalStepWaiterHook(10, options, session => { throw error; }))
    using (Session session = Session.Monitored(null, waiter)) {
      Check.True(ReferenceEquals(error, Check.Throws<Boom>(() => session.Run(Steps.Nothing), "run")), "the function's own exception");
    }
  }

  [Test]
  public static void LoggingTensorHookFormatterWritesTheLineB9() {
    var lines = new List<string>();
    var seen = new List<string>();
    Log.SetSink((level, message) => { lock (lines) lines.Add(level + " " + message); });
    try {
      using (var options = new Options().SetInt64(Option.EveryNSteps, 1))
      using (var logging = new LoggingTensorHook(new[] { "loss", "acc" }, options, new[] { "z_loss", "a_acc" }, values => {
        seen.Add(string.Join(",", values.Select(v => v.Name)));
        return "custom " + values.First(v => v.Name == "z_loss").Item<float>();
      }))
      using (Session session = Session.Monitored(null, logging)) {
        session.Run(ctx => {
          ctx.Publish("loss", 1.5f);
          ctx.Publish("acc", 0.25f);
        });
        session.Close();
      }
    } finally {
      Log.SetSink(null);
    }
    Check.Equal("a_acc,z_loss", string.Join(" | ", seen), "the values by tag, sorted (TF's dict form, B7)");
    Check.True(lines.Contains("Info custom 1.5"), "the formatter's line at INFO, no elapsed time (B9): " + string.Join(" | ", lines));
  }

  [Test]
  public static void ALogFormatterThatThrowsFailsTheRunWithItsException() {
    var error = new Boom("cannot format");
    Tensor kept = null;
    using (var options = new Options().SetInt64(Option.EveryNSteps, 1))
    using (var logging = new LoggingTensorHook(new[] { "loss" }, options, null, values => {
      kept = values[0];
      throw error;
    }))
    using (Session session = Session.Monitored(null, logging)) {
      Check.True(ReferenceEquals(error, Check.Throws<Boom>(() => session.Run(Steps.Loss(1)), "run")), "the formatter's own exception");
    }
    Check.Throws<FailedPreconditionException>(() => kept.Item<float>(), "a value kept past the formatter call");
  }
}

}  // namespace TrainWatch.Tests
