package org.trainwatch.tests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;
import org.trainwatch.DType;
import org.trainwatch.NanTensorHook;
import org.trainwatch.RunContext;
import org.trainwatch.Session;
import org.trainwatch.SessionRef;
import org.trainwatch.SessionRunHook;
import org.trainwatch.StopAtStepHook;
import org.trainwatch.Tensor;
import org.trainwatch.TrainWatchException;

/** session.run(name) as TF hook code calls it: inside hooks and on the monitored session,
 *  an output of the run in progress, a variable or "global_step" is read without a step or hooks. */
public class SessionRunNamesTest {
  /** TF1's hook idiom: self._global_step_tensor read with session.run in after_create_session and after_run. */
  static final class GlobalStepReader extends SessionRunHook {
    final List<Object> seen = new ArrayList<>();

    GlobalStepReader() {
      super("global_step_reader");
    }

    @Override
    public void afterCreateSession(SessionRef session) {
      Tensor step = session.run("global_step");
      seen.add("created at " + step.toLongArray()[0] + " " + (step.dtype() == DType.INT64 ? "int64" : "?"));
    }

    @Override
    public void afterRun(RunContext ctx) {
      SessionRef session = ctx.session();
      seen.add((long) session.run("global_step").doubleValue());
      seen.add(session.run("loss").doubleValue());  // published by the step of this run
      seen.add(floats(session.run("w")));
    }
  }

  static List<Float> floats(Tensor t) {
    List<Float> out = new ArrayList<>();
    for (float f : t.toFloatArray()) out.add(f);
    return out;
  }

  @Test
  public void theGlobalStepIdiomOutputsAndVariablesInsideAHookB14() {
    Fixtures.Model model = new Fixtures.Model();
    GlobalStepReader hook = new GlobalStepReader();
    try (Session session = model.session(hook)) {
      session.run(model::step);
      session.run(model::step);
    }
    assertEquals(Arrays.asList("created at 0 int64", 1L, 2.0, Arrays.asList(1f, 1f), 2L, 4.0, Arrays.asList(2f, 2f)),
                 hook.seen);  // the current global step after the run, as TF's re-read in after_run (B14)
  }

  @Test
  public void aSubclassedBuiltinReadsThroughItsRunContextSession() {
    Fixtures.Model model = new Fixtures.Model();
    List<Double> seen = new ArrayList<>();
    NanTensorHook hook = new NanTensorHook("loss", true) {
      @Override
      public void afterRun(RunContext ctx) {
        seen.add(ctx.session().run("loss").doubleValue());
        seen.add(ctx.session().run("global_step").doubleValue());
        super.afterRun(ctx);
      }
    };
    try (Session session = model.session(hook)) {
      session.run(model::step);
    }
    assertEquals(Arrays.asList(2.0, 1.0), seen);
  }

  @Test
  public void theMonitoredSessionReadsBetweenRunsWithoutAStepOrHooksH9() {
    Fixtures.Model model = new Fixtures.Model();
    Fixtures.Recorder recorder = new Fixtures.Recorder();
    try (Session session = model.session(recorder)) {
      session.run(model::step);
      int calls = recorder.calls.size();
      assertEquals(1L, session.run("global_step").toLongArray()[0]);
      List<Tensor> values = session.run("w", "global_step");
      assertArrayEquals(new float[] {1, 1}, values.get(0).toFloatArray(), 0);
      assertEquals(1.0, values.get(1).doubleValue(), 0);
      assertEquals(2, session.run(Arrays.asList("global_step", "w")).size());
      Map<String, String> names = new LinkedHashMap<>();
      names.put("step", "global_step");
      names.put("weights", "w");
      Map<String, Tensor> byKey = session.run(names);
      assertEquals(Arrays.asList("step", "weights"), new ArrayList<>(byKey.keySet()));
      assertEquals(1.0, byKey.get("step").doubleValue(), 0);
      assertEquals(calls, recorder.calls.size());  // no hook ran
      assertEquals(1, session.globalStep());        // no step ran
    }
  }

  @Test
  public void valuesAreCopiesThatOutliveTheRun() {
    Fixtures.Model model = new Fixtures.Model();
    List<Tensor> kept = new ArrayList<>();
    SessionRunHook hook = new SessionRunHook("keeper") {
      @Override
      public void afterRun(RunContext ctx) {
        kept.add(ctx.session().run("loss"));
      }
    };
    try (Session session = model.session(hook)) {
      Tensor w = session.run("w");
      session.run(model::step);
      assertArrayEquals(new float[] {0, 0}, w.toFloatArray(), 0);  // read before the step, not a view
    }
    assertEquals(2.0, kept.get(0).doubleValue(), 0);  // the step's loss, after its memory is gone
  }

  @Test
  public void aNameThatMatchesNothingIsNotFoundWithTheName() {
    Fixtures.Model model = new Fixtures.Model();
    try (Session session = model.session()) {
      TrainWatchException.NotFound e = assertThrows(TrainWatchException.NotFound.class, () -> session.run("nope"));
      assertTrue(e.getMessage(), e.getMessage().contains("'nope'"));
      e = assertThrows(TrainWatchException.NotFound.class, () -> session.run("w", "loss"));
      assertTrue(e.getMessage(), e.getMessage().contains("'loss'"));  // outputs exist only while a run is in progress
      assertThrows(TrainWatchException.InvalidArgument.class, () -> session.run(""));
      assertThrows(NullPointerException.class, () -> session.run((String) null));
      assertThrows(NullPointerException.class, () -> session.run((List<String>) null));
    }
  }

  @Test
  public void anOutputNotPublishedInThisRunIsNotFoundInsideAHook() {
    Fixtures.Model model = new Fixtures.Model();
    SessionRunHook hook = new SessionRunHook("missing") {
      @Override
      public void afterRun(RunContext ctx) {
        ctx.session().run("accuracy");
      }
    };
    try (Session session = model.session(hook)) {
      TrainWatchException.NotFound e = assertThrows(TrainWatchException.NotFound.class, () -> session.run(model::step));
      assertTrue(e.getMessage(), e.getMessage().contains("'accuracy'"));
    }
  }

  @Test
  public void readingIsNotARunSoItWorksAfterAStopH29() {
    Fixtures.Model model = new Fixtures.Model();
    try (Session session = model.session(new StopAtStepHook(1, org.trainwatch.TrainWatch.UNSET))) {
      session.run(model::step);
      assertTrue(session.shouldStop());
      assertEquals(1.0, session.run("global_step").doubleValue(), 0);
      assertThrows(TrainWatchException.class, () -> session.run(model::step));  // a step after the stop is refused
    }
  }
}
