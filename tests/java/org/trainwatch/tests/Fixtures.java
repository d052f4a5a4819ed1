package org.trainwatch.tests;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import org.trainwatch.DType;
import org.trainwatch.HookHandle;
import org.trainwatch.Options;
import org.trainwatch.RunContext;
import org.trainwatch.Session;
import org.trainwatch.SessionRef;
import org.trainwatch.SessionRunHook;
import org.trainwatch.StepContext;
import org.trainwatch.Tensor;
import org.trainwatch.TrainWatch;

/** What several test classes share: a one-variable model and a hook that records its calls. */
final class Fixtures {
  private Fixtures() {}

  /** w: float32[2] registered zero copy; step() adds 1 to every element and publishes loss = sum(w). */
  static final class Model {
    final Tensor w = Tensor.allocate("w", DType.FLOAT32, 2);
    final Options options = new Options();

    Model() {
      options.addVariable(w);
    }

    void step(StepContext ctx) {
      FloatBuffer values = w.asByteBuffer().asFloatBuffer();
      for (int i = 0; i < 2; i++) values.put(i, values.get(i) + 1);
      ctx.publishCopy(Tensor.scalar("loss", values.get(0) + values.get(1)));
    }

    Session session(HookHandle... hooks) {
      return Session.monitored(options, hooks);
    }
  }

  /** Records every callback as "name" or "name detail". */
  static class Recorder extends SessionRunHook {
    final List<String> calls = new ArrayList<>();

    Recorder() {
      super("recorder");
    }

    @Override
    public void begin(SessionRef session) {
      calls.add("begin");
    }

    @Override
    public void afterCreateSession(SessionRef session) {
      calls.add("after_create_session");
    }

    @Override
    public void beforeRun(RunContext ctx) {
      calls.add("before_run");
    }

    @Override
    public void afterRun(RunContext ctx) {
      calls.add("after_run");
    }

    @Override
    public void end(SessionRef session) {
      calls.add("end");
    }

    @Override
    public void onError(SessionRef session, int error) {
      calls.add("on_error " + TrainWatch.statusName(error));
    }
  }
}
