package org.trainwatch.tests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.Test;
import org.trainwatch.DType;
import org.trainwatch.Session;
import org.trainwatch.Tensor;
import org.trainwatch.TrainWatchException;

/** Tensors over direct ByteBuffers: zero copy both ways, and clear errors for views that do not fit. */
public class TensorTest {
  @Test
  public void viewOfADirectBufferSharesItsMemory() {
    ByteBuffer data = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder());
    Tensor t = Tensor.of("x", data, DType.FLOAT32, 2, 3);
    assertEquals(6, t.elementCount());
    assertArrayEquals(new long[] {2, 3}, t.shapeArray());
    data.putFloat(20, 7.5f);
    assertEquals(7.5f, t.toFloatArray()[5], 0);
    t.asByteBuffer().putFloat(0, -1f);
    assertEquals(-1f, data.getFloat(0), 0);
  }

  @Test
  public void feedsAreReadInPlaceByTheStep() {
    Fixtures.Model model = new Fixtures.Model();
    ByteBuffer big = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.nativeOrder());
    big.putFloat(4 * 1000, 42f);
    Tensor feed = Tensor.of("batch", big, DType.FLOAT32, 1 << 18);
    long[] seen = new long[2];
    try (Session session = model.session()) {
      session.run(ctx -> {
        Tensor got = ctx.feed("batch");
        seen[0] = got.address();
        seen[1] = (long) got.asByteBuffer().getFloat(4 * 1000);
      }, feed);
    }
    assertEquals(feed.address(), seen[0]);
    assertEquals(42, seen[1]);
  }

  @Test
  public void heapBuffersAreRejected() {
    TrainWatchException.InvalidArgument e = assertThrows(TrainWatchException.InvalidArgument.class,
        () -> Tensor.of("x", ByteBuffer.allocate(16), DType.FLOAT32, 4));
    assertTrue(e.getMessage(), e.getMessage().contains("not direct"));
  }

  @Test
  public void viewsLargerThanTheirBufferAreRejected() {
    ByteBuffer data = ByteBuffer.allocateDirect(15);
    TrainWatchException.InvalidArgument e = assertThrows(TrainWatchException.InvalidArgument.class,
        () -> Tensor.of("x", data, DType.FLOAT32, 4));
    assertTrue(e.getMessage(), e.getMessage().contains("needs 16 bytes but its ByteBuffer has 15"));
    assertThrows(TrainWatchException.InvalidArgument.class,
                 () -> Tensor.of("s", ByteBuffer.allocateDirect(64), DType.FLOAT32, new long[] {4, 4}, new long[] {8, 1}));
    assertThrows(TrainWatchException.InvalidArgument.class, () -> Tensor.of("neg", data, DType.FLOAT32, -1));
    assertThrows(TrainWatchException.InvalidArgument.class, () -> Tensor.of("dtype", data, 999, 1));
  }

  @Test
  public void stridedViewsSpanOnlyWhatTheyTouch() {
    ByteBuffer data = ByteBuffer.allocateDirect(4 * 7).order(ByteOrder.nativeOrder());
    Tensor column = Tensor.of("col", data, DType.FLOAT32, new long[] {4}, new long[] {2});
    assertEquals(28, column.asByteBuffer().capacity());
    assertThrows(TrainWatchException.InvalidArgument.class, column::toFloatArray);
  }

  @Test
  public void typedCopiesCheckTheDtype() {
    Tensor t = Tensor.allocate("i", DType.INT64, 3);
    t.asByteBuffer().asLongBuffer().put(new long[] {1, -2, 3});
    assertArrayEquals(new long[] {1, -2, 3}, t.toLongArray());
    assertEquals(1.0, t.doubleValue(), 0);
    assertThrows(TrainWatchException.InvalidArgument.class, t::toFloatArray);
    assertEquals(0, Tensor.allocate("empty", DType.FLOAT32, 0).toFloatArray().length);
  }
}
