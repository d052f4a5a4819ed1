package org.trainwatch.tests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;
import org.trainwatch.FeedFnHook;
import org.trainwatch.FeedFunction;
import org.trainwatch.FinalOpsHook;
import org.trainwatch.LogSink;
import org.trainwatch.LoggingTensorHook;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.RunContext;
import org.trainwatch.Session;
import org.trainwatch.Tensor;
import org.trainwatch.TensorVector;
import org.trainwatch.TrainWatch;

/** Built-in hooks driven from Java, and a hook that feeds and fetches (H-series run arguments). */
public class HookTest {
  @Test
  public void hookFetchesWhatItRequestsAndFeedsTheStep() {
    Fixtures.Model model = new Fixtures.Model();
    Tensor lr = Tensor.scalar("lr", 0.5f);
    double[] seen = new double[2];
    Fixtures.Recorder hook = new Fixtures.Recorder() {
      @Override
      public void beforeRun(RunContext ctx) {
        ctx.requestFetch("loss");
        ctx.addFeed(lr);
      }

      @Override
      public void afterRun(RunContext ctx) {
        seen[0] = ctx.result("loss").doubleValue();
      }
    };
    try (Session session = model.session(hook)) {
      session.run(ctx -> {
        seen[1] = ctx.feed("lr").doubleValue();
        model.step(ctx);
      });
    }
    assertEquals(2.0, seen[0], 0);
    assertEquals(0.5, seen[1], 0);
  }

  @Test
  public void loggingTensorHookLogsThroughAJavaSinkB6() {
    List<String> lines = new ArrayList<>();
    TrainWatch.setLogSink(new LogSink() {
      @Override
      public void write(int level, String message) {
        lines.add(message);
      }
    });
    try {
      Fixtures.Model model = new Fixtures.Model();
      Options options = new Options();
      options.setInt64(Option.EVERY_N_STEPS, 1);
      try (Session session = model.session(new LoggingTensorHook(Arrays.asList("loss"), null, options, null))) {
        session.run(model::step);
      }
    } finally {
      TrainWatch.setLogSink(null);
    }
    assertTrue(lines.toString(), lines.stream().anyMatch(l -> l.startsWith("loss = 2")));
  }

  @Test
  public void feedFnAndFinalOpsHooksB43B44() {
    Fixtures.Model model = new Fixtures.Model();
    Tensor x = Tensor.scalar("x", 3f);
    FeedFunction feeds = new FeedFunction() {
      @Override
      public TensorVector feeds() {
        TensorVector v = new TensorVector();
        v.add(x);
        return v;
      }
    };
    double[] fed = {0};
    FinalOpsHook finalOps = new FinalOpsHook(org.trainwatch.Step.function(ctx -> ctx.publishCopy(Tensor.scalar("final", 9f))));
    try (Session session = model.session(new FeedFnHook(feeds), finalOps)) {
      session.run(ctx -> fed[0] = ctx.feed("x").doubleValue());
      assertTrue(!finalOps.hasValues());
    }
    assertEquals(3.0, fed[0], 0);
    assertTrue(finalOps.hasValues());
    assertEquals(9.0, finalOps.values().get(0).doubleValue(), 0);
  }
}
