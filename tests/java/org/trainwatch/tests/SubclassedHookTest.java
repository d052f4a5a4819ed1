package org.trainwatch.tests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.Test;
import org.trainwatch.CheckpointSaverHook;
import org.trainwatch.FeedFnHook;
import org.trainwatch.FeedFunction;
import org.trainwatch.FinalOpsHook;
import org.trainwatch.GlobalStepWaiterHook;
import org.trainwatch.HookHandle;
import org.trainwatch.LogSink;
import org.trainwatch.LoggingTensorHook;
import org.trainwatch.NanAction;
import org.trainwatch.NanEvent;
import org.trainwatch.NanFunction;
import org.trainwatch.NanTensorHook;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.ProfilerHook;
import org.trainwatch.RunContext;
import org.trainwatch.Session;
import org.trainwatch.SessionRef;
import org.trainwatch.Step;
import org.trainwatch.StepCounterHook;
import org.trainwatch.StopAtStepHook;
import org.trainwatch.StringVector;
import org.trainwatch.SummarySaverHook;
import org.trainwatch.Tensor;
import org.trainwatch.TensorVector;
import org.trainwatch.TrainWatch;
import org.trainwatch.TrainWatchException;

/** Subclassing built-in hooks as in TF (docs/ARCHITECTURE.md): overrides run in TF's order (H6, H9, H12),
 *  super.<callback> runs the built-in's, not calling it skips it, and the protected extension points. */
public class SubclassedHookTest {
  /** A StopAtStepHook subclass recording every callback, calling the built-in's unless told not to. */
  static final class RecordingStop extends StopAtStepHook {
    final List<String> calls = new ArrayList<>();
    final boolean callSuper;

    RecordingStop(long lastStep, boolean callSuper) {
      super(TrainWatch.UNSET, lastStep);
      this.callSuper = callSuper;
    }

    @Override
    public void begin(SessionRef session) {
      calls.add("begin");
      super.begin(session);
    }

    @Override
    public void afterCreateSession(SessionRef session) {
      calls.add("after_create_session");
      super.afterCreateSession(session);
    }

    @Override
    public void beforeRun(RunContext ctx) {
      calls.add("before_run");
      super.beforeRun(ctx);
    }

    @Override
    public void afterRun(RunContext ctx) {
      calls.add("after_run");
      if (callSuper) super.afterRun(ctx);
    }

    @Override
    public void end(SessionRef session) {
      calls.add("end");
      super.end(session);
    }
  }

  @Test
  public void overridesRunInTfOrderAndSuperRunsTheBuiltinH6H9H12B11() {
    Fixtures.Model model = new Fixtures.Model();
    RecordingStop hook = new RecordingStop(2, true);
    try (Session session = model.session(hook)) {
      while (!session.shouldStop()) session.run(model::step);
      assertEquals(2, session.globalStep());  // the built-in's stop request, made through super.afterRun
    }
    assertEquals(Arrays.asList("begin", "after_create_session", "before_run", "after_run", "before_run", "after_run",
                               "end"), hook.calls);
  }

  @Test
  public void notCallingSuperSkipsTheBuiltinBehaviour() {
    Fixtures.Model model = new Fixtures.Model();
    RecordingStop hook = new RecordingStop(2, false);
    try (Session session = model.session(hook)) {
      for (int i = 0; i < 4; i++) session.run(model::step);
      assertFalse(session.shouldStop());  // the stop at step 2 was the built-in's after_run: skipped
    }
  }

  @Test
  public void aSubclassOverridingNothingStaysNative() {
    HookHandle plain = new NanTensorHook("loss", true) {};
    assertEquals(Collections.emptyList(), plain.overriddenCallbacks());
    assertEquals(Collections.emptyList(), new NanTensorHook("loss", true).overriddenCallbacks());
    assertEquals(Arrays.asList("begin", "afterCreateSession", "beforeRun", "afterRun", "end"),
                 new RecordingStop(2, true).overriddenCallbacks());
    // The native hook does its work: NaN fails the run (B33).
    Fixtures.Model model = new Fixtures.Model();
    try (Session session = model.session(plain)) {
      assertThrows(TrainWatchException.NanLossDuringTraining.class,
                   () -> session.run(ctx -> ctx.publishCopy(Tensor.scalar("loss", Float.NaN))));
    }
  }

