package org.trainwatch.tests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import org.trainwatch.CheckpointSaverHook;
import org.trainwatch.CheckpointSaverListener;
import org.trainwatch.DType;
import org.trainwatch.Option;
import org.trainwatch.Saver;
import org.trainwatch.Session;
import org.trainwatch.SessionRef;
import org.trainwatch.StopAtStepHook;
import org.trainwatch.Tensor;
import org.trainwatch.TensorVector;
import org.trainwatch.TrainWatch;
import org.trainwatch.TrainWatchException;

/** Checkpoints from Java: Saver round trip (C1–C4), listeners (B21–B23), corruption detected. */
public class CheckpointTest {
  @Test
  public void saverRoundTripAndInspection() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-ckpt");
    Tensor w = Tensor.ofFloats("w", new float[] {1, 2, 3}, 3);
    Tensor step = Tensor.allocate("step", DType.INT64);
    TensorVector variables = new TensorVector();
    variables.add(w);
    variables.add(step);
    Saver saver = new Saver(variables);
    String path = saver.save(dir.resolve("model.ckpt").toString(), 7);
    assertTrue(path, path.endsWith("model.ckpt-7"));
    assertEquals(path, TrainWatch.latestCheckpoint(dir.toString()));
    TrainWatch.verifyCheckpoint(path);
    TensorVector listed = TrainWatch.listVariables(path);
    assertEquals(2, listed.size());

    w.asByteBuffer().asFloatBuffer().put(new float[] {0, 0, 0});
    saver.restore(path);
    assertArrayEquals(new float[] {1, 2, 3}, w.toFloatArray(), 0);

    Tensor loaded = Tensor.allocate("w", DType.FLOAT32, 3);
    TrainWatch.loadVariable(path, loaded);
    assertArrayEquals(new float[] {1, 2, 3}, loaded.toFloatArray(), 0);

