package org.trainwatch.tests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.Test;
import org.trainwatch.CheckpointSaverHook;
import org.trainwatch.DType;
import org.trainwatch.NanTensorHook;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.RunContext;
import org.trainwatch.Session;
import org.trainwatch.SessionRunHook;
import org.trainwatch.StopAtStepHook;
import org.trainwatch.Tensor;
import org.trainwatch.TrainWatch;

/** The example of bindings/java/README.md, kept here so that it cannot rot. */
public class ExampleTest {
  // --- README example begins ---
  /** Remembers the last loss it fetched. */
  static final class Progress extends SessionRunHook {
    float lastLoss;

    Progress() {
      super("progress");
    }

    @Override
    public void beforeRun(RunContext ctx) {
      ctx.requestFetch("loss");
    }

    @Override
    public void afterRun(RunContext ctx) {
      lastLoss = (float) ctx.result("loss").doubleValue();
    }
  }

  /** Trains w toward 3 until lastStep; a second call restores w and the global step, then resumes. */
  static float train(Path checkpointDir, long lastStep) {
    Tensor w = Tensor.allocate("w", DType.FLOAT32, 4);  // a direct buffer: the library works on it in place
    Options options = new Options();
    options.addVariable(w);
    options.setString(Option.CHECKPOINT_DIR, checkpointDir.toString());
    options.setInt64(Option.EVERY_N_STEPS, 10);

    Progress progress = new Progress();
    try (Session session = Session.monitored(options, progress,
             new NanTensorHook("loss", true),
             new StopAtStepHook(TrainWatch.UNSET, lastStep),
             new CheckpointSaverHook(checkpointDir.toString(), options))) {
      while (!session.shouldStop()) {
        session.run(ctx -> {
          FloatBuffer values = w.asByteBuffer().asFloatBuffer();
          float loss = 0;
          for (int i = 0; i < 4; i++) {
            float error = values.get(i) - 3;
            values.put(i, values.get(i) - 0.2f * error);  // a gradient step on (w - 3)^2 / 2
            loss += error * error / 2;
          }
          ctx.publishCopy(Tensor.scalar("loss", loss));
        });
      }
    }
    return progress.lastLoss;
  }
  // --- README example ends ---

  @Test
  public void readmeExampleTrainsAndResumesFromItsCheckpoint() throws Exception {
    Path dir = Files.createTempDirectory("tw-java-example");
    float first = train(dir, 20);
    assertTrue("loss " + first, first < 0.01f);
    assertTrue(TrainWatch.latestCheckpoint(dir.toString()).endsWith("model.ckpt-20"));
    float resumed = train(dir, 25);  // restores w at step 20, trains 5 more steps
    assertTrue("loss " + resumed + " after " + first, resumed < first);
    assertEquals(dir.resolve("model.ckpt-25").toString(), TrainWatch.latestCheckpoint(dir.toString()));
  }
}
