package org.trainwatch;

import java.util.ArrayList;
import java.util.List;

/**
 * How a Java subclass of a built-in hook runs (TF's {@code class MyHook(tf.train.NanTensorHook)}): when a
 * session takes the hook, the callbacks its class overrides are found by reflection, and the session
 * gets a wrapper hook (a director of the facade's WrappedHook) whose overridden slots call the Java
 * methods; the others stay the built-in's, run natively. {@code super.afterRun(ctx)} in the subclass
 * runs the built-in's callback ({@link HookHandle#afterRun}), not calling it skips it. A subclass that
 * overrides nothing is given to the session as it is: no Java call per run.
 */
final class SubclassedHook extends WrappedHook {
  /** A callback of TF's SessionRunHook protocol: its Java name, parameters and wrapper slot. */
  private static final class Callback {
    final String name;
    final Class<?>[] parameters;
    final long slot;

    Callback(String name, long slot, Class<?>... parameters) {
      this.name = name;
      this.parameters = parameters;
      this.slot = slot;
    }
  }

  private static final Callback[] CALLBACKS = {
    new Callback("begin", WrappedHook.Slot.BEGIN, SessionRef.class),
    new Callback("afterCreateSession", WrappedHook.Slot.AFTER_CREATE_SESSION, SessionRef.class),
    new Callback("beforeRun", WrappedHook.Slot.BEFORE_RUN, RunContext.class),
    new Callback("afterRun", WrappedHook.Slot.AFTER_RUN, RunContext.class),
    new Callback("end", WrappedHook.Slot.END, SessionRef.class),
    new Callback("onError", WrappedHook.Slot.ON_ERROR, SessionRef.class, int.class),
  };

  private final HookHandle hook;

  private SubclassedHook(HookHandle hook, long overridden) {
    super(hook, overridden);
    this.hook = hook;
  }

  /** What a session runs for {@code hook}: the hook itself, or a wrapper calling its overrides. */
  static HookHandle forSession(HookHandle hook) {
    if (hook instanceof SessionRunHook || hook instanceof WrappedHook) return hook;
    hook.installExtensionPoints();
    long overridden = 0;
    for (Callback c : CALLBACKS) {
      if (overrides(hook.getClass(), HookHandle.class, c.name, c.parameters)) overridden |= c.slot;
    }
    return overridden == 0 ? hook : new SubclassedHook(hook, overridden);
  }

  /** The names of the SessionRunHook callbacks {@code hook}'s class overrides, in TF's order. */
  static List<String> overriddenCallbacks(HookHandle hook) {
    List<String> names = new ArrayList<>();
    for (Callback c : CALLBACKS) {
      if (overrides(hook.getClass(), HookHandle.class, c.name, c.parameters)) names.add(c.name);
    }
    return names;
  }

  /** True when a class below {@code base} (up to {@code type}) declares the method: the subclass overrides it. */
  static boolean overrides(Class<?> type, Class<?> base, String name, Class<?>... parameters) {
    for (Class<?> c = type; c != null && c != base; c = c.getSuperclass()) {
      try {
        c.getDeclaredMethod(name, parameters);
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
}
