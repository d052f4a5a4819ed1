package org.trainwatch.tests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import org.junit.Test;
import org.trainwatch.Session;
import org.trainwatch.StopAtStepHook;
import org.trainwatch.TrainWatch;
import org.trainwatch.TrainWatchException;

/** Session lifecycle from Java (tf-semantics IDs in the names and comments). */
public class SessionTest {
  @Test
  public void versionMatchesTheLoadedLibrary() {
    assertEquals(TrainWatch.TW_VERSION_NUMBER, TrainWatch.versionNumber());
    assertEquals(TrainWatch.TW_VERSION_STRING, TrainWatch.versionString());
  }

  @Test
  public void stopAtStepLastStepB12AndHookOrderH12() {
    Fixtures.Model model = new Fixtures.Model();
    Fixtures.Recorder hook = new Fixtures.Recorder();
    int steps = 0;
    try (Session session = model.session(hook, new StopAtStepHook(TrainWatch.UNSET, 3))) {
      assertEquals(0, session.globalStep());
      while (!session.shouldStop()) {
        session.run(model::step);
        steps++;
      }
      assertEquals(3, session.globalStep());
    }
    assertEquals(3, steps);
    assertArrayEquals(new float[] {3, 3}, model.w.toFloatArray(), 0);  // zero copy: updated in place
    assertEquals(Arrays.asList("begin", "after_create_session", "before_run", "after_run", "before_run", "after_run",
                               "before_run", "after_run", "end"), hook.calls);
  }

  @Test
  public void stopAtStepNumStepsB11() {
    Fixtures.Model model = new Fixtures.Model();
    try (Session session = model.session(new StopAtStepHook(2, TrainWatch.UNSET))) {
      while (!session.shouldStop()) session.run(model::step);
      assertEquals(2, session.globalStep());
    }
  }

  @Test
  public void stopAtStepWithBothArgumentsIsInvalidB13() {
    assertThrows(TrainWatchException.InvalidArgument.class, () -> new StopAtStepHook(1, 2));
  }

  @Test
  public void deleteInsideItsOwnStepThrowsAndTheSessionSurvives() {
    Fixtures.Model model = new Fixtures.Model();
    try (Session session = model.session()) {
      TrainWatchException.FailedPrecondition e =
          assertThrows(TrainWatchException.FailedPrecondition.class, () -> session.run(ctx -> session.delete()));
      assertTrue(e.getMessage(), e.getMessage().contains("own callback"));
      assertEquals(0, session.globalStep());  // still there to ask (the failed run did not free it)
    }
  }

  @Test
  public void runAfterCloseW6AndCloseTwiceW17() {
    Fixtures.Model model = new Fixtures.Model();
    Session session = model.session();
    session.close();
    assertTrue(session.shouldStop());  // W4
    assertThrows(TrainWatchException.FailedPrecondition.class, () -> session.run(model::step));
    TrainWatchException e = assertThrows(TrainWatchException.class, session::close);
    assertTrue(e.getMessage(), e.getMessage().contains("Session is already closed."));
  }

  @Test
  public void requestStopFromAStepThrowsStopIterationAndSetsNoFlagW23() {
    Fixtures.Model model = new Fixtures.Model();
    Fixtures.Recorder hook = new Fixtures.Recorder();
    try (Session session = model.session(hook)) {
      TrainWatchException.StopIteration e = assertThrows(TrainWatchException.StopIteration.class,
          () -> session.run(ctx -> {
            model.step(ctx);
            ctx.requestStop();
          }));
      assertEquals("step_fn has requested the iterations to stop.", e.getMessage());
      assertFalse(session.shouldStop());
    }
    assertEquals("end", hook.calls.get(hook.calls.size() - 1));  // a clean end, not on_error
  }

  @Test
  public void deletedSessionIsAnIllegalStateNotACrash() {
    Fixtures.Model model = new Fixtures.Model();
    Session session = model.session();
    session.delete();
    session.delete();  // twice is harmless
    assertThrows(IllegalStateException.class, () -> session.run(model::step));
    assertThrows(IllegalStateException.class, session::globalStep);
  }

  @Test
  public void runWithoutHooksDoesNotTouchGlobalStep() {
    Fixtures.Model model = new Fixtures.Model();
    Fixtures.Recorder hook = new Fixtures.Recorder();
    try (Session session = model.session(hook)) {
      session.runWithoutHooks(model::step);
      assertEquals(0, session.globalStep());
      assertFalse(hook.calls.contains("before_run"));
    }
    assertArrayEquals(new float[] {1, 1}, model.w.toFloatArray(), 0);
  }

  @Test
  public void hooksSurviveGarbageCollectionWhileTheSessionLives() throws InterruptedException {
    Fixtures.Model model = new Fixtures.Model();
    int[] count = {0};
    Session session = model.session(new Fixtures.Recorder() {
      @Override
      public void beforeRun(org.trainwatch.RunContext ctx) {
        count[0]++;
      }
    });
    for (int i = 0; i < 3; i++) {
      System.gc();
      System.runFinalization();
      session.run(model::step);
    }
    assertEquals(3, count[0]);
    session.close();
  }
}
