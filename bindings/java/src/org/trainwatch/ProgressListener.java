package org.trainwatch;

/** Receives the progress of long saves and restores: {@code TrainWatch.setProgressListener(r -> …)}.
 *  It runs on the thread doing the work (a background save's, a compressing one), possibly on several
 *  at once, so it must be thread-safe and return quickly; what it throws is dropped, never reaching the
 *  save or restore it reports on. */
@FunctionalInterface
public interface ProgressListener {
  void onProgress(ProgressReport report);

  /** The ProgressSink (a SWIG director) that calls {@code listener}. */
  static ProgressSink sink(ProgressListener listener) {
    return new ProgressSink() {
      @Override
      public void report(int kind, String path, long bytesDone, long bytesTotal, double elapsedSecs,
                         boolean finished) {
        try {
          listener.onProgress(new ProgressReport(kind, path, bytesDone, bytesTotal, elapsedSecs, finished));
        } catch (Throwable dropped) {
          // Dropped here rather than by the facade: on a library thread attached for this call only,
          // the global reference a Throwable crossing into C++ takes could not be released once the
          // thread is detached again.
        }
      }
    };
  }
}
