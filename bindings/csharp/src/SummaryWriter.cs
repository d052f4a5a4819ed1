using System;

namespace TrainWatch {

/// <summary>
/// Writes TensorBoard events to "&lt;logdir&gt;/events.out.tfevents.…" (TF's FileWriter). Writers are
/// shared per directory, like TF's FileWriterCache: hooks writing to the same directory append to the
/// same file. Events are buffered; Flush writes them, Close (or disposing the last handle) closes the
/// shared file. Usable from several threads at once.
/// </summary>
public sealed class SummaryWriter : IDisposable {
  readonly Native.SummaryWriter native;
  bool disposed;

  /// <summary>Opens the writer of `logdir`, creating the directory if needed.</summary>
  public SummaryWriter(string logdir) { native = new Native.SummaryWriter(logdir ?? ""); }

  internal Native.SummaryWriter Checked {
    get {
      if (disposed) throw new ObjectDisposedException("SummaryWriter");
      return native;
    }
  }

  /// <summary>The event file's absolute path.</summary>
  public string Path { get { return Checked.Path(); } }

  /// <summary>Adds a scalar summary (stored as a float, as TF does) at `step`.</summary>
  public void AddScalar(string tag, long step, double value) { Checked.AddScalar(tag ?? "", step, value); }

  /// <summary>Adds the histogram of every element of `values` (TF's bucket edges); a NaN or Inf element is InvalidArgumentException.</summary>
  public void AddHistogram(string tag, long step, Tensor values) {
    Native.SummaryWriter writer = Checked;
    Tensor.With(values, "values", v => writer.AddHistogram(tag ?? "", step, v));
  }

  /// <summary>Writes the buffered events and syncs the file.</summary>
  public void Flush() { Checked.Flush(); }

  /// <summary>Flushes and closes the shared file for every handle on it (TF's FileWriter.close); later adds fail.</summary>
  public void Close() { Checked.Close(); }

  /// <summary>Releases this handle; the last handle on a file flushes and closes it. Safe to call twice.</summary>
  public void Dispose() {
    if (disposed) return;
    disposed = true;
    native.Dispose();
  }
}

}  // namespace TrainWatch