  @Test
  public void superBeforeRunRequestsTheBuiltinFetchAndAfterRunReadsItsValue() {
    Fixtures.Model model = new Fixtures.Model();
    List<Object> seen = new ArrayList<>();
    NanTensorHook hook = new NanTensorHook("loss", true) {
      @Override
      public void beforeRun(RunContext ctx) {
        super.beforeRun(ctx);
        seen.add(new ArrayList<>(ctx.requests()));  // the built-in's SessionRunArgs: the loss fetch
      }

      @Override
      public void afterRun(RunContext ctx) {
        seen.add(ctx.result("loss").doubleValue());  // run_values.results
        super.afterRun(ctx);
      }
    };
    try (Session session = model.session(hook)) {
      session.run(model::step);
    }
    assertEquals(Arrays.asList(Arrays.asList("loss"), 2.0), seen);
  }

  @Test
  public void anExceptionFromAnOverrideComesOutOfRunAsTheSameObject() {
    Fixtures.Model model = new Fixtures.Model();
    ExceptionTest.Boom boom = new ExceptionTest.Boom("override failed");
    Fixtures.Recorder other = new Fixtures.Recorder();
    NanTensorHook hook = new NanTensorHook("loss", true) {
      @Override
      public void afterRun(RunContext ctx) {
        throw boom;
      }
    };
    try (Session session = model.session(hook, other)) {
      assertSame(boom, assertThrows(ExceptionTest.Boom.class, () -> session.run(model::step)));
    }
    assertEquals("on_error TW_CALLBACK_FAILED", other.calls.get(other.calls.size() - 1));
  }

  @Test
  public void anExceptionFromAJavaCallbackTheBuiltinRunsComesThroughSuperAsTheSameObject() {
    ExceptionTest.Boom boom = new ExceptionTest.Boom("the NaN callback failed");
    Options options = new Options();
    options.setInt64(Option.NAN_ACTION, NanAction.CALLBACK);
    NanFunction fn = new NanFunction() {
      @Override
      public void onNan(SessionRef session, NanEvent event) {
        throw boom;
      }
    };
    List<String> calls = new ArrayList<>();
    NanTensorHook hook = new NanTensorHook(Arrays.asList("loss"), options, fn) {
      @Override
      public void afterRun(RunContext ctx) {
        calls.add("after_run");
        super.afterRun(ctx);  // runs the built-in, which calls fn
        calls.add("not reached");
      }
    };
    Fixtures.Model model = new Fixtures.Model();
    try (Session session = model.session(hook)) {
      assertSame(boom, assertThrows(ExceptionTest.Boom.class,
                                    () -> session.run(ctx -> ctx.publishCopy(Tensor.scalar("loss", Float.NaN)))));
    }
    assertEquals(Arrays.asList("after_run"), calls);
  }

  @Test
  public void theBuiltinsFailureThroughSuperKeepsItsClassAndTheOverrideMayCatchIt() {
    Fixtures.Model model = new Fixtures.Model();
    List<String> caught = new ArrayList<>();
    NanTensorHook hook = new NanTensorHook("loss", true) {
      @Override
      public void afterRun(RunContext ctx) {
        try {
          super.afterRun(ctx);
        } catch (TrainWatchException.NanLossDuringTraining e) {
          caught.add(e.getMessage());  // the subclass decides: the run goes on
        }
      }
    };
    try (Session session = model.session(hook)) {
      session.run(ctx -> ctx.publishCopy(Tensor.scalar("loss", Float.NaN)));
      session.run(model::step);
    }
    assertEquals(1, caught.size());
    assertTrue(caught.get(0), caught.get(0).contains("NaN loss during training."));
  }

