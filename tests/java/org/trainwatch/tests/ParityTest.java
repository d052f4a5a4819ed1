package org.trainwatch.tests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.BeforeClass;
import org.junit.FixMethodOrder;
import org.junit.Test;
import org.junit.runners.MethodSorters;
import org.trainwatch.CheckpointSaverHook;
import org.trainwatch.DType;
import org.trainwatch.NanTensorHook;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.RunContext;
import org.trainwatch.Session;
import org.trainwatch.SessionRef;
import org.trainwatch.SessionRunHook;
import org.trainwatch.StopAtStepHook;
import org.trainwatch.Tensor;
import org.trainwatch.TrainWatch;
import org.trainwatch.TrainWatchException;

/** The parity scenario (tests/parity/README.md) in Java: the trace must equal tests/parity/expected.txt
 *  line for line, as it does for C (dlopen), Rust, Go and Python. Phases run in name order: restore
 *  reads the train phase's checkpoints, mts_resume the mts phase's. */
@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class ParityTest {
  private static Map<String, List<String>> expected;
  private static Path checkpointDir;
  private static Path trainingSessionDir;

  @BeforeClass
  public static void readExpected() throws IOException {
    expected = new LinkedHashMap<>();
    List<String> current = null;
    for (String raw : Files.readAllLines(Paths.get(System.getProperty("trainwatch.parity")))) {
      String line = raw.trim();
      if (line.isEmpty() || line.startsWith("#")) continue;
      if (line.startsWith("[")) {
        current = new ArrayList<>();
        expected.put(line.substring(1, line.length() - 1), current);
      } else {
        current.add(line);
      }
    }
    checkpointDir = Files.createTempDirectory("tw-java-parity");
    trainingSessionDir = Files.createTempDirectory("tw-java-parity-mts");
  }

  static String number(double value) {
    return Double.isNaN(value) ? "nan" : Long.toString((long) value);
  }

  /** The counting hook of the scenario: first in every hook list. */
  static final class Counter extends SessionRunHook {
    private final List<String> trace;

    Counter(List<String> trace) {
      super("counter");
      this.trace = trace;
    }

    @Override
    public void begin(SessionRef session) {
      trace.add("begin");
    }

    @Override
    public void afterCreateSession(SessionRef session) {
      trace.add("after_create_session global_step=" + session.globalStep());
    }

    @Override
    public void beforeRun(RunContext ctx) {
      trace.add("before_run");
      ctx.requestFetch("loss");
      ctx.requestFetch("global_step");
    }

    @Override
    public void afterRun(RunContext ctx) {
      trace.add("after_run loss=" + number(ctx.result("loss").doubleValue()) + " global_step="
                + number(ctx.result("global_step").doubleValue()));
    }

    @Override
    public void end(SessionRef session) {
      trace.add("end global_step=" + session.globalStep());
    }

    @Override
    public void onError(SessionRef session, int error) {
      trace.add("on_error " + TrainWatch.statusName(error));
    }
  }

  /** w: float32[4], registered zero copy; each step adds the feed x and publishes loss = sum(w). */
  static final class Model {
    final List<String> trace;
    final Tensor w = Tensor.allocate("w", DType.FLOAT32, 4);
    final Options options = new Options();

    Model(List<String> trace, Path checkpointDir) {
      this.trace = trace;
      options.addVariable(w);
      if (checkpointDir != null) options.setString(Option.CHECKPOINT_DIR, checkpointDir.toString());
    }

    void run(Session session, float x) {
      try {
        session.run(ctx -> {
          float feed = ctx.feed("x").asByteBuffer().getFloat(0);
          trace.add("step global_step=" + ctx.globalStep() + " x=" + number(feed));
          FloatBuffer values = w.asByteBuffer().asFloatBuffer();
          float sum = 0;
          for (int i = 0; i < 4; i++) {
            values.put(i, values.get(i) + feed);
            sum += values.get(i);
          }
          ctx.publishCopy(Tensor.scalar("loss", sum));
        }, Tensor.scalar("x", x));
        trace.add("run TW_OK");
      } catch (TrainWatchException e) {
        trace.add("run " + e.statusName());
        if (Float.isNaN(x)) {
          assertTrue(e instanceof TrainWatchException.NanLossDuringTraining);
          assertTrue(e.getMessage(), e.getMessage().contains("NaN loss during training."));
        }
      }
    }

    String weights() {
      StringBuilder s = new StringBuilder("w=");
      for (float v : w.toFloatArray()) s.append(s.length() > 2 ? "," : "").append(number(v));
      return s.toString();
    }
  }

  @Test
  public void phase1Train() {
    List<String> trace = new ArrayList<>();
    Model model = new Model(trace, checkpointDir);
    model.options.setInt64(Option.EVERY_N_STEPS, 2);
    model.options.setInt64(Option.ASYNC_CHECKPOINT, 0);
    Session session = Session.monitored(model.options, new Counter(trace), new StopAtStepHook(TrainWatch.UNSET, 5),
                                        new CheckpointSaverHook(checkpointDir.toString(), model.options));
    while (!session.shouldStop()) model.run(session, 1);
    trace.add("global_step=" + session.globalStep());
    session.close();
    trace.add("close TW_OK");
    trace.add(model.weights());
    trace.add("latest_checkpoint=" + Paths.get(TrainWatch.latestCheckpoint(checkpointDir.toString())).getFileName());
    assertEquals(expected.get("train"), trace);
  }

  @Test
  public void phase2Nan() {
    List<String> trace = new ArrayList<>();
    Model model = new Model(trace, null);
    Session session = Session.monitored(model.options, new Counter(trace), new NanTensorHook("loss", true));
    for (float x : new float[] {1, 1, Float.NaN, 1}) model.run(session, x);
    session.close();
    trace.add("close TW_OK");
    trace.add(model.weights());
    assertEquals(expected.get("nan"), trace);
  }

  @Test
  public void phase3Restore() {
    List<String> trace = new ArrayList<>();
    Model model = new Model(trace, checkpointDir);
    Session session = Session.monitored(model.options, new Counter(trace), new StopAtStepHook(TrainWatch.UNSET, 6));
    trace.add("restored " + model.weights());
    while (!session.shouldStop()) model.run(session, 1);
    session.close();
    trace.add("close TW_OK");
    trace.add(model.weights());
    assertEquals(expected.get("restore"), trace);
  }

  /** A MonitoredTrainingSession (T1–T10) whose only default hook is its CheckpointSaverHook, every 3 steps:
   *  summaries and step counting off. */
  static List<String> trainingSessionPhase(long lastStep) {
    List<String> trace = new ArrayList<>();
    Model model = new Model(trace, trainingSessionDir);
    model.options.setInt64(Option.IS_CHIEF, 1);
    model.options.setInt64(Option.CHECKPOINT_EVERY_N_STEPS, 3);
    model.options.setInt64(Option.SUMMARY_EVERY_N_STEPS, 0);
    model.options.setInt64(Option.STEP_COUNT_EVERY_N_STEPS, 0);
    Session session = Session.monitoredTraining(
        model.options, Arrays.asList(new Counter(trace), new StopAtStepHook(TrainWatch.UNSET, lastStep)), null);
    while (!session.shouldStop()) model.run(session, 1);
    session.close();
    trace.add("close TW_OK");
    trace.add(model.weights());
    trace.add("latest=" + Paths.get(TrainWatch.latestCheckpoint(trainingSessionDir.toString())).getFileName());
    return trace;
  }

  @Test
  public void phase4MonitoredTrainingSession() {
    assertEquals(expected.get("mts"), trainingSessionPhase(4));
  }

  @Test
  public void phase5MonitoredTrainingSessionResumes() {
    assertEquals(expected.get("mts_resume"), trainingSessionPhase(6));
  }
}
