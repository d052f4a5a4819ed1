using System;
using System.Collections.Generic;
using System.Linq;

namespace TrainWatch.Tests {

/// <summary>The library's logging hooks, seen through a log sink.</summary>
static class BuiltinHookTests {
  /// <summary>Runs `body` with the library's INFO lines collected.</summary>
  internal static List<string> LinesOf(Action body) {
    var lines = new List<string>();
    Log.SetSink((level, message) => {
      lock (lines) lines.Add(level + " " + message);
    });
    try {
      body();
    } finally {
      Log.SetSink(null);
    }
    return lines;
  }

  [Test]
  public static void LoggingTensorHookLogsEveryNthRunFromTheFirstB8B9() {
    List<string> lines = LinesOf(() => {
      using (var options = new Options().SetInt64(Option.EveryNSteps, 2))
      using (var logging = new LoggingTensorHook(new[] { "loss" }, options))
      using (Session session = Session.Monitored(null, logging)) {
        for (int i = 0; i < 3; ++i) session.Run(Steps.Loss(1.5f));
        session.Close();
      }
    });
    List<string> logged = lines.Where(l => l.Contains("loss = ")).ToList();
    Check.Equal(2, logged.Count, "runs 0 and 2 log (B8): " + string.Join(" | ", lines));
    Check.True(logged.All(l => l.StartsWith("Info ") && l.Contains("loss = 1.5")), "INFO \"loss = 1.5\" (B9): " + logged[0]);
  }

  [Test]
  public static void LoggingTensorHookNeedsAPeriodOrAtEndB6() {
    using (var options = new Options()) {
      Check.Contains("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.",
                     Check.Throws<InvalidArgumentException>(() => new LoggingTensorHook(new[] { "loss" }, options), "no period").Message,
                     "TF's text");
    }
    Check.Throws<InvalidArgumentException>(() => new LoggingTensorHook(new[] { "a", "b" }, null, new[] { "t" }), "a tag per name");
  }

  [Test]
  public static void StepCounterHookLogsTheStepRateB26B28() {
    List<string> lines = LinesOf(() => {
      using (var counter = new StepCounterHook(everyNSteps: 1))
      using (Session session = Session.Monitored(null, counter)) {
        for (int i = 0; i < 3; ++i) session.Run(Steps.Nothing);
        session.Close();
      }
    });
    Check.True(lines.Any(l => l.StartsWith("Info global_step/sec: ")), "a rate line: " + string.Join(" | ", lines));
    Check.Contains("exactly one of every_n_steps and every_n_secs should be provided.",
                   Check.Throws<InvalidArgumentException>(() => new StepCounterHook(everyNSteps: null), "neither").Message, "B26");
    Check.Throws<InvalidArgumentException>(() => new StepCounterHook(10, 1.0), "both");
  }
}

}  // namespace TrainWatch.Tests
