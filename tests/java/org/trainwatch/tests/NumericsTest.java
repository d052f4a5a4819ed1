package org.trainwatch.tests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.Test;
import org.trainwatch.DType;
import org.trainwatch.NanAction;
import org.trainwatch.NanEvent;
import org.trainwatch.NanFunction;
import org.trainwatch.NanTensorHook;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.ScanResult;
import org.trainwatch.Session;
import org.trainwatch.SessionRef;
import org.trainwatch.Tensor;
import org.trainwatch.TensorStats;
import org.trainwatch.TrainWatch;
import org.trainwatch.TrainWatchException;

/** Scans, tensor statistics, check_numerics and NanTensorHook (B31–B34 and trainwatch's additions) from Java. */
public class NumericsTest {
  static Tensor floats(String name, float... values) {
    return Tensor.ofFloats(name, values, values.length);
  }

  @Test
  public void scanCountsEveryKindAndTheFirstIndex() {
    ScanResult r = TrainWatch.scan(floats("g", 1, Float.NaN, Float.POSITIVE_INFINITY, 2, Float.NEGATIVE_INFINITY, Float.NaN));
    assertEquals(2, r.getNanCount());
    assertEquals(1, r.getPosInfCount());
    assertEquals(1, r.getNegInfCount());
    assertEquals(1, r.getFirstNonfiniteIndex());
    assertTrue(TrainWatch.hasNonfinite(floats("g", 0, Float.NaN)));
    assertFalse(TrainWatch.hasNonfinite(floats("g", 0, 1)));
  }

  @Test
  public void bfloat16BitsAreScannedWithoutConversion() {
    ByteBuffer bits = ByteBuffer.allocateDirect(6).order(ByteOrder.nativeOrder());
    bits.putShort(0, (short) 0x3F80).putShort(2, (short) 0x7FC0).putShort(4, (short) 0xFF80);  // 1, NaN, -Inf
    ScanResult r = TrainWatch.scan(Tensor.of("b", bits, DType.BFLOAT16, 3));
    assertEquals(1, r.getNanCount());
    assertEquals(1, r.getNegInfCount());
  }

  @Test
  public void tensorStatsGivesTheCountsAndTheFiniteRangeAndMean() {
    TensorStats s = TrainWatch.tensorStats(floats("g", 1, Float.NaN, 3, 5, Float.POSITIVE_INFINITY));
    assertEquals(5, s.getElementCount());
    assertEquals(3, s.getFiniteCount());
    assertEquals(1, s.getNanCount());
    assertEquals(1, s.getPosInfCount());
    assertEquals(1, s.getFirstNonfiniteIndex());
    assertEquals(1.0, s.getMin(), 0.0);
    assertEquals(5.0, s.getMax(), 0.0);
    assertEquals(3.0, s.getMean(), 0.0);
    assertTrue(Double.isNaN(TrainWatch.tensorStats(floats("g", Float.NaN)).getMean()));
  }

  @Test
  public void checkNumericsUsesTfTexts() {
    TrainWatchException.InvalidArgument e = assertThrows(TrainWatchException.InvalidArgument.class,
        () -> TrainWatch.checkNumerics(floats("g", Float.NaN, Float.POSITIVE_INFINITY), "grad"));
    assertEquals("grad : Tensor had Inf and NaN values", e.getMessage());
    TrainWatch.checkNumerics(floats("g", 1, 2), "fine");
  }

  @Test
  public void nanTensorHookFailsNamingTensorAndStepB33() {
    Fixtures.Model model = new Fixtures.Model();
    Options options = new Options();
    Session session = model.session(new NanTensorHook(java.util.Arrays.asList("grad/*"), options, null));
    session.run(ctx -> ctx.publishCopy(floats("grad/w", 1, 2)));
    TrainWatchException.NanLossDuringTraining e = assertThrows(TrainWatchException.NanLossDuringTraining.class,
        () -> session.run(ctx -> ctx.publishCopy(floats("grad/b", 0, Float.NaN, Float.POSITIVE_INFINITY))));
    assertTrue(e.getMessage(), e.getMessage().startsWith("NaN loss during training."));
    assertTrue(e.getMessage(), e.getMessage().contains("tensor 'grad/b', step 1: 1 NaN, 1 +Inf, 0 -Inf, first at index 1"));
    session.close();
  }

  @Test
  public void nanCallbackActionDecidesInJava() {
    Fixtures.Model model = new Fixtures.Model();
    Options options = new Options();
    options.setInt64(Option.NAN_ACTION, NanAction.CALLBACK);
    String[] seen = {null};
    NanFunction fn = new NanFunction() {
      @Override
      public void onNan(SessionRef session, NanEvent event) {
        seen[0] = event.getTensorName() + "@" + event.getGlobalStep() + ":" + event.getNanCount();
        session.requestStop();
      }
    };
    Session session = model.session(new NanTensorHook(java.util.Arrays.asList("loss"), options, fn));
    fn = null;  // the hook keeps it
    System.gc();
    session.run(ctx -> ctx.publishCopy(floats("loss", Float.NaN)));
    assertEquals("loss@0:1", seen[0]);
    assertTrue(session.shouldStop());
    session.close();
  }
}
