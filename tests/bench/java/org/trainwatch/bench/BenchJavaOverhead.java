package org.trainwatch.bench;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.trainwatch.CheckpointSaverHook;
import org.trainwatch.DType;
import org.trainwatch.NanTensorHook;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.RunContext;
import org.trainwatch.ScanResult;
import org.trainwatch.Session;
import org.trainwatch.SessionRunHook;
import org.trainwatch.Step;
import org.trainwatch.StepContext;
import org.trainwatch.StepCounterHook;
import org.trainwatch.StopAtStepHook;
import org.trainwatch.Tensor;
import org.trainwatch.TrainWatch;

/**
 * What the Java binding costs, measured against anchors in the same run (timings printed, never
 * asserted):
 * 1. session.run(step) per step with 5 built-in hooks on steps where none triggers, and with one Java
 *    SessionRunHook subclass (director upcalls), against calling the same step lambda directly;
 * 2. TrainWatch.scan on a 256 MiB float32 direct ByteBuffer, against the plain Java loop a Java user
 *    would write (Float.isNaN/isInfinite over a FloatBuffer view of the same memory).
 * usage: java -cp trainwatch.jar:trainwatch-bench.jar -Djava.library.path=... org.trainwatch.bench.BenchJavaOverhead [steps]
 */
public final class BenchJavaOverhead {
  static final long NEVER = 1_000_000_000_000L;
  static final Tensor LOSS = Tensor.scalar("loss", 0.5f);

  static void step(StepContext ctx) {
    if (ctx != null) ctx.publish(LOSS);
  }

  interface Loop {
    void run(int n);
  }

  /** Best seconds per call of each loop, timed in turn so that machine load hits all alike. */
  static double[] interleavedBest(int calls, int repeats, Loop... loops) {
    double[] best = new double[loops.length];
    java.util.Arrays.fill(best, Double.MAX_VALUE);
    for (int r = 0; r < repeats; r++) {
      for (int i = 0; i < loops.length; i++) {
        long start = System.nanoTime();
        loops[i].run(calls);
        best[i] = Math.min(best[i], (System.nanoTime() - start) / 1e9 / calls);
      }
    }
    return best;
  }

  static final class Quiet extends SessionRunHook {
    long runs;

    Quiet() {
      super("quiet");
    }

    @Override
    public void beforeRun(RunContext ctx) {
      runs++;
    }
  }

  static void runOverhead(int steps) throws Exception {
    Path dir = Files.createTempDirectory("tw-java-bench");
    Options hookOptions = new Options();
    hookOptions.setInt64(Option.CHECKPOINT_EVERY_N_STEPS, NEVER);
    Options options = new Options();
    Step step = BenchJavaOverhead::step;
    try (Session builtIn = Session.monitored(options, new StopAtStepHook(TrainWatch.UNSET, NEVER),
             new NanTensorHook("loss", true), new CheckpointSaverHook(dir.toString(), hookOptions),
             new StepCounterHook(NEVER, TrainWatch.TW_UNSET_SECS, dir.toString()), new Quiet());
         Session javaHook = Session.monitored(options, new Quiet());
         Session bare = Session.monitored(options)) {
      Loop direct = n -> { for (int i = 0; i < n; i++) step.run(null); };
      Loop hooked = n -> { for (int i = 0; i < n; i++) builtIn.run(step); };
      Loop oneJavaHook = n -> { for (int i = 0; i < n; i++) javaHook.run(step); };
      Loop noHooks = n -> { for (int i = 0; i < n; i++) bare.run(step); };
      interleavedBest(steps, 2, direct, hooked, oneJavaHook, noHooks);  // JIT warm-up
      double[] best = interleavedBest(steps, 5, direct, hooked, oneJavaHook, noHooks);
      System.out.printf("session.run(step), %d steps, best of 5, interleaved%n", steps);
      System.out.printf("  anchor: direct call of the step lambda          %8.3f us/step (the JIT inlines it)%n", best[0] * 1e6);
      String[] names = {"5 built-in hooks + 1 Java hook", "1 Java SessionRunHook", "no hooks"};
      for (int i = 1; i < 4; i++) {
        System.out.printf("  trainwatch: run with %-27s %8.3f us/step  (overhead %.3f us)%n", names[i - 1],
                          best[i] * 1e6, (best[i] - best[0]) * 1e6);
      }
    }
  }

  static long javaLoopNonfinite(FloatBuffer values) {
    long count = 0;
    for (int i = 0, n = values.limit(); i < n; i++) {
      float v = values.get(i);
      if (Float.isNaN(v) || Float.isInfinite(v)) count++;
    }
    return count;
  }

  static void scanThroughput() {
    int bytes = 256 << 20;
    Tensor t = Tensor.allocate("x", DType.FLOAT32, bytes / 4);
    FloatBuffer values = t.asByteBuffer().asFloatBuffer();
    for (int i = 0; i < bytes / 4; i++) values.put(i, 1.0f);
    long[] sink = {0};
    Loop ours = n -> { for (int i = 0; i < n; i++) { ScanResult r = TrainWatch.scan(t); sink[0] += r.getNanCount(); } };
    Loop java = n -> { for (int i = 0; i < n; i++) sink[0] += javaLoopNonfinite(values); };
    interleavedBest(1, 2, ours, java);
    double[] best = interleavedBest(1, 9, ours, java);
    double gb = bytes / 1e9;
    System.out.printf("%n256 MiB float32 direct ByteBuffer (kernels: %s), best of 9, interleaved%n",
                      TrainWatch.numericsTarget());
    System.out.printf("  anchor: Java loop (Float.isNaN || isInfinite)   %7.2f GB/s%n", gb / best[1]);
    System.out.printf("  trainwatch: TrainWatch.scan                     %7.2f GB/s  ratio %.1fx%n", gb / best[0],
                      best[1] / best[0]);
    if (sink[0] != 0) throw new AssertionError("all-finite data reported non-finite");
  }

  public static void main(String[] args) throws Exception {
    int steps = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    runOverhead(steps);
    scanThroughput();
  }
}