    try (RandomAccessFile file = new RandomAccessFile(path, "rw")) {
      file.seek(20);
      int b = file.read();
      file.seek(20);
      file.write(b ^ 0x10);
    }
    assertThrows(TrainWatchException.DataLoss.class, () -> TrainWatch.verifyCheckpoint(path));
    assertThrows(TrainWatchException.NotFound.class, () -> saver.restore(dir.resolve("nothing-here").toString()));
  }

  @Test
  public void listenersHearEverySaveAndMayStop() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-listen");
    List<String> heard = new ArrayList<>();
    CheckpointSaverListener listener = new CheckpointSaverListener("java-listener") {
      @Override
      public void beforeSave(SessionRef session, long globalStep) {
        heard.add("before " + globalStep);
      }

      @Override
      public boolean afterSave(SessionRef session, long globalStep) {
        heard.add("after " + globalStep);
        return globalStep >= 2;  // B23: a listener may request stop
      }
    };
    Fixtures.Model model = new Fixtures.Model();
    model.options.setString(Option.CHECKPOINT_DIR, dir.toString());
    model.options.setInt64(Option.EVERY_N_STEPS, 1);
    model.options.setInt64(Option.ASYNC_CHECKPOINT, 0);
    try (Session session = model.session(new CheckpointSaverHook(dir.toString(), model.options, listener),
                                         new StopAtStepHook(TrainWatch.UNSET, 10))) {
      while (!session.shouldStop()) session.run(model::step);
      assertEquals(2, session.globalStep());
    }
    assertEquals("before 0", heard.get(0));
    assertTrue(heard.toString(), heard.contains("after 2"));
  }

  private static TensorVector variablesOf(Tensor... tensors) {
    TensorVector variables = new TensorVector();
    for (Tensor t : tensors) variables.add(t);
    return variables;
  }

  /** C25: close() (AutoCloseable) releases the directory at once; a closed saver refuses to be used. */
  @Test
  public void aClosedSaverReleasesItsDirectory() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-close");
    String prefix = dir.resolve("model.ckpt").toString();
    Tensor w = Tensor.ofFloats("w", new float[] {1, 2}, 2);
    Saver first = new Saver(variablesOf(w));
    first.save(prefix, 1);
    Saver second = new Saver(variablesOf(w));
    TrainWatchException.FailedPrecondition inUse =
        assertThrows(TrainWatchException.FailedPrecondition.class, () -> second.save(prefix, 2));
    assertTrue(inUse.getMessage(), inUse.getMessage().contains("is in use: a Saver of this process"));
    first.close();
    assertEquals(prefix + "-2", second.save(prefix, 2));
    first.close();  // again: nothing
    TrainWatchException.FailedPrecondition closed =
        assertThrows(TrainWatchException.FailedPrecondition.class, () -> first.save(prefix, 3));
    assertTrue(closed.getMessage(), closed.getMessage().contains("this Saver is closed"));
    assertThrows(TrainWatchException.FailedPrecondition.class, () -> first.restore(prefix + "-2"));
    second.close();
    try (Saver scoped = new Saver(variablesOf(w))) {  // try-with-resources: released at the block's end
      assertEquals(prefix + "-3", scoped.save(prefix, 3));
    }
    try (Saver again = new Saver(variablesOf(w))) {
      assertEquals(prefix + "-4", again.save(prefix, 4));
    }
  }

  /** C24: a session that only restores (no CheckpointSaverHook) takes no lock: the program's own saver
   *  saves into its directory while it runs. */
  @Test
  public void aSessionThatOnlyRestoresLeavesTheDirectoryToTheProgram() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-reader");
    String prefix = dir.resolve("model.ckpt").toString();
    Fixtures.Model model = new Fixtures.Model();
    model.w.asByteBuffer().asFloatBuffer().put(new float[] {4, 4});
    try (Saver saver = new Saver(variablesOf(model.w))) {
      saver.save(prefix, 5);
    }
    model.w.asByteBuffer().asFloatBuffer().put(new float[] {0, 0});
    model.options.setString(Option.CHECKPOINT_DIR, dir.toString());
    try (Session session = model.session(); Saver saver = new Saver(variablesOf(model.w))) {
      assertEquals(5, session.globalStep());  // restored, the step from the saver's file name
      assertArrayEquals(new float[] {4, 4}, model.w.toFloatArray(), 0);
      session.run(model::step);
      assertEquals(prefix + "-6", saver.save(prefix, session.globalStep()));
    }
    assertEquals(prefix + "-6", TrainWatch.latestCheckpoint(dir.toString()));
  }

  /** C27: TF's scaffold.saver.save inside a session: the session's own saver saves on request into the
   *  directory its CheckpointSaverHook holds, and keeps the state file; a prefix elsewhere is refused. */
  @Test
  public void aSessionSavesOnRequestBesideItsSaverHook() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-save-request");
    String prefix = dir.resolve("model.ckpt").toString();
    Fixtures.Model model = new Fixtures.Model();
    model.options.setString(Option.CHECKPOINT_DIR, dir.toString());
    model.options.setInt64(Option.EVERY_N_STEPS, 1000);
    model.options.setInt64(Option.ASYNC_CHECKPOINT, 0);
    try (Session session = model.session(new CheckpointSaverHook(dir.toString(), model.options))) {
      for (int i = 0; i < 3; i++) session.run(model::step);
      assertEquals(prefix + "-3", session.saveCheckpoint(prefix, session.globalStep()));
      assertEquals(prefix + "-3", TrainWatch.latestCheckpoint(dir.toString()));
      try (Saver own = new Saver(variablesOf(model.w))) {  // the session holds the directory
        assertThrows(TrainWatchException.FailedPrecondition.class, () -> own.save(prefix, 4));
      }
      String elsewhere = Files.createTempDirectory("tw-java-elsewhere").resolve("model.ckpt").toString();
      assertThrows(TrainWatchException.InvalidArgument.class, () -> session.saveCheckpoint(elsewhere, 3));
    }
    Tensor restored = Tensor.allocate("w", DType.FLOAT32, 2);
    TrainWatch.loadVariable(prefix + "-3", restored);
    assertArrayEquals(new float[] {3, 3}, restored.toFloatArray(), 0);
  }
}
