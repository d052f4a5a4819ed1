using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;

namespace TrainWatch.Tests {

/// <summary>
/// Progress of long saves and restores (C26) through Checkpoints.SetProgressSink: each operation's
/// reports reach the delegate, on the thread doing the work, bytes never going back and the last one
/// finished with every byte; null goes back to the log lines. everyNSecs = 0 reports after every
/// chunk: nothing here depends on timing.
/// </summary>
static class ProgressTests {
  const int Elements = 3 << 18;  // 3 MiB of float32 per variable: several 4 MiB chunks in all
  const long Bytes = 3L * Elements * 4;

  static float[] Filled(float scale) {
    var values = new float[Elements];
    for (int i = 0; i < Elements; ++i) values[i] = i * scale;
    return values;
  }

  /// <summary>Runs `body` with `sink` set (every chunk), then goes back to the default sink.</summary>
  static void WithSink(Action<ProgressReport> sink, Action body) {
    Checkpoints.SetProgressSink(sink, 0);
    try {
      body();
    } finally {
      Checkpoints.SetProgressSink(null);
    }
  }

  static void OneOperation(List<ProgressReport> reports, ProgressKind kind, string path, long bytes) {
    string all = string.Join(" | ", reports);
    Check.True(reports.Count >= 2, "two reports at least: " + all);
    long done = 0;
    for (int i = 0; i < reports.Count; ++i) {
      ProgressReport r = reports[i];
      Check.Equal(kind, r.Kind, "kind: " + all);
      Check.Equal(path, r.Path, "path: " + all);
      Check.Equal(bytes, r.BytesTotal, "bytes in all: " + all);
      Check.True(r.BytesDone >= done, "bytes done never go back: " + all);
      Check.Equal(i == reports.Count - 1, r.Finished, "only the last report is finished: " + all);
      done = r.BytesDone;
    }
    Check.Equal(bytes, done, "the last report has every byte: " + all);
  }

  [Test]
  public static void SaveAndRestoreReportToTheSinkC26() {
    string dir = Scratch.Directory("progress");
    var reports = new List<ProgressReport>();
    float[] a = Filled(1), b = Filled(2), c = Filled(3);
    WithSink(r => { lock (reports) reports.Add(r); }, () => {
      using (var saver = new Saver(Tensor.FromArray("a", a), Tensor.FromArray("b", b), Tensor.FromArray("c", c))) {
        string path = saver.Save(Path.Combine(dir, "model.ckpt"), 3);
        lock (reports) {
          OneOperation(reports.ToList(), ProgressKind.Save, path, Bytes);
          reports.Clear();
        }
        Array.Clear(c, 0, Elements);
        saver.Restore(path);
        lock (reports) OneOperation(reports.ToList(), ProgressKind.Restore, path, Bytes);
        Check.Equal(3f * (Elements - 1), c[Elements - 1], "restored in place");
      }
    });
  }

  /// <summary>A session's checkpoints in the background: the delegate runs on the library's own thread.</summary>
  [Test]
  public static void BackgroundSavesReportFromTheirThreadC26() {
    string dir = Scratch.Directory("progress-async");
    var reports = new List<ProgressReport>();
    var threads = new List<int>();
    WithSink(r => {
      lock (reports) {
        reports.Add(r);
        threads.Add(Thread.CurrentThread.ManagedThreadId);
      }
    }, () => {
      using (var options = new Options().AddVariable(Tensor.FromArray("w", Filled(1)))
                 .SetString(Option.CheckpointDir, dir).SetBool(Option.AsyncCheckpoint, true)
                 .SetInt64(Option.EveryNSteps, 1))
      using (var saver = new CheckpointSaverHook(dir, options))
      using (Session session = Session.Monitored(options, saver)) {
        session.Run(ctx => { });
        session.Close();
      }
    });
    lock (reports) {
      string all = string.Join(" | ", reports);
      Check.True(reports.Any(r => r.Finished), "a save finished: " + all);
      Check.True(reports.All(r => r.Kind == ProgressKind.Save), "saves only: " + all);
      Check.True(threads.Any(id => id != Thread.CurrentThread.ManagedThreadId), "reported from the saving thread");
    }
  }

  [Test]
  public static void NullGoesBackToTheLogLinesC26() {
    string dir = Scratch.Directory("progress-log");
    var reports = new List<ProgressReport>();
    string path = null;
    List<string> lines = BuiltinHookTests.LinesOf(() => {
      Checkpoints.SetProgressSink(r => { lock (reports) reports.Add(r); }, 0);
      Checkpoints.SetProgressSink(null, 0);
      try {
        using (var saver = new Saver(Tensor.FromArray("a", Filled(1)), Tensor.FromArray("b", Filled(2)),
                                     Tensor.FromArray("c", Filled(3)))) {
          path = saver.Save(Path.Combine(dir, "model.ckpt"), 2);
        }
      } finally {
        Checkpoints.SetProgressSink(null);
      }
    });
    lock (reports) Check.Equal(0, reports.Count, "the replaced sink hears nothing");
    string all = string.Join(" | ", lines);
    Check.True(lines.Any(l => l.StartsWith("Info Saving checkpoint " + path + ": ") && l.Contains(" MB/s, ") &&
                              l.EndsWith(" s left")), "a progress line: " + all);
    Check.Equal(1, lines.Count(l => l.StartsWith("Info Saved checkpoint " + path + ": 9.4 MB in ")),
                "the last line: " + all);
  }

  [Test]
  public static void ASinkThatThrowsDoesNotStopTheSaveC26() {
    string dir = Scratch.Directory("progress-throw");
    int calls = 0;
    float[] a = Filled(1);
    WithSink(r => {
      Interlocked.Increment(ref calls);
      throw new InvalidOperationException("a progress bar's bug");
    }, () => {
      using (var saver = new Saver(Tensor.FromArray("a", a), Tensor.FromArray("b", Filled(2)),
                                   Tensor.FromArray("c", Filled(3)))) {
        string path = saver.Save(Path.Combine(dir, "model.ckpt"), 1);
        Checkpoints.Verify(path);
        Array.Clear(a, 0, Elements);
        saver.Restore(path);
        Check.Equal(Elements - 1f, a[Elements - 1], "restored in place");
      }
    });
    Check.True(Volatile.Read(ref calls) >= 4, "two reports at least per operation, none stopped by the exception");
  }

  [Test]
  public static void BadEveryNSecsIsRefusedC26() {
    var refused = Check.Throws<InvalidArgumentException>(() => Checkpoints.SetProgressSink(r => { }, -1), "-1");
    Check.Contains("every_n_secs must be a finite number >= 0", refused.Message, "the message names the argument");
    Check.Throws<InvalidArgumentException>(() => Checkpoints.SetProgressSink(null, double.NaN), "NaN");
  }
}

}  // namespace TrainWatch.Tests
