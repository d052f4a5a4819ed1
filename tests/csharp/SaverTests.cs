using System;
using System.IO;
using System.Linq;

namespace TrainWatch.Tests {

/// <summary>Saver and the checkpoint functions from C# (C1, C3, C4, C9, C12; list_variables, load_variable).</summary>
static class SaverTests {
  /// <summary>Flips one bit of byte `offset` of `path`: the checksums no longer match.</summary>
  public static void Corrupt(string path, long offset = 20) {
    using (var file = new FileStream(path, FileMode.Open, FileAccess.ReadWrite)) {
      file.Seek(offset, SeekOrigin.Begin);
      int b = file.ReadByte();
      file.Seek(offset, SeekOrigin.Begin);
      file.WriteByte((byte)(b ^ 0x10));
    }
  }

  [Test]
  public static void SaveNamesFilesAndKeepsMaxToKeepC1C9() {
    string dir = Scratch.Directory("saver");
    var w = new float[3];
    using (var saver = new Saver(Tensor.FromArray("w", w)) { MaxToKeep = 2 }) {
      string prefix = Path.Combine(dir, "model.ckpt");
      string[] paths = new[] { 1L, 2L, 3L }.Select(step => saver.Save(prefix, step)).ToArray();
      Check.Lines(new[] { prefix + "-1", prefix + "-2", prefix + "-3" }, paths, "<prefix>-<step> (C1)");
      Check.Lines(paths.Skip(1).ToList(), saver.LastCheckpoints.ToList(), "the two newest are kept (C9)");
      Check.True(!File.Exists(paths[0]), "the oldest was deleted");
      Check.Equal(paths[2], Checkpoints.Latest(dir), "latest_checkpoint");
      saver.PadStepNumber = true;
      Check.Equal(prefix + "-00000042", saver.Save(prefix, 42), "pad_step_number (C1)");
      Check.Equal(prefix, saver.Save(prefix), "without a step the prefix is the path");
    }
    using (var defaults = new Saver(Tensor.FromArray("w", w))) {
      string prefix = Path.Combine(Scratch.Directory("saver-defaults"), "model.ckpt");
      for (long step = 1; step <= 7; ++step) defaults.Save(prefix, step);
      Check.Equal(5, defaults.LastCheckpoints.Count, "TF's default max_to_keep is 5 (C3)");
      Check.Equal(5L, defaults.MaxToKeep, "MaxToKeep says so");
    }
    using (var empty = new Saver()) Check.Equal(null, empty.Save(Path.Combine(dir, "nothing")), "an empty saver saves nothing (C4)");
  }

  [Test]
  public static void RestoreWritesTheCallersArraysInPlace() {
    string dir = Scratch.Directory("saver-restore");
    var w = new float[] { 1, 2, 3 };
    var step = new long[] { 7 };
    using (var saver = new Saver(Tensor.FromArray("w", w), Tensor.FromArray("step", step, new long[0]))) {
      string path = saver.Save(Path.Combine(dir, "m"), 7);
      Array.Clear(w, 0, 3);
      step[0] = 0;
      saver.Restore(path);
      Check.Equal("1,2,3", string.Join(",", w), "w restored in place");
      Check.Equal(7L, step[0], "step restored in place");
      w[0] = 9;
      step[0] = 9;
      saver.RestoreVariables(path, "step");
      Check.Equal(7L, step[0], "the named variable is restored");
      Check.Equal(9f, w[0], "the others are not touched");
      Check.Throws<NotFoundException>(() => saver.RestoreVariables(path, "nope"), "a name the saver does not have");
      Check.Throws<NotFoundException>(() => saver.Restore(Path.Combine(dir, "nothing-here")), "no such checkpoint");
      using (var other = new Saver(Tensor.FromArray("w", new float[4])))
        Check.Throws<InvalidArgumentException>(() => other.Restore(path), "a shape that does not match");
    }
  }

  [Test]
  public static void RestoreNewestGoodSkipsACorruptCheckpoint() {
    string dir = Scratch.Directory("saver-newest-good");
    var w = new float[1];
    using (var saver = new Saver(Tensor.FromArray("w", w))) {
      string prefix = Path.Combine(dir, "model.ckpt");
      foreach (long step in new[] { 1L, 2L, 3L }) {
        w[0] = step;
        saver.Save(prefix, step);
      }
      Corrupt(prefix + "-3");
      Check.Throws<DataLossException>(() => Checkpoints.Verify(prefix + "-3"), "the corruption is detected");
      w[0] = 99;
      Log.SetLevel(LogLevel.Error);
      try {
        Check.Equal(prefix + "-2", saver.RestoreNewestGood(dir), "the newest intact checkpoint");
      } finally {
        Log.SetLevel(LogLevel.Info);
      }
      Check.Equal(2f, w[0], "its values");
      Check.Throws<NotFoundException>(() => saver.RestoreNewestGood(Scratch.Directory("no-state")), "no state file");
    }
  }