  /** Runs {@code body} with the library's log lines collected. */
  static List<String> logLines(Runnable body) {
    List<String> lines = Collections.synchronizedList(new ArrayList<>());
    TrainWatch.setLogSink(new LogSink() {
      @Override
      public void write(int level, String message) {
        lines.add(message);
      }
    });
    try {
      body.run();
    } finally {
      TrainWatch.setLogSink(null);
    }
    return lines;
  }

  /** A LoggingTensorHook subclass overriding TF's _log_tensors; super logs as the built-in does. */
  static final class CapturingLogger extends LoggingTensorHook {
    final List<String> captured = new ArrayList<>();
    final boolean callSuper;

    CapturingLogger(Options options, boolean callSuper) {
      super(Arrays.asList("loss"), null, options, null);
      this.callSuper = callSuper;
    }

    @Override
    protected void logTensors(List<Tensor> values) {
      for (Tensor t : values) captured.add(t.name() + "=" + t.doubleValue());
      if (callSuper) super.logTensors(values);
    }
  }

  @Test
  public void loggingTensorHookLogTensorsIsAnExtensionPointB9() {
    Options options = new Options();
    options.setInt64(Option.EVERY_N_STEPS, 1);
    for (boolean callSuper : new boolean[] {false, true}) {
      Fixtures.Model model = new Fixtures.Model();
      CapturingLogger hook = new CapturingLogger(options, callSuper);
      List<String> lines = logLines(() -> {
        try (Session session = model.session(hook)) {
          session.run(model::step);
          session.run(model::step);
        }
      });
      assertEquals(Arrays.asList("loss=2.0", "loss=4.0"), hook.captured);
      assertEquals("the built-in line only through super: " + lines, callSuper,
                   lines.stream().anyMatch(l -> l.startsWith("loss = 2")));
      assertEquals(Arrays.asList("logTensors"), hook.overriddenCallbacks());  // its callbacks stay native
    }
  }

  @Test
  public void stepCounterHookLogAndRecordIsAnExtensionPointB27() {
    List<long[]> records = new ArrayList<>();
    StepCounterHook hook = new StepCounterHook(1, -1, "") {
      @Override
      protected void logAndRecord(long elapsedSteps, double elapsedTime, long globalStep) {
        assertTrue(elapsedTime >= 0);
        records.add(new long[] {elapsedSteps, globalStep});
      }
    };
    Fixtures.Model model = new Fixtures.Model();
    List<String> lines = logLines(() -> {
      try (Session session = model.session(hook)) {
        for (int i = 0; i < 3; i++) session.run(model::step);
      }
    });
    assertFalse(records.isEmpty());
    for (long[] r : records) assertEquals(1, r[0]);
    assertEquals(3, records.get(records.size() - 1)[1]);
    assertFalse("the override replaced the rate line: " + lines, lines.stream().anyMatch(l -> l.startsWith("global_step/sec")));
  }

