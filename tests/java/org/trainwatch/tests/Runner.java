package org.trainwatch.tests;

import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunListener;

/** Runs every test class with JUnit 4, printing "PASS name" / "FAIL name: why" per case and a final
 *  "N passed, N failed" line (tools/test adds them to the suite's totals); exits non-zero on failure.
 *  An ignored or assumption-skipped case counts as neither. */
public final class Runner {
  private static final Class<?>[] TESTS = {
    CheckpointTest.class, ExampleTest.class, ExceptionTest.class, HookTest.class, NumericsTest.class, ParityTest.class,
    ProgressTest.class, SeedProgramTest.class, SessionRunNamesTest.class, SessionTest.class, SubclassedHookTest.class,
    TensorTest.class,
  };

  public static void main(String[] args) {
    JUnitCore core = new JUnitCore();
    int[] counts = new int[2];
    core.addListener(new RunListener() {
      private boolean failed;

      @Override
      public void testStarted(Description d) {
        failed = false;
      }

      @Override
      public void testFailure(Failure f) {
        failed = true;
        System.out.println("FAIL " + name(f.getDescription()) + ": " + f.getException());
        f.getException().printStackTrace(System.out);
      }

      @Override
      public void testFinished(Description d) {
        if (!failed) System.out.println("PASS " + name(d));
        counts[failed ? 1 : 0]++;
      }
    });
    Result result = core.run(TESTS);
    int passed = counts[0] - result.getAssumptionFailureCount();
    System.out.println(passed + " passed, " + counts[1] + " failed");
    System.exit(counts[1] == 0 && result.getRunCount() > 0 ? 0 : 1);
  }

  private static String name(Description d) {
    return d.getTestClass().getSimpleName() + "." + d.getMethodName();
  }
}
