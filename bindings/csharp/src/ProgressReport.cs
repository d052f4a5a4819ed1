namespace TrainWatch {

/// <summary>What a progress report is about (tw_progress_kind).</summary>
public enum ProgressKind {
  /// <summary>Writing one checkpoint file (a sharded checkpoint: each rank's part).</summary>
  Save = 1,
  /// <summary>Restoring variables from one checkpoint (single-file or sharded).</summary>
  Restore = 2,
}

/// <summary>
/// One report on a save or restore in progress (Checkpoints.SetProgressSink). The bytes are the
/// tensors' bytes as held in memory, not the compressed file's: BytesDone never goes back from one
/// report of an operation to the next, and its last report (Finished) has every byte.
/// </summary>
public sealed class ProgressReport {
  internal ProgressReport(ProgressKind kind, string path, long bytesDone, long bytesTotal, double elapsedSecs,
                          bool finished) {
    Kind = kind;
    Path = path;
    BytesDone = bytesDone;
    BytesTotal = bytesTotal;
    ElapsedSecs = elapsedSecs;
    Finished = finished;
  }

  public ProgressKind Kind { get; }
  /// <summary>The checkpoint file.</summary>
  public string Path { get; }
  public long BytesDone { get; }
  public long BytesTotal { get; }
  /// <summary>Seconds since the operation began.</summary>
  public double ElapsedSecs { get; }
  /// <summary>
  /// The operation's last report, made once it succeeded (a failed one is reported by its exception).
  /// </summary>
  public bool Finished { get; }

  public override string ToString() {
    return Kind + " " + Path + ": " + BytesDone + " of " + BytesTotal + " bytes, " + ElapsedSecs + " s" +
           (Finished ? ", finished" : "");
  }
}

}  // namespace TrainWatch