  [Test]
  public static void RecoverLastCheckpointsReseedsTheKeptListC12() {
    string dir = Scratch.Directory("saver-recover");
    string prefix = Path.Combine(dir, "model.ckpt");
    var w = new float[1];
    using (var first = new Saver(Tensor.FromArray("w", w))) {
      foreach (long step in new[] { 1L, 2L, 3L }) first.Save(prefix, step);
    }
    using (var second = new Saver(Tensor.FromArray("w", w)) { MaxToKeep = 2 }) {
      Check.Equal(0, second.LastCheckpoints.Count, "a new saver keeps nothing yet");
      second.RecoverLastCheckpoints(dir);
      Check.Lines(new[] { prefix + "-2", prefix + "-3" }, second.LastCheckpoints.ToList(), "re-seeded and trimmed to max_to_keep");
      second.Save(prefix, 4);
      Check.Lines(new[] { prefix + "-3", prefix + "-4" }, second.LastCheckpoints.ToList(), "the next save evicts the oldest");
      Check.True(!File.Exists(prefix + "-2"), "and deletes it");
    }
  }

  [Test]
  public static void ListAndLoadVariablesOfAFileOrADirectory() {
    string dir = Scratch.Directory("saver-list");
    var a = new double[] { 0, 1, 2, 3, 4, 5 };
    var b = new int[] { 7, 8 };
    string path;
    using (var saver = new Saver(Tensor.FromArray("a", a, 2, 3), Tensor.FromArray("b", b))) path = saver.Save(Path.Combine(dir, "m"), 1);
    var listed = Checkpoints.ListVariables(dir);
    Check.Equal("a: float64[2,3] | b: int32[2]", string.Join(" | ", listed), "names, dtypes and shapes (a directory: its newest)");
    Check.Equal(6L, listed[0].ElementCount, "element count");
    Check.Equal("0,1,2,3,4,5", string.Join(",", Checkpoints.LoadVariable<double>(path, "a")), "load_variable into a new array");
    var into = new int[2];
    Checkpoints.LoadVariable(dir, Tensor.FromArray("b", into));
    Check.Equal("7,8", string.Join(",", into), "load_variable into the caller's array");
    Check.Contains("Key nope not found", Check.Throws<NotFoundException>(() => Checkpoints.LoadVariable<double>(path, "nope"), "unknown").Message,
                   "TF's text");
    Check.Throws<InvalidArgumentException>(() => Checkpoints.LoadVariable<float>(path, "a"), "float32 for a float64 tensor");
    // C22: a tensor over the limit is refused before the array is allocated; a larger limit lets it through.
    Check.Contains("tensor 'a' of checkpoint " + path + " declares 48 bytes, over the 40 bytes limit of load_variable",
                   Check.Throws<ResourceExhaustedException>(() => Checkpoints.LoadVariable<double>(path, "a", 40), "over maxBytes").Message,
                   "names the tensor, the sizes and the limit");
    Check.Equal("0,1,2,3,4,5", string.Join(",", Checkpoints.LoadVariable<double>(path, "a", 48)), "within maxBytes");
    Check.Equal(1L << 30, Checkpoints.DefaultMaxLoadBytes(), "1 GiB by default");
    Check.Throws<InvalidArgumentException>(() => Checkpoints.LoadVariable(path, Tensor.FromArray("b", new int[3])), "a wrong shape");
    Check.Throws<NotFoundException>(() => Checkpoints.ListVariables(Scratch.Directory("no-checkpoint")), "a directory without one");
    Corrupt(path, 40);
    Check.Throws<DataLossException>(() => { Checkpoints.LoadVariable<double>(path, "a"); Checkpoints.LoadVariable<int>(path, "b"); },
                                    "a corrupt checkpoint");
  }

  [Test]
  public static void BadSaverInputIsAnExceptionNeverACrash() {
    Check.Throws<InvalidArgumentException>(() => new Saver(Tensor.FromArray("w", new float[1]), Tensor.FromArray("w", new float[1])),
                                           "two variables of one name");
    Check.Throws<InvalidArgumentException>(() => new Saver((Tensor)null), "a null variable");
    Check.Throws<InvalidArgumentException>(() => new Saver(Tensor.FromArray("w", new float[1])) { MaxToKeep = -1 }, "a negative max_to_keep");
    var saver = new Saver(Tensor.FromArray("w", new float[1]));
    Check.Throws<NotFoundException>(() => saver.Save(Path.Combine(Scratch.Directory("x"), "missing", "m")), "a missing parent directory (C4)");
    saver.Dispose();
    saver.Dispose();
    Check.Throws<ObjectDisposedException>(() => saver.Save("m"), "Save after Dispose");
  }

