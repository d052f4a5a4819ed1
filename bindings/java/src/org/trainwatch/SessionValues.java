package org.trainwatch;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * TF's {@code session.run(fetches)} for names (SessionRef.run(String…)): values read from a session
 * without running a step or any hook — an output published in the run in progress (after_run only),
 * else a registered variable, else "global_step" (its current value). Values are copies that stay
 * valid after the run and the session, as tf.Session.run returns.
 */
final class SessionValues {
  private SessionValues() {}

  static Tensor value(SessionRef session, String name) {
    if (name == null) throw new NullPointerException("a fetch name is null");
    if (name.isEmpty()) throw new TrainWatchException.InvalidArgument("a fetch name must not be empty");
    try {
      return copy(session.output(name));
    } catch (TrainWatchException.NotFound | TrainWatchException.FailedPrecondition notAnOutput) {
      // not published in this run, or no run in progress: a variable or the global step
    }
    try {
      return copy(session.variable(name));
    } catch (TrainWatchException.NotFound notAVariable) {
      // the global step, or nothing
    }
    if (name.equals("global_step")) {
      Tensor step = Tensor.allocate("global_step", DType.INT64);
      step.asByteBuffer().putLong(0, session.globalStep());
      return step;
    }
    throw new TrainWatchException.NotFound("'" + name + "' is neither a registered variable, nor an output published "
                                           + "in the run in progress, nor 'global_step'");
  }

  static List<Tensor> values(SessionRef session, List<String> names) {
    if (names == null) throw new NullPointerException("the list of fetch names is null");
    List<Tensor> out = new ArrayList<>(names.size());
    for (String name : names) out.add(value(session, name));
    return out;
  }

  static Map<String, Tensor> values(SessionRef session, Map<String, String> names) {
    if (names == null) throw new NullPointerException("the map of fetch names is null");
    Map<String, Tensor> out = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : names.entrySet()) out.put(e.getKey(), value(session, e.getValue()));
    return out;
  }

  /** A view's bytes in a direct buffer of its own, with the same shape and strides. */
  private static Tensor copy(Tensor view) {
    java.nio.ByteBuffer source = view.asByteBuffer();
    java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocateDirect(source.remaining()).order(source.order());
    bytes.put(source).flip();
    long[] strides = new long[view.strides().size()];
    for (int i = 0; i < strides.length; i++) strides[i] = view.strides().get(i);
    return Tensor.of(view.name(), bytes, view.dtype(), view.shapeArray(), strides);
  }
}
