package org.trainwatch;

/** Receives the progress of long saves and restores: {@code TrainWatch.setProgressListener(r -> …)}.
 *  It runs on the thread doing the work (a background save's, a compressing one), possibly on several
 *  at once, so it must be thread-safe and return quickly; what it throws is dropped, never reaching the
 *  save or restore it reports on. */
@FunctionalInterface
public interface ProgressListener {
  void onProgress(ProgressReport report);
}
