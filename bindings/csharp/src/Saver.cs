using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// tf.train.Saver over your variables (C1–C12): Save writes "&lt;prefix&gt;-&lt;step&gt;" and the state
/// file "checkpoint" beside it, keeping the newest MaxToKeep checkpoints (and one every
/// KeepCheckpointEveryNHours hours); Restore writes the checkpoint's values into the variables' own
/// memory, all or nothing. The variables (their arrays pinned) are kept while the saver lives; they
/// must not change during a Save. From its first Save into a directory the saver holds that directory's
/// lock (another saver or a saving session there gets FailedPreconditionException naming the holder);
/// Dispose — the end of a using block — releases it at once, with the native saver (C25), and a saver
/// never disposed releases it when finalized. A disposed saver throws ObjectDisposedException.
/// </summary>
public sealed class Saver : IDisposable {
  readonly Native.Saver native;
  readonly Tensor[] variables;  // read and written by the native saver while it lives
  long maxToKeep = 5;
  double keepCheckpointEveryNHours = 10000.0;
  bool padStepNumber;
  bool disposed;

  /// <summary>A saver of `variables` (TF's var_list): each needs a unique, non-empty name.</summary>
  public Saver(params Tensor[] variables) : this((IEnumerable<Tensor>)variables) {}

  public Saver(IEnumerable<Tensor> variables) {
    if (variables == null) throw new InvalidArgumentException("variables is null");
    this.variables = new List<Tensor>(variables).ToArray();
    using (Native.TensorVector views = Tensor.Views(this.variables)) native = new Native.Saver(views);
  }

  /// <summary>How many recent checkpoints to keep (default 5; 0 keeps every one and lists only the newest, C9).</summary>
  public long MaxToKeep {
    get { return maxToKeep; }
    set {
      Use(s => s.SetMaxToKeep(value));
      maxToKeep = value;
    }
  }

  /// <summary>A checkpoint leaving the kept list is kept forever when it is this much newer than the last one kept (default 10000: never, C10).</summary>
  public double KeepCheckpointEveryNHours {
    get { return keepCheckpointEveryNHours; }
    set {
      Use(s => s.SetKeepCheckpointEveryNHours(value));
      keepCheckpointEveryNHours = value;
    }
  }

  /// <summary>Names checkpoints "&lt;prefix&gt;-%08d" (TF's pad_step_number, C1).</summary>
  public bool PadStepNumber {
    get { return padStepNumber; }
    set {
      Use(s => s.SetPadStepNumber(value));
      padStepNumber = value;
    }
  }

  /// <summary>
  /// Saves the variables to "&lt;prefix&gt;-&lt;globalStep&gt;" (`prefix` itself without a step) and
  /// returns its path; null for a saver without variables (nothing is written, TF's None).
  /// </summary>
  public string Save(string prefix, long? globalStep = null) {
    string path = Use(s => s.Save(prefix ?? "", globalStep ?? Native.native.UNSET));
    return path.Length == 0 ? null : path;
  }

  /// <summary>Restores every variable from the checkpoint at `path`, in place; nothing is written unless all match.</summary>
  public void Restore(string path) { Use(s => s.Restore(path ?? "")); }

  /// <summary>Restores only the variables named (NotFoundException for a name that is not one of this saver's).</summary>
  public void RestoreVariables(string path, params string[] names) {
    if (names == null) throw new InvalidArgumentException("names is null");
    using (var nativeNames = new Native.StringVector(names)) Use(s => s.RestoreVariables(path ?? "", nativeNames));
  }

  /// <summary>Restores the newest intact checkpoint listed in `dir` (skipping corrupt ones with a WARNING); returns its path.</summary>
  public string RestoreNewestGood(string dir) { return Use(s => s.RestoreNewestGood(dir ?? "")); }

  /// <summary>Re-seeds the kept list (and the keep-every-N-hours clock) from `dir`'s state file (C12).</summary>
  public void RecoverLastCheckpoints(string dir) { Use(s => s.RecoverLastCheckpoints(dir ?? "")); }

  /// <summary>The checkpoints kept, oldest first (TF's last_checkpoints).</summary>
  public IReadOnlyList<string> LastCheckpoints {
    get {
      using (Native.StringVector paths = Use(s => s.LastCheckpoints())) return new List<string>(paths).AsReadOnly();
    }
  }

  /// <summary>Releases the native saver and the lock of the directory it saves into, at once (the checkpoint files and variables are not touched). Safe to call twice.</summary>
  public void Dispose() {
    if (disposed) return;
    disposed = true;
    native.Dispose();
    GC.KeepAlive(variables);
  }

  T Use<T>(Func<Native.Saver, T> call) {
    if (disposed) throw new ObjectDisposedException("Saver");
    try {
      return call(native);
    } finally {
      GC.KeepAlive(variables);  // the arrays stay pinned while the library reads or writes them
    }
  }

  void Use(Action<Native.Saver> call) {
    Use(s => {
      call(s);
      return true;
    });
  }
}

}  // namespace TrainWatch