  /// <summary>C25: Dispose (a using block) releases the directory at once: a second saver of it saves.</summary>
  [Test]
  public static void ADisposedSaverReleasesItsDirectoryC25() {
    string prefix = Path.Combine(Scratch.Directory("saver-dispose"), "model.ckpt");
    var w = new float[] { 1, 2 };
    var first = new Saver(Tensor.FromArray("w", w));
    first.Save(prefix, 1);
    using (var second = new Saver(Tensor.FromArray("w", w))) {
      var inUse = Check.Throws<FailedPreconditionException>(() => second.Save(prefix, 2), "the directory is held");
      Check.Contains("is in use: a Saver of this process", inUse.Message, "the holder is named (C24)");
      first.Dispose();
      Check.Equal(prefix + "-2", second.Save(prefix, 2), "saved once the first is disposed");
    }
    Check.Throws<ObjectDisposedException>(() => first.Restore(prefix + "-2"), "Restore after Dispose");
    using (var again = new Saver(Tensor.FromArray("w", w))) Check.Equal(prefix + "-3", again.Save(prefix, 3), "a third saver after the using block");
  }

  /// <summary>C24: a session that only restores (no CheckpointSaverHook) takes no lock: the program's own
  /// saver saves into its directory while it runs.</summary>
  [Test]
  public static void ASessionThatOnlyRestoresLeavesTheDirectoryToTheProgramC24() {
    string dir = Scratch.Directory("restore-only");
    string prefix = Path.Combine(dir, "model.ckpt");
    var w = new float[] { 4, 4 };
    using (var saver = new Saver(Tensor.FromArray("w", w))) saver.Save(prefix, 5);
    var restored = new float[2];
    using (var options = new Options().AddVariable(Tensor.FromArray("w", restored)).SetString(Option.CheckpointDir, dir))
    using (Session session = Session.Monitored(options))
    using (var saver = new Saver(Tensor.FromArray("w", restored))) {
      Check.Equal(5L, session.GlobalStep, "restored, the step from the saver's file name");
      Check.Equal("4,4", string.Join(",", restored), "w restored");
      session.Run(ctx => { restored[0] += 1; });
      Check.Equal(prefix + "-6", saver.Save(prefix, session.GlobalStep), "the program's saver saves beside the session");
    }
    Check.Equal(prefix + "-6", Checkpoints.Latest(dir), "latest_checkpoint");
  }

  /// <summary>C27: TF's scaffold.saver.save inside a session: the session's own saver saves on request
  /// into the directory its CheckpointSaverHook holds and keeps the state file; elsewhere is refused.</summary>
  [Test]
  public static void ASessionSavesOnRequestBesideItsSaverHookC27() {
    string dir = Scratch.Directory("save-request");
    string prefix = Path.Combine(dir, "model.ckpt");
    var w = new float[] { 0, 0 };
    using (var options = new Options().AddVariable(Tensor.FromArray("w", w)).SetString(Option.CheckpointDir, dir)
               .SetBool(Option.AsyncCheckpoint, false).SetInt64(Option.EveryNSteps, 1000))
    using (var hook = new CheckpointSaverHook(dir, options))
    using (Session session = Session.Monitored(options, hook)) {
      for (int i = 0; i < 3; ++i) session.Run(ctx => { w[0] += 1; w[1] += 2; });
      Check.Equal(prefix + "-3", session.SaveCheckpoint(prefix, session.GlobalStep), "<prefix>-<step>");
      Check.Equal(prefix + "-3", Checkpoints.Latest(dir), "the state file names it");
      using (var own = new Saver(Tensor.FromArray("w", w)))
        Check.Throws<FailedPreconditionException>(() => own.Save(prefix, 4), "the session holds the directory");
      string elsewhere = Path.Combine(Scratch.Directory("save-request-elsewhere"), "model.ckpt");
      Check.Throws<InvalidArgumentException>(() => session.SaveCheckpoint(elsewhere, 3), "a prefix outside its directory");
    }
    Check.Equal("3,6", string.Join(",", Checkpoints.LoadVariable<float>(prefix + "-3", "w")), "the values at the save");
  }
}

}  // namespace TrainWatch.Tests
