package org.trainwatch;

/** One report on a save or restore in progress (tw_progress_fn's arguments). The bytes are the
 *  tensors' bytes as held in memory, not the compressed file's: bytesDone never goes back from one
 *  report of an operation to the next, and the last report ({@code finished()}) has every byte. */
public final class ProgressReport {
  private final int kind;
  private final String path;
  private final long bytesDone;
  private final long bytesTotal;
  private final double elapsedSecs;
  private final boolean finished;

  ProgressReport(int kind, String path, long bytesDone, long bytesTotal, double elapsedSecs, boolean finished) {
    this.kind = kind;
    this.path = path;
    this.bytesDone = bytesDone;
    this.bytesTotal = bytesTotal;
    this.elapsedSecs = elapsedSecs;
    this.finished = finished;
  }

  /** ProgressKind.SAVE (one checkpoint file written; a sharded checkpoint: each rank's part) or
   *  ProgressKind.RESTORE (variables restored from one checkpoint). */
  public int kind() {
    return kind;
  }

  /** The checkpoint file. */
  public String path() {
    return path;
  }

  public long bytesDone() {
    return bytesDone;
  }

  public long bytesTotal() {
    return bytesTotal;
  }

  /** Seconds since the operation began. */
  public double elapsedSecs() {
    return elapsedSecs;
  }

  /** The operation's last report, made once it succeeded (a failed one is reported by its exception). */
  public boolean finished() {
    return finished;
  }

  @Override
  public String toString() {
    return (kind == ProgressKind.SAVE ? "save " : "restore ") + path + ": " + bytesDone + " of " + bytesTotal
        + " bytes, " + elapsedSecs + " s" + (finished ? ", finished" : "");
  }
}
