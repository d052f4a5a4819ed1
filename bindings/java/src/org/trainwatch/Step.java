package org.trainwatch;

/** A step function as a lambda: {@code session.run(ctx -> ctx.publish(loss), feeds)}. */
@FunctionalInterface
public interface Step {
  void run(StepContext ctx);

  /** The StepFunction (a SWIG director) that runs {@code step}. */
  static StepFunction function(Step step) {
    if (step == null) throw new NullPointerException("step is null");
    return new StepFunction() {
      @Override
      public void run(StepContext ctx) {
        step.run(ctx);
      }
    };
  }
}
