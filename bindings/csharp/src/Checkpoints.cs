using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;

namespace TrainWatch {

/// <summary>
/// Checkpoint files (tf.train.latest_checkpoint, list_variables, load_variable). Where a function takes
/// `checkpoint`, it is a checkpoint's path or a directory, meaning the newest checkpoint in it.
/// </summary>
public static class Checkpoints {
  static readonly object progressLock = new object();
  // Every progress sink set, referenced so that native code may call them: an operation keeps the sink
  // set when it began, so one replaced while a (background) save runs is still called.
  static readonly List<ProgressBridge> progressSinks = new List<ProgressBridge>();

  /// <summary>
  /// Sends the progress of this process's saves and restores (Saver, CheckpointSaverHook and session
  /// restores, background saves included) to `sink`: an operation is reported on once it has run
  /// `everyNSecs`, then every `everyNSecs`, and once when it succeeds (0: after every chunk). A null
  /// sink goes back to the default, Info lines of the library's log ("Saving checkpoint &lt;path&gt;:
  /// 512.0 of 1073.7 MB (48%), 250.3 MB/s, 2.2 s left"). The sink runs on the thread doing the work (a
  /// background save's, a compressing one), possibly on several at once: it must be thread-safe and
  /// return quickly; what it throws is dropped. InvalidArgumentException for a negative, NaN or infinite
  /// everyNSecs (nothing changes).
  /// </summary>
  public static void SetProgressSink(Action<ProgressReport> sink, double everyNSecs = 2.0) {
    lock (progressLock) {
      ProgressBridge bridge = sink == null ? null : new ProgressBridge(sink);
      Native.native.set_progress_sink(everyNSecs, bridge == null ? null : bridge.Sink());
      if (bridge != null) progressSinks.Add(bridge);
    }
  }

  sealed class ProgressBridge : Native.ManagedProgressSink {
    readonly Action<ProgressReport> sink;

    internal ProgressBridge(Action<ProgressReport> sink) { this.sink = sink; }

    public override void ManagedReport(int kind, string path, long bytesDone, long bytesTotal, double elapsedSecs,
                                       bool finished) {
      CallbackGuard.InvokeDropping(
          () => sink(new ProgressReport((ProgressKind)kind, path, bytesDone, bytesTotal, elapsedSecs, finished)));
    }
  }

  // "4.0 GiB", "12 bytes", as the Python package and trainwatch-ckpt write sizes.
  static string FormatBytes(double bytes) {
    string[] units = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    if (bytes < 1024) return ((long)bytes).ToString(CultureInfo.InvariantCulture) + " bytes";
    int unit = -1;
    while (bytes >= 1024 && unit < units.Length - 1) { bytes /= 1024; ++unit; }
    return bytes.ToString("0.0", CultureInfo.InvariantCulture) + " " + units[unit];
  }

  /// <summary>The newest checkpoint's path in `dir`, or null when there is none (TF's None).</summary>
  public static string Latest(string dir) {
    string path = Native.native.latest_checkpoint(dir ?? "");
    return path.Length == 0 ? null : path;
  }

  /// <summary>Throws DataLossException unless every checksum of the checkpoint matches.</summary>
  public static void Verify(string path) { Native.native.verify_checkpoint(path ?? ""); }

  /// <summary>The tensors of a checkpoint (names, dtypes, shapes; no data), in the checkpoint's order.</summary>
  public static IReadOnlyList<CheckpointVariable> ListVariables(string checkpoint) {
    return ListOf(PathOf(checkpoint));
  }

  /// <summary>
  /// Reads the tensor named destination.Name into destination's memory, which must be contiguous and of
  /// the tensor's dtype and shape; it is written only once every checksum matched.
  /// </summary>
  public static void LoadVariable(string checkpoint, Tensor destination) {
    string path = PathOf(checkpoint);
    Tensor.With(destination, "destination", d => Native.native.load_variable(path, d));
  }

  /// <summary>
  /// LoadVariable&lt;T&gt;'s limit on the bytes a tensor may declare when none is given (a file of a few
  /// kilobytes can declare gigabytes): the environment's TRAINWATCH_MAX_LOAD_BYTES, else 1 GiB
  /// (docs/tf-semantics.md C22).
  /// </summary>
  public static long DefaultMaxLoadBytes() {
    string text = System.Environment.GetEnvironmentVariable("TRAINWATCH_MAX_LOAD_BYTES");
    if (string.IsNullOrEmpty(text)) return 1L << 30;
    long bytes;
    if (!long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out bytes)) {
      throw new InvalidArgumentException("TRAINWATCH_MAX_LOAD_BYTES=" + text + " is not a number of bytes");
    }
    return bytes;
  }

  /// <summary>
  /// The tensor `name` of a checkpoint in a new array (row-major). T is its element type, or ushort for
  /// the bits of float16/bfloat16 and byte for bool and float8. A tensor declaring more than
  /// DefaultMaxLoadBytes() throws ResourceExhaustedException before anything is allocated.
  /// </summary>
  public static T[] LoadVariable<T>(string checkpoint, string name) where T : struct {
    return LoadVariable<T>(checkpoint, name, DefaultMaxLoadBytes());
  }

  /// <summary>LoadVariable&lt;T&gt; refusing a tensor that declares more than maxBytes bytes.</summary>
  public static T[] LoadVariable<T>(string checkpoint, string name, long maxBytes) where T : struct {
    string path = PathOf(checkpoint);
    foreach (CheckpointVariable variable in ListOf(path)) {
      if (variable.Name != name) continue;
      double declared = (double)variable.ElementCount * variable.DType.Size();
      if (declared > maxBytes) {
        throw new ResourceExhaustedException("tensor '" + name + "' of checkpoint " + path + " declares " +
                                             FormatBytes(declared) + ", over the " + FormatBytes(maxBytes) +
                                             " limit of load_variable: pass maxBytes (TRAINWATCH_MAX_LOAD_BYTES) to raise it");
      }
      if (variable.ElementCount > int.MaxValue) {
        throw new InvalidArgumentException("tensor '" + name + "' is too large for an array");
      }
      var values = new T[variable.ElementCount];
      LoadVariable(path, Tensor.FromArrayAs(name, values, variable.DType, variable.Shape));
      return values;
    }
    throw new NotFoundException("Key " + name + " not found in checkpoint " + path);
  }

  static IReadOnlyList<CheckpointVariable> ListOf(string path) {
    var variables = new List<CheckpointVariable>();
    using (Native.TensorVector tensors = Native.native.list_variables(path)) {
      foreach (Native.Tensor t in tensors) {
        using (Native.Int64Vector shape = t.Shape()) {
          var extents = new long[shape.Count];
          shape.CopyTo(extents);
          variables.Add(new CheckpointVariable(t.Name(), (DType)t.Dtype(), extents));
        }
      }
    }
    return variables.AsReadOnly();
  }

  // A directory means its newest checkpoint (TF's ckpt_dir_or_file).
  static string PathOf(string checkpoint) {
    if (checkpoint == null) throw new InvalidArgumentException("checkpoint is null");
    if (!Directory.Exists(checkpoint)) return checkpoint;
    string latest = Latest(checkpoint);
    if (latest == null) throw new NotFoundException("Unable to find a checkpoint in " + checkpoint);
    return latest;
  }
}

}  // namespace TrainWatch
