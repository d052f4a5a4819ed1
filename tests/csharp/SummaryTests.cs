using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;

namespace TrainWatch.Tests {

/// <summary>TensorBoard event files (SummaryWriter, EventReader), SummarySaverHook (B35–B40) and ProfilerHook (B45–B47).</summary>
static class SummaryTests {
  /// <summary>Every event of every event file in `dir`, in file order.</summary>
  static List<Event> EventsIn(string dir) {
    return Directory.GetFiles(dir, "events.out.tfevents.*").OrderBy(p => p, StringComparer.Ordinal)
        .SelectMany(EventReader.ReadAll).ToList();
  }

  /// <summary>Runs `steps` monitored runs with `hooks`, each publishing loss = global_step / 2, then closes.</summary>
  static void Train(int steps, params Hook[] hooks) {
    using (Session session = Session.Monitored(null, hooks)) {
      for (int i = 0; i < steps; ++i) session.Run(ctx => ctx.Publish("loss", ctx.GlobalStep / 2f));
      session.Close();
    }
  }

  [Test]
  public static void AWriterWritesWhatAReaderReadsBack() {
    string dir = Scratch.Directory("events");
    string path;
    using (var writer = new SummaryWriter(dir)) {
      path = writer.Path;
      writer.AddScalar("loss", 3, 0.5);
      writer.AddHistogram("weights", 3, Tensor.FromArray("ignored", new float[] { 1, 2, 3 }));
      writer.Flush();
      Check.Throws<InvalidArgumentException>(() => writer.AddHistogram("bad", 4, Tensor.FromArray("x", new[] { float.NaN })),
                                             "a NaN in a histogram (TF's op error)");
      Check.Throws<InvalidArgumentException>(() => writer.AddHistogram("bad", 4, null), "a null tensor");
      writer.Close();
      Check.Throws<FailedPreconditionException>(() => writer.AddScalar("late", 5, 1), "adding after Close");
    }
    Check.Equal(dir, Path.GetDirectoryName(path), "the file is in logdir");
    IReadOnlyList<Event> events = EventReader.ReadAll(path);
    Check.Equal(3, events.Count, "file version, scalar, histogram");
    Check.Equal(EventKind.FileVersion, events[0].Kind, "the first event");
    Check.Equal("brain.Event:2", events[0].FileVersion, "TF's file version");
    Check.Equal(EventKind.Summary, events[1].Kind, "a summary");
    Check.Equal(3L, events[1].Step, "its step");
    Check.Equal(0.5, events[1].Scalars["loss"], "its scalar");
    Check.Equal("weights", string.Join(",", events[2].Tags), "the histogram's tag");
    Check.Equal(0, events[2].Scalars.Count, "a histogram is not a scalar");
    Check.True(events[1].WallTime > 1.5e9, "wall time in seconds since the epoch");
  }

  [Test]
  public static void AReaderReportsMissingAndCorruptFiles() {
    Check.Throws<NotFoundException>(() => new EventReader(Path.Combine(Scratch.Directory("no-events"), "none")), "no such file");
    string dir = Scratch.Directory("corrupt-events");
    string path;
    using (var writer = new SummaryWriter(dir)) {
      writer.AddScalar("loss", 1, 1);
      path = writer.Path;
    }
    SaverTests.Corrupt(path, new FileInfo(path).Length - 6);  // inside the last record
    using (var reader = new EventReader(path)) {
      Check.Equal(EventKind.FileVersion, reader.Next().Kind, "the intact first record");
      Check.Contains("events.out.tfevents", Check.Throws<DataLossException>(() => reader.Next(), "the corrupt one").Message,
                     "the message names the file");
    }
    var disposed = new EventReader(path);
    disposed.Dispose();
    Check.Throws<ObjectDisposedException>(() => disposed.Next(), "Next after Dispose");
  }

  [Test]
  public static void SummarySaverHookWritesStartAndScalarsOnItsStepsB38B39() {
    string dir = Scratch.Directory("summary-saver");
    using (var options = new Options().SetInt64(Option.EveryNSteps, 2).SetString(Option.OutputDir, dir))
    using (var hook = new SummarySaverHook(new[] { "loss" }, options)) {
      Train(5, hook);
    }
    List<Event> events = EventsIn(dir);
    Check.Equal("brain.Event:2", events[0].FileVersion, "an event file");
    Check.True(events.Any(e => e.SessionLogStatus == SessionLogStatus.Start), "SessionLog START on the first run (B39)");
    Check.Equal("1:0, 3:1, 5:2",
                string.Join(", ", events.Where(e => e.Scalars.ContainsKey("loss")).Select(e => e.Step + ":" + e.Scalars["loss"])),
                "summaries at the global step after the first run and every 2 steps (B38)");
  }

  [Test]
  public static void SummarySaverHookWritesToAGivenWriterAndNeedsOneB35() {
    string dir = Scratch.Directory("summary-writer");
    using (var writer = new SummaryWriter(dir))
    using (var options = new Options().SetInt64(Option.EveryNSteps, 1)) {
      using (var hook = new SummarySaverHook(null, options, writer)) Train(2, hook);  // null: every published value
      writer.Flush();
      Check.Equal("1, 2", string.Join(", ", EventReader.ReadAll(writer.Path).Where(e => e.Scalars.ContainsKey("loss")).Select(e => e.Step)),
                  "every run's loss, in the writer's file");
      Check.Contains("At least one of output_dir or summary_writer must be provided.",
                     Check.Throws<InvalidArgumentException>(() => new SummarySaverHook(new[] { "loss" }, options), "neither").Message,
                     "TF's text");
    }
  }

  [Test]
  public static void StepCounterHookWritesTheRateToItsWriterB28() {
    string dir = Scratch.Directory("step-counter");
    using (var writer = new SummaryWriter(dir)) {
      Log.SetLevel(LogLevel.Warning);
      try {
        using (var counter = new StepCounterHook(everyNSteps: 2, writer: writer)) Train(6, counter);
      } finally {
        Log.SetLevel(LogLevel.Info);
      }
      writer.Flush();
      Check.Equal("3, 5", string.Join(", ", EventReader.ReadAll(writer.Path).Where(e => e.Scalars.ContainsKey("global_step/sec"))
                                                .Select(e => e.Step)),
                  "the rate, one period after the clock started, at the step after the run");
    }
  }

  [Test]
  public static void ProfilerHookWritesChromeTracesButNeverOfTheFirstRunB45B47() {
    string dir = Scratch.Directory("profiler");
    var log = new List<string>();
    using (var profiler = new ProfilerHook(saveSteps: 2, outputDir: dir))
    using (var recorder = new Recorder("recorder", log)) {
      Train(5, profiler, recorder);
    }
    string[] timelines = Directory.GetFiles(dir, "timeline-*.json").Select(Path.GetFileName).OrderBy(n => n).ToArray();
    Check.True(timelines.Length > 0, "timelines were written");
    Check.True(!timelines.Contains("timeline-1.json"), "never the first run: " + string.Join(" ", timelines));
    string trace = File.ReadAllText(Path.Combine(dir, timelines[0]));
    Check.Contains("\"traceEvents\"", trace, "Chrome trace format");
    Check.Contains("\"step\"", trace, "the step's span");
    Check.Contains("recorder.before_run", trace, "a hook's span");
    Check.Throws<InvalidArgumentException>(() => new ProfilerHook(), "neither steps nor seconds");
  }
}

}  // namespace TrainWatch.Tests