  @Test
  public void checkpointSaverHookSaveIsAnExtensionPointWhoseResultRequestsAStopB18B23() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-subclass-save");
    Fixtures.Model model = new Fixtures.Model();
    model.options.setInt64(Option.EVERY_N_STEPS, 2);
    model.options.setInt64(Option.ASYNC_CHECKPOINT, 0);
    List<Long> saved = new ArrayList<>();
    CheckpointSaverHook hook = new CheckpointSaverHook(dir.toString(), model.options) {
      @Override
      protected boolean save(SessionRef session, long step) {
        saved.add(step);
        super.save(session, step);
        return step >= 2;  // TF: a true _save result makes after_run request a stop
      }
    };
    try (Session session = model.session(hook)) {
      while (!session.shouldStop()) session.run(model::step);
      assertEquals(2, session.globalStep());
    }
    assertEquals(Arrays.asList(0L, 2L), saved);  // after_create_session, step 2; end: the step did not move (B23)
    assertTrue(TrainWatch.latestCheckpoint(dir.toString()).endsWith("model.ckpt-2"));
  }

  @Test
  public void anExceptionFromAnExtensionPointComesOutAsTheSameObject() {
    ExceptionTest.Boom boom = new ExceptionTest.Boom("cannot log");
    Options options = new Options();
    options.setInt64(Option.EVERY_N_STEPS, 1);
    LoggingTensorHook hook = new LoggingTensorHook(Arrays.asList("loss"), null, options, null) {
      @Override
      protected void logTensors(List<Tensor> values) {
        throw boom;
      }
    };
    Fixtures.Model model = new Fixtures.Model();
    try (Session session = model.session(hook)) {
      assertSame(boom, assertThrows(ExceptionTest.Boom.class, () -> session.run(model::step)));
    }
  }

  @Test
  public void everyBuiltinKindCanBeSubclassed() throws IOException {
    Path dir = Files.createTempDirectory("tw-java-subclass-kinds");
    Fixtures.Model model = new Fixtures.Model();
    model.options.setInt64(Option.EVERY_N_STEPS, 1);
    Options every = new Options();
    every.setInt64(Option.EVERY_N_STEPS, 1);
    every.setString(Option.OUTPUT_DIR, dir.toString());
    List<String> calls = new ArrayList<>();
    StringVector summarize = new StringVector();
    summarize.add("loss");
    FeedFunction feeds = new FeedFunction() {
      @Override
      public TensorVector feeds() {
        return new TensorVector();
      }
    };
    List<HookHandle> hooks = Arrays.asList(
        new NanTensorHook("loss", true) {
          @Override
          public void afterRun(RunContext ctx) {
            calls.add("NanTensorHook " + ctx.result("loss").doubleValue());
            super.afterRun(ctx);
          }
        },
        new StopAtStepHook(TrainWatch.UNSET, 5) {
          @Override
          public void afterRun(RunContext ctx) {
            calls.add("StopAtStepHook");
            super.afterRun(ctx);
          }
        },
        new LoggingTensorHook(Arrays.asList("loss"), null, every, null) {
          @Override
          public void afterRun(RunContext ctx) {
            calls.add("LoggingTensorHook " + ctx.result("loss").doubleValue());
            super.afterRun(ctx);
          }
        },
        new StepCounterHook(1, -1, "") {
          @Override
          public void afterRun(RunContext ctx) {
            calls.add("StepCounterHook");
            super.afterRun(ctx);
          }
        },
        new SummarySaverHook(summarize, every) {
          @Override
          public void afterRun(RunContext ctx) {
            calls.add("SummarySaverHook");
            super.afterRun(ctx);
          }
        },
        new CheckpointSaverHook(dir.resolve("ckpt").toString(), model.options) {
          @Override
          public void afterRun(RunContext ctx) {
            calls.add("CheckpointSaverHook");
            super.afterRun(ctx);
          }
        },
        new FeedFnHook(feeds) {
          @Override
          public void beforeRun(RunContext ctx) {
            calls.add("FeedFnHook");
            super.beforeRun(ctx);
          }
        },
        new FinalOpsHook(Step.function(ctx -> {})) {
          @Override
          public void end(SessionRef session) {
            calls.add("FinalOpsHook");
            super.end(session);
          }
        },
        new GlobalStepWaiterHook(0, null, null) {
          @Override
          public void beforeRun(RunContext ctx) {
            calls.add("GlobalStepWaiterHook");
            super.beforeRun(ctx);
          }
        },
        new ProfilerHook(100, -1, dir.toString()) {
          @Override
          public void afterRun(RunContext ctx) {
            calls.add("ProfilerHook");
            super.afterRun(ctx);
          }
        });
    logLines(() -> {
      try (Session session = Session.monitored(model.options, hooks.toArray(new HookHandle[0]))) {
        session.run(model::step);
      }
    });
    assertEquals(Arrays.asList("FeedFnHook", "GlobalStepWaiterHook", "NanTensorHook 2.0", "StopAtStepHook",
                               "LoggingTensorHook 2.0", "StepCounterHook", "SummarySaverHook", "CheckpointSaverHook",
                               "ProfilerHook", "FinalOpsHook"), calls);
    for (HookHandle h : hooks) assertEquals(1, h.overriddenCallbacks().size());
  }
}
