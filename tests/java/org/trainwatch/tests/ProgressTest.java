package org.trainwatch.tests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.After;
import org.junit.Test;
import org.trainwatch.CheckpointSaverHook;
import org.trainwatch.LogSink;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.ProgressKind;
import org.trainwatch.ProgressReport;
import org.trainwatch.Saver;
import org.trainwatch.Session;
import org.trainwatch.Tensor;
import org.trainwatch.TensorVector;
import org.trainwatch.TrainWatch;
import org.trainwatch.TrainWatchException;

/** Progress of long saves and restores (C26) through TrainWatch.setProgressListener: each operation's
 *  reports reach the listener, on the thread doing the work, bytes never going back and the last one
 *  finished with every byte; null goes back to the log lines. everyNSecs = 0 reports after every chunk:
 *  nothing here depends on timing. */
public class ProgressTest {
  private static final int ELEMENTS = 3 << 18;  // 3 MiB of float32 per variable: several 4 MiB chunks in all

  private final List<ProgressReport> reports = Collections.synchronizedList(new ArrayList<>());

  @After
  public void defaultSink() {
    TrainWatch.setProgressListener(null);
    TrainWatch.setLogSink(null);
  }

  private static TensorVector variables(Tensor... tensors) {
    TensorVector v = new TensorVector();
    for (Tensor t : tensors) v.add(t);
    return v;
  }

  private static Tensor filled(String name, float scale) {
    float[] values = new float[ELEMENTS];
    for (int i = 0; i < ELEMENTS; i++) values[i] = i * scale;
    return Tensor.ofFloats(name, values, ELEMENTS);
  }

  private static final long BYTES = 3L * ELEMENTS * 4;

  private static void assertOneOperation(List<ProgressReport> reports, int kind, String path, long bytes) {
    String all = reports.toString();
    assertTrue(all, reports.size() >= 2);
    long done = 0;
    for (int i = 0; i < reports.size(); i++) {
      ProgressReport r = reports.get(i);
      assertEquals(all, kind, r.kind());
      assertEquals(all, path, r.path());
      assertEquals(all, bytes, r.bytesTotal());
      assertTrue(all, r.bytesDone() >= done);
      assertEquals(all, i == reports.size() - 1, r.finished());
      done = r.bytesDone();
    }
    assertEquals(all, bytes, done);
  }

  @Test
  public void saveAndRestoreReportToTheListenerC26() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-progress");
    Tensor a = filled("a", 1), b = filled("b", 2), c = filled("c", 3);
    TrainWatch.setProgressListener(reports::add, 0);
    try (Saver saver = new Saver(variables(a, b, c))) {
      String path = saver.save(dir.resolve("model.ckpt").toString(), 3);
      assertOneOperation(new ArrayList<>(reports), ProgressKind.SAVE, path, BYTES);
      reports.clear();
      float[] expected = c.toFloatArray();
      for (Tensor t : new Tensor[] {a, b, c}) t.asByteBuffer().asFloatBuffer().put(new float[ELEMENTS]);
      saver.restore(path);
      assertOneOperation(new ArrayList<>(reports), ProgressKind.RESTORE, path, BYTES);
      assertArrayEquals(expected, c.toFloatArray(), 0);
    }
  }

  /** A session's checkpoints in the background: the listener runs on the library's own thread, which
   *  the binding attaches to the JVM for the call. */
  @Test
  public void backgroundSavesReportFromTheirThreadC26() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-progress-async");
    List<String> threads = Collections.synchronizedList(new ArrayList<>());
    TrainWatch.setProgressListener(r -> {
      reports.add(r);
      threads.add(Thread.currentThread().getName());
    }, 0);
    Options options = new Options();
    options.addVariable(filled("w", 1));
    options.setString(Option.CHECKPOINT_DIR, dir.toString());
    options.setInt64(Option.ASYNC_CHECKPOINT, 1);
    options.setInt64(Option.EVERY_N_STEPS, 1);
    try (Session session = Session.monitored(options, new CheckpointSaverHook(dir.toString(), options))) {
      session.run(ctx -> ctx.publishCopy(Tensor.scalar("loss", 1)));
    }
    String test = Thread.currentThread().getName();
    List<ProgressReport> saves = new ArrayList<>(reports);
    assertTrue(saves.toString(), saves.stream().filter(ProgressReport::finished).count() >= 1);
    assertTrue(saves.toString(), saves.stream().allMatch(r -> r.kind() == ProgressKind.SAVE));
    assertTrue(threads.toString(), threads.stream().anyMatch(name -> !name.equals(test)));
  }

  @Test
  public void nullGoesBackToTheLogLinesC26() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-progress-log");
    List<String> lines = Collections.synchronizedList(new ArrayList<>());
    TrainWatch.setLogSink(new LogSink() {
      @Override
      public void write(int level, String message) {
        lines.add(message);
      }
    });
    TrainWatch.setProgressListener(reports::add, 0);
    TrainWatch.setProgressListener(null, 0);
    try (Saver saver = new Saver(variables(filled("a", 1), filled("b", 2), filled("c", 3)))) {
      String path = saver.save(dir.resolve("model.ckpt").toString(), 2);
      assertTrue(reports.toString(), reports.isEmpty());
      List<String> seen = new ArrayList<>(lines);
      assertTrue(seen.toString(), seen.stream().anyMatch(
          l -> l.startsWith("Saving checkpoint " + path + ": ") && l.contains(" MB/s, ") && l.endsWith(" s left")));
      assertEquals(seen.toString(), 1,
                   seen.stream().filter(l -> l.startsWith("Saved checkpoint " + path + ": 9.4 MB in ")).count());
    }
  }

  @Test
  public void aThrowingListenerDoesNotStopTheSaveC26() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-progress-throw");
    int[] calls = {0};
    TrainWatch.setProgressListener(r -> {
      synchronized (calls) {
        calls[0]++;
      }
      throw new IllegalStateException("a progress bar's bug");
    }, 0);
    Tensor a = filled("a", 1);
    try (Saver saver = new Saver(variables(a, filled("b", 2), filled("c", 3)))) {
      String path = saver.save(dir.resolve("model.ckpt").toString(), 1);
      TrainWatch.verifyCheckpoint(path);
      float[] expected = a.toFloatArray();
      a.asByteBuffer().asFloatBuffer().put(new float[ELEMENTS]);
      saver.restore(path);
      assertArrayEquals(expected, a.toFloatArray(), 0);
    }
    synchronized (calls) {
      assertTrue(calls[0] >= 4);  // two reports at least per operation, none stopped by the exception
    }
  }

  @Test
  public void badEveryNSecsIsRefusedC26() {
    TrainWatchException.InvalidArgument refused = assertThrows(TrainWatchException.InvalidArgument.class,
        () -> TrainWatch.setProgressListener(reports::add, -1));
    assertTrue(refused.getMessage(), refused.getMessage().contains("every_n_secs must be a finite number >= 0"));
    assertThrows(TrainWatchException.InvalidArgument.class, () -> TrainWatch.setProgressListener(null, Double.NaN));
  }
}
