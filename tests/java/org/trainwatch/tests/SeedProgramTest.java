package org.trainwatch.tests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.Collections;
import org.junit.Test;
import org.trainwatch.DType;
import org.trainwatch.Options;
import org.trainwatch.Session;
import org.trainwatch.Tensor;
import org.trainwatch.TrainWatchException;

/**
 * The seed program in Java (a TF1 user's script): a user's NanTensorHookCustom (a NanTensorHook subclass
 * overriding afterRun) as the only hook of a MonitoredTrainingSession training a linear model by SGD,
 * whose loss becomes NaN at a known step. With super.afterRun the built-in check fails the run (B33)
 * after the custom action ran; without it the custom action alone runs and training goes on.
 */
public class SeedProgramTest {
  static final long NAN_STEP = 5;   // the run that ends at global step 5 reads a corrupt sample
  static final long LAST_STEP = 8;  // the training loop's stop step

  /** Fits y = 2x + 1 with w = [slope, bias], one sample per step; returns the global step reached. */
  static long train(NanTensorHookCustom hook, Tensor w) {
    Options options = new Options();
    options.addVariable(w);
    try (Session sess = Session.monitoredTraining(options, Collections.singletonList(hook), null)) {
      while (!sess.shouldStop() && sess.globalStep() < LAST_STEP) {
        sess.run(ctx -> {  // the graph's train_op as a step function
          long step = ctx.globalStep() + 1;
          float x = step % 4, y = step == NAN_STEP ? Float.NaN : 2 * x + 1;
          FloatBuffer p = w.asByteBuffer().asFloatBuffer();
          float error = p.get(0) * x + p.get(1) - y;
          p.put(0, p.get(0) - 0.1f * error * x);
          p.put(1, p.get(1) - 0.1f * error);
          ctx.publishCopy(Tensor.scalar("loss", error * error / 2));
        });
      }
      return sess.globalStep();
    }
  }

  @Test
  public void withSuperAfterRunTheBuiltinCheckFailsAfterTheCustomActionB33() {
    NanTensorHookCustom hook = new NanTensorHookCustom("loss", true, true);
    Tensor w = Tensor.allocate("w", DType.FLOAT32, 2);
    TrainWatchException.NanLossDuringTraining e =
        assertThrows(TrainWatchException.NanLossDuringTraining.class, () -> train(hook, w));
    assertTrue(e.getMessage(), e.getMessage().contains("NaN loss during training."));
    assertEquals(Arrays.asList(NAN_STEP + " NaN"), hook.divergences);  // the custom action ran first, once
  }

  @Test
  public void withoutSuperOnlyTheCustomActionRunsAndTrainingGoesOn() {
    NanTensorHookCustom hook = new NanTensorHookCustom("loss", true, false);
    Tensor w = Tensor.allocate("w", DType.FLOAT32, 2);
    assertEquals(LAST_STEP, train(hook, w));
    assertEquals(Arrays.asList("5 NaN", "6 NaN", "7 NaN", "8 NaN"), hook.divergences);
    assertTrue(Float.isNaN(w.toFloatArray()[0]));  // the model did diverge: nothing stopped it
  }
}
