package org.trainwatch;

/**
 * A failing trainwatch status, with one subclass per status code named after TensorFlow's error
 * classes: {@code catch (TrainWatchException.OutOfRange e)} is TF's {@code except OutOfRangeError}.
 *
 * <p>Every failing library call throws the subclass of its status. The other direction works too: a
 * step function or hook that throws {@link Aborted} or {@link Unavailable} makes the run recoverable
 * (a MonitoredSession recreates the session and retries), {@link OutOfRange} or {@link StopIteration}
 * ends the input cleanly. Any other exception a callback throws comes out of the session call that
 * ran the callback as the same object.
 */
public class TrainWatchException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int code;

  public TrainWatchException(int code, String message) {
    super(message);
    this.code = code;
  }

  /** The status code ({@code TrainWatch.TW_ABORTED}, …). */
  public int code() {
    return code;
  }

  /** The status code's C name ({@code "TW_ABORTED"}, …). */
  public String statusName() {
    return TrainWatch.statusName(code);
  }

  /** The exception a failing status throws in Java (what the native library calls). */
  public static TrainWatchException of(int code, String message) {
    switch (code) {
      case TrainWatch.TW_CANCELLED: return new Cancelled(message);
      case TrainWatch.TW_UNKNOWN: return new Unknown(message);
      case TrainWatch.TW_INVALID_ARGUMENT:
        return message.contains(FEED_CONFLICT) ? new FeedConflict(message) : new InvalidArgument(message);
      case TrainWatch.TW_DEADLINE_EXCEEDED: return new DeadlineExceeded(message);
      case TrainWatch.TW_NOT_FOUND: return new NotFound(message);
      case TrainWatch.TW_ALREADY_EXISTS: return new AlreadyExists(message);
      case TrainWatch.TW_PERMISSION_DENIED: return new PermissionDenied(message);
      case TrainWatch.TW_RESOURCE_EXHAUSTED: return new ResourceExhausted(message);
      case TrainWatch.TW_FAILED_PRECONDITION: return new FailedPrecondition(message);
      case TrainWatch.TW_ABORTED: return new Aborted(message);
      case TrainWatch.TW_OUT_OF_RANGE: return new OutOfRange(message);
      case TrainWatch.TW_UNIMPLEMENTED: return new Unimplemented(message);
      case TrainWatch.TW_INTERNAL: return new Internal(message);
      case TrainWatch.TW_UNAVAILABLE: return new Unavailable(message);
      case TrainWatch.TW_DATA_LOSS: return new DataLoss(message);
      case TrainWatch.TW_UNAUTHENTICATED: return new Unauthenticated(message);
      case TrainWatch.TW_NAN_LOSS: return new NanLossDuringTraining(message);
      case TrainWatch.TW_IO: return new IOFailure(message);
      case TrainWatch.TW_STOP_ITERATION: return new StopIteration(message);
      case TrainWatch.TW_CALLBACK_FAILED: return new CallbackFailed(message);
      default: return new TrainWatchException(code, message);
    }
  }

  private static final String FEED_CONFLICT = "Same tensor is fed by";

  /** The operation was cancelled. */
  public static class Cancelled extends TrainWatchException { public Cancelled(String m) { super(TrainWatch.TW_CANCELLED, m); } }
  /** An unknown error. */
  public static class Unknown extends TrainWatchException { public Unknown(String m) { super(TrainWatch.TW_UNKNOWN, m); } }
  /** A malformed argument, or a NaN/Inf found by checkNumerics. */
  public static class InvalidArgument extends TrainWatchException {
    public InvalidArgument(String m) { super(TrainWatch.TW_INVALID_ARGUMENT, m); }
  }
  /** Two hooks, or a hook and the caller, fed the same name (TF's RuntimeError, H22/H23). */
  public static class FeedConflict extends InvalidArgument { public FeedConflict(String m) { super(m); } }
  /** A bounded wait ran out (a worker waiting for the chief). */
  public static class DeadlineExceeded extends TrainWatchException { public DeadlineExceeded(String m) { super(TrainWatch.TW_DEADLINE_EXCEEDED, m); } }
  /** A name or file does not exist. */
  public static class NotFound extends TrainWatchException { public NotFound(String m) { super(TrainWatch.TW_NOT_FOUND, m); } }
  /** The name is taken. */
  public static class AlreadyExists extends TrainWatchException { public AlreadyExists(String m) { super(TrainWatch.TW_ALREADY_EXISTS, m); } }
  /** Not allowed. */
  public static class PermissionDenied extends TrainWatchException { public PermissionDenied(String m) { super(TrainWatch.TW_PERMISSION_DENIED, m); } }
  /** Out of memory or disk space. */
  public static class ResourceExhausted extends TrainWatchException { public ResourceExhausted(String m) { super(TrainWatch.TW_RESOURCE_EXHAUSTED, m); } }
  /** The object is in the wrong state (closed, stopped, failed). */
  public static class FailedPrecondition extends TrainWatchException { public FailedPrecondition(String m) { super(TrainWatch.TW_FAILED_PRECONDITION, m); } }
  /** Preemption: a MonitoredSession recovers from it. */
  public static class Aborted extends TrainWatchException { public Aborted(String m) { super(TrainWatch.TW_ABORTED, m); } }
  /** End of input: a clean end. */
  public static class OutOfRange extends TrainWatchException { public OutOfRange(String m) { super(TrainWatch.TW_OUT_OF_RANGE, m); } }
  /** Not implemented. */
  public static class Unimplemented extends TrainWatchException { public Unimplemented(String m) { super(TrainWatch.TW_UNIMPLEMENTED, m); } }
  /** A bug in trainwatch; please report it. */
  public static class Internal extends TrainWatchException { public Internal(String m) { super(TrainWatch.TW_INTERNAL, m); } }
  /** Transient unavailability: a MonitoredSession recovers from it. */
  public static class Unavailable extends TrainWatchException { public Unavailable(String m) { super(TrainWatch.TW_UNAVAILABLE, m); } }
  /** Corrupt or truncated data. */
  public static class DataLoss extends TrainWatchException { public DataLoss(String m) { super(TrainWatch.TW_DATA_LOSS, m); } }
  /** Not authenticated. */
  public static class Unauthenticated extends TrainWatchException { public Unauthenticated(String m) { super(TrainWatch.TW_UNAUTHENTICATED, m); } }
  /** A watched value was NaN (or Inf): TF's NanLossDuringTrainingError. */
  public static class NanLossDuringTraining extends TrainWatchException { public NanLossDuringTraining(String m) { super(TrainWatch.TW_NAN_LOSS, m); } }
  /** An operating-system I/O call failed. */
  public static class IOFailure extends TrainWatchException { public IOFailure(String m) { super(TrainWatch.TW_IO, m); } }
  /** The step asked to stop (StepContext.requestStop): a clean end. */
  public static class StopIteration extends TrainWatchException { public StopIteration(String m) { super(TrainWatch.TW_STOP_ITERATION, m); } }
  /** A callback failed without a Java exception to rethrow. */
  public static class CallbackFailed extends TrainWatchException { public CallbackFailed(String m) { super(TrainWatch.TW_CALLBACK_FAILED, m); } }
}
