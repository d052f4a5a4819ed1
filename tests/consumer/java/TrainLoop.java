import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import org.trainwatch.DType;
import org.trainwatch.NanTensorHook;
import org.trainwatch.Option;
import org.trainwatch.Options;
import org.trainwatch.Session;
import org.trainwatch.StopAtStepHook;
import org.trainwatch.Tensor;
import org.trainwatch.TrainWatch;
import org.trainwatch.TrainWatchException;

/**
 * A user's training loop, built outside the repository against the released jar alone: a
 * MonitoredTrainingSession with StopAtStepHook and a NanTensorHook on the published loss, checkpointing
 * every 25 steps into DIR, fitting w to 3 by gradient descent.
 *
 * usage: TrainLoop DIR LAST_STEP EXPECTED_START [NAN_AT_STEP]
 * Exits 0 when the session started at EXPECTED_START (a resumed run restores w and the global step),
 * stopped at LAST_STEP and its latest checkpoint is model.ckpt-LAST_STEP; with NAN_AT_STEP the loss of
 * that step is NaN and the run must fail with NanLossDuringTraining instead.
 */
public class TrainLoop {
  static void check(boolean ok, String what) {
    if (!ok) throw new AssertionError(what);
  }

  /** The files the process mapped libtrainwatch and the libraries it bundles from (/proc/self/maps). */
  static Set<String> loadedLibraries() throws IOException {
    Set<String> paths = new TreeSet<>();
    for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
      int at = line.indexOf('/');
      if (at >= 0 && line.substring(at).matches(".*/lib(trainwatch|hwy|zstd)[^/]*\\.so[^/]*")) paths.add(line.substring(at));
    }
    return paths;
  }

  public static void main(String[] args) throws IOException {
    String dir = args[0];
    long lastStep = Long.parseLong(args[1]), expectedStart = Long.parseLong(args[2]);
    long nanAt = args.length > 3 ? Long.parseLong(args[3]) : -1;
    Tensor w = Tensor.allocate("w", DType.FLOAT32, 4);
    Options options = new Options();
    options.addVariable(w);
    options.setString(Option.CHECKPOINT_DIR, dir);
    options.setInt64(Option.CHECKPOINT_EVERY_N_STEPS, 25);
    NanTensorHook nan = new NanTensorHook("loss", true);
    StopAtStepHook stop = new StopAtStepHook(TrainWatch.UNSET, lastStep);
    Session session = Session.monitoredTraining(options, Arrays.asList(nan, stop), null);
    for (String path : loadedLibraries()) System.out.println("loaded: " + path);
    long start = session.globalStep();
    float restored = w.toFloatArray()[0];
    check(start == expectedStart, "started at step " + start + ", expected " + expectedStart);
    check((start == 0) == (restored == 0), "w=" + restored + " at step " + start + ": not restored with it");
    long runs = 0;
    try {
      while (!session.shouldStop()) {
        session.run(ctx -> {
          FloatBuffer p = w.asByteBuffer().asFloatBuffer();
          float loss = 0;
          for (int i = 0; i < 4; i++) {
            loss += (p.get(i) - 3) * (p.get(i) - 3);
            p.put(i, p.get(i) - 0.05f * 2 * (p.get(i) - 3));
          }
          ctx.publishCopy(Tensor.scalar("loss", ctx.globalStep() + 1 == nanAt ? Float.NaN : loss));
        });
        runs++;
      }
    } catch (TrainWatchException.NanLossDuringTraining e) {
      check(nanAt > 0 && runs == nanAt - 1, "unexpected after " + runs + " runs: " + e);
      session.close();
      System.out.println("NaN loss stopped training at step " + nanAt + ": " + e.getMessage());
      return;
    }
    check(nanAt < 0, "the NaN loss at step " + nanAt + " did not fail the run");
    check(session.globalStep() == lastStep, "stopped at step " + session.globalStep());
    check(runs == lastStep - start, runs + " runs from step " + start + " to " + lastStep);
    session.close();  // the final checkpoint
    String latest = Paths.get(TrainWatch.latestCheckpoint(dir)).getFileName().toString();
    check(latest.equals("model.ckpt-" + lastStep), "latest checkpoint " + latest);
    System.out.println("trained steps " + start + ".." + lastStep + ", w[0]=" + w.toFloatArray()[0] + ", " + latest);
  }
}
