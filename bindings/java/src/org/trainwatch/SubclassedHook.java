package org.trainwatch;

import java.util.ArrayList;
import java.util.List;

/**
 * How a Java subclass of a built-in hook runs (TF's {@code class MyHook(tf.train.NanTensorHook)}): when a
 * session takes the hook, what its class overrides — TF's callbacks and the extension points
 * (logTensors, logAndRecord, save) — is found by reflection, and the session gets this wrapper (a
 * director of the facade's WrappedHook) whose overridden methods call the Java ones; the rest stays
 * the built-in's, run natively. {@code super.afterRun(ctx)} in the subclass runs the built-in's
 * through the wrapper's super calls ({@link HookHandle#superCalls}), not calling it skips it. A
 * subclass that overrides nothing is given to the session as it is: no Java call while it runs.
 */
final class SubclassedHook extends WrappedHook {
  /** An overridable method: the class declaring the built-in's, its name, parameters and mask bit. */
  private static final class Overridable {
    final Class<?> declarer;
    final String name;
    final Class<?>[] parameters;
    final int bit;

    Overridable(Class<?> declarer, String name, int bit, Class<?>... parameters) {
      this.declarer = declarer;
      this.name = name;
      this.bit = bit;
      this.parameters = parameters;
    }
  }

  // TF's order.
  private static final Overridable[] METHODS = {
    new Overridable(HookHandle.class, "begin", Overrides.OVERRIDES_BEGIN, SessionRef.class),
    new Overridable(HookHandle.class, "afterCreateSession", Overrides.OVERRIDES_AFTER_CREATE_SESSION, SessionRef.class),
    new Overridable(HookHandle.class, "beforeRun", Overrides.OVERRIDES_BEFORE_RUN, RunContext.class),
    new Overridable(HookHandle.class, "afterRun", Overrides.OVERRIDES_AFTER_RUN, RunContext.class),
    new Overridable(HookHandle.class, "end", Overrides.OVERRIDES_END, SessionRef.class),
    new Overridable(HookHandle.class, "onError", Overrides.OVERRIDES_ON_ERROR, SessionRef.class, int.class),
    new Overridable(LoggingTensorHook.class, "logTensors", Overrides.OVERRIDES_LOG_TENSORS, List.class),
    new Overridable(StepCounterHook.class, "logAndRecord", Overrides.OVERRIDES_LOG_AND_RECORD, long.class, double.class,
                    long.class),
    new Overridable(CheckpointSaverHook.class, "save", Overrides.OVERRIDES_SAVE, SessionRef.class, long.class),
  };

  private final HookHandle hook;

  private SubclassedHook(HookHandle hook, int overridden) {
    super(hook, overridden);
    this.hook = hook;
  }

  /** What a session runs for {@code hook}: the hook itself, or a wrapper calling its overrides. */
  static HookHandle forSession(HookHandle hook) {
    if (hook instanceof SessionRunHook || hook instanceof WrappedHook) return hook;
    int overridden = 0;
    for (Overridable m : METHODS) {
      if (overrides(hook, m)) overridden |= m.bit;
    }
    return overridden == 0 ? hook : new SubclassedHook(hook, overridden);
  }

  /** The names of what {@code hook}'s class overrides, in TF's order. */
  static List<String> overridden(HookHandle hook) {
    List<String> names = new ArrayList<>();
    for (Overridable m : METHODS) {
      if (overrides(hook, m)) names.add(m.name);
    }
    return names;
  }

  /** True when a class below the built-in's declarer declares the method: the subclass overrides it. */
  private static boolean overrides(HookHandle hook, Overridable m) {
    if (hook instanceof SessionRunHook || !m.declarer.isInstance(hook)) return false;
    for (Class<?> c = hook.getClass(); c != m.declarer; c = c.getSuperclass()) {
      try {
        c.getDeclaredMethod(m.name, m.parameters);
        return true;
      } catch (NoSuchMethodException e) {
        // Not declared here: look in the superclass.
      }
    }
    return false;
  }

  @Override
  public void begin(SessionRef session) {
    hook.begin(session);
  }

  @Override
  public void afterCreateSession(SessionRef session) {
    hook.afterCreateSession(session);
  }

  @Override
  public void beforeRun(RunContext ctx) {
    hook.beforeRun(ctx);
  }

  @Override
  public void afterRun(RunContext ctx) {
    hook.afterRun(ctx);
  }

  @Override
  public void end(SessionRef session) {
    hook.end(session);
  }

  @Override
  public void onError(SessionRef session, int error) {
    hook.onError(session, error);
  }

  @Override
  public void logTensors(TensorVector values) {
    ((LoggingTensorHook) hook).logTensors(values);
  }

  @Override
  public void logAndRecord(long elapsedSteps, double elapsedTime, long globalStep) {
    ((StepCounterHook) hook).logAndRecord(elapsedSteps, elapsedTime, globalStep);
  }

  @Override
  public boolean save(SessionRef session, long step) {
    return ((CheckpointSaverHook) hook).save(session, step);
  }
}
