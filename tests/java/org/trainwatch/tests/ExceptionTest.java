package org.trainwatch.tests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import java.util.NoSuchElementException;
import org.junit.Test;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.RunContext;
import org.trainwatch.Session;
import org.trainwatch.SessionRef;
import org.trainwatch.TrainWatch;
import org.trainwatch.TrainWatchException;

/** Exceptions both ways: a Java callback's exception comes out of the session call as the same object,
 *  and a failing status becomes the TrainWatchException subclass of its code. */
public class ExceptionTest {
  static final class Boom extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Boom(String message) {
      super(message);
    }
  }

  /** A subclassed hook that throws from afterRun on the second run. */
  static final class ThrowingHook extends Fixtures.Recorder {
    Boom boom;
    int runs;

    @Override
    public void afterRun(RunContext ctx) {
      super.afterRun(ctx);
      if (++runs == 2) throw boom = new Boom("hook failed on purpose");
    }
  }

  @Test
  public void subclassedHookThatThrowsFailsTheRunWithTheSameObject() {
    Fixtures.Model model = new Fixtures.Model();
    ThrowingHook hook = new ThrowingHook();
    Fixtures.Recorder other = new Fixtures.Recorder();
    Session session = model.session(hook, other);
    session.run(model::step);
    Boom thrown = assertThrows(Boom.class, () -> session.run(model::step));
    assertSame(hook.boom, thrown);
    assertTrue(Arrays.stream(thrown.getStackTrace()).anyMatch(f -> f.getMethodName().equals("afterRun")));
    // H: a failed run tells every hook on_error instead of end; the session refuses to go on.
    assertEquals(Arrays.asList("begin", "after_create_session", "before_run", "after_run", "before_run", "after_run",
                               "on_error TW_CALLBACK_FAILED"), hook.calls);
    assertEquals("on_error TW_CALLBACK_FAILED", other.calls.get(other.calls.size() - 1));
    assertThrows(TrainWatchException.FailedPrecondition.class, () -> session.run(model::step));
    session.close();
  }

  @Test
  public void stepThatThrowsFailsTheRunWithTheSameObject() {
    Fixtures.Model model = new Fixtures.Model();
    Session session = model.session();
    Boom boom = new Boom("step failed");
    assertSame(boom, assertThrows(Boom.class, () -> session.run(ctx -> { throw boom; })));
    session.close();
  }

  @Test
  public void hookThrowingInBeginFailsSessionCreation() {
    Fixtures.Model model = new Fixtures.Model();
    Boom boom = new Boom("begin failed");
    Fixtures.Recorder hook = new Fixtures.Recorder() {
      @Override
      public void begin(SessionRef session) {
        throw boom;
      }
    };
    assertSame(boom, assertThrows(Boom.class, () -> model.session(hook)));
  }

  @Test
  public void abortedFromAStepIsRecoveredS() {
    // W: a MonitoredSession recreates the session after AbortedError and the run is retried.
    Fixtures.Model model = new Fixtures.Model();
    model.options.setDouble(Option.RECOVERY_BACKOFF_SECS, 0);
    Session session = model.session();
    int[] calls = {0};
    session.run(ctx -> {
      if (calls[0]++ == 0) throw new TrainWatchException.Aborted("preempted");
      model.step(ctx);
    });
    assertEquals(2, calls[0]);
    assertEquals(2, session.creationCount());
    assertArrayEquals(new float[] {1, 1}, model.w.toFloatArray(), 0);
    session.close();
  }

  @Test
  public void outOfRangeAndNoSuchElementEndTheInputCleanlyW23() {
    // Without TF's `with`, the end of input comes out of run() (OutOfRangeError / StopIteration); it is
    // not a failure: no on_error, and close() still runs end().
    Fixtures.Model model = new Fixtures.Model();
    Fixtures.Recorder hook = new Fixtures.Recorder();
    Session session = model.session(hook);
    assertThrows(TrainWatchException.OutOfRange.class,
                 () -> session.run(ctx -> { throw new TrainWatchException.OutOfRange("End of sequence"); }));
    assertThrows(NoSuchElementException.class, () -> session.run(ctx -> Arrays.asList().iterator().next()));
    session.close();
    assertEquals(Arrays.asList("begin", "after_create_session", "before_run", "before_run", "end"), hook.calls);
  }

  @Test
  public void statusesMapToTheirClasses() {
    assertEquals(TrainWatch.TW_ABORTED, TrainWatchException.of(TrainWatch.TW_ABORTED, "x").code());
    assertTrue(TrainWatchException.of(TrainWatch.TW_OUT_OF_RANGE, "x") instanceof TrainWatchException.OutOfRange);
    assertTrue(TrainWatchException.of(TrainWatch.TW_INVALID_ARGUMENT, "Same tensor is fed by a and b")
               instanceof TrainWatchException.FeedConflict);
    assertEquals("TW_NAN_LOSS", TrainWatchException.of(TrainWatch.TW_NAN_LOSS, "x").statusName());
    assertEquals(TrainWatchException.class, TrainWatchException.of(12345, "x").getClass());
  }

  @Test
  public void badOptionsThrowInvalidArgumentNamingTheProblem() {
    Options options = new Options();
    TrainWatchException.InvalidArgument e =
        assertThrows(TrainWatchException.InvalidArgument.class, () -> options.setInt64(99999, 1));
    assertTrue(e.getMessage(), e.getMessage().contains("99999"));
    assertThrows(TrainWatchException.InvalidArgument.class, () -> options.setString(Option.MAX_TO_KEEP, "five"));
  }

  @Test
  public void nullArgumentsAreNullPointerExceptions() {
    Fixtures.Model model = new Fixtures.Model();
    Session session = model.session();
    assertThrows(NullPointerException.class, () -> session.run((org.trainwatch.StepFunction) null));
    assertThrows(NullPointerException.class, () -> new Options().setString(Option.CHECKPOINT_DIR, null));
    session.close();
  }

  @Test
  public void throwingLogSinkDoesNotBreakTheLibrary() {
    int[] lines = {0};
    TrainWatch.setLogSink(new org.trainwatch.LogSink() {
      @Override
      public void write(int level, String message) {
        lines[0]++;
        throw new Boom("sink failed");
      }
    });
    try {
      Fixtures.Model model = new Fixtures.Model();
      Session session = model.session(new org.trainwatch.NanTensorHook("loss", false));
      session.run(ctx -> ctx.publishCopy(org.trainwatch.Tensor.scalar("loss", Float.NaN)));
      assertTrue(session.shouldStop());  // B34: warning logged, stop requested
      assertTrue(lines[0] > 0);
      session.close();
    } finally {
      TrainWatch.setLogSink(null);
    }
  }
}
