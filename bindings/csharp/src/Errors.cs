using System;

namespace TrainWatch {

/// <summary>
/// A failing trainwatch status, as TensorFlow's tf.errors.OpError. Every failing call throws the class of
/// its status (OutOfRangeException for Status.OutOfRange, …). The other direction works too: a step or
/// hook that throws AbortedException makes the run recoverable, OutOfRangeException ends the input
/// cleanly; any other exception fails the run with Status.CallbackFailed and comes out of the call
/// unchanged.
/// </summary>
public class TrainWatchException : Exception {
  public TrainWatchException(Status code, string message) : base(message) { Code = code; }
  public TrainWatchException(Status code, string message, Exception inner) : base(message, inner) { Code = code; }

  public Status Code { get; private set; }
  /// <summary>The library's spelling of the code ("TW_ABORTED").</summary>
  public string StatusName { get { return Code.Name(); } }

  /// <summary>The exception a failing status throws.</summary>
  public static TrainWatchException FromStatus(Status code, string message) {
    switch (code) {
      case Status.Cancelled: return new CancelledException(message);
      case Status.Unknown: return new UnknownException(message);
      case Status.InvalidArgument:
        return message.Contains(FeedConflictException.Marker) ? new FeedConflictException(message)
                                                              : new InvalidArgumentException(message);
      case Status.DeadlineExceeded: return new DeadlineExceededException(message);
      case Status.NotFound: return new NotFoundException(message);
      case Status.AlreadyExists: return new AlreadyExistsException(message);
      case Status.PermissionDenied: return new PermissionDeniedException(message);
      case Status.ResourceExhausted: return new ResourceExhaustedException(message);
      case Status.FailedPrecondition: return new FailedPreconditionException(message);
      case Status.Aborted: return new AbortedException(message);
      case Status.OutOfRange: return new OutOfRangeException(message);
      case Status.Unimplemented: return new UnimplementedException(message);
      case Status.Internal: return new InternalException(message);
      case Status.Unavailable: return new UnavailableException(message);
      case Status.DataLoss: return new DataLossException(message);
      case Status.Unauthenticated: return new UnauthenticatedException(message);
      case Status.NanLoss: return new NanLossDuringTrainingException(message);
      case Status.IO: return new IOFailureException(message);
      case Status.StopIteration: return new StopIterationException(message);
      case Status.CallbackFailed: return new CallbackFailedException(message);
      default: return new TrainWatchException(code, message);
    }
  }
}

public class CancelledException : TrainWatchException {
  public CancelledException(string message) : base(Status.Cancelled, message) {}
}
public class UnknownException : TrainWatchException {
  public UnknownException(string message) : base(Status.Unknown, message) {}
}
/// <summary>A malformed argument, or a NaN/Inf found by check_numerics.</summary>
public class InvalidArgumentException : TrainWatchException {
  public InvalidArgumentException(string message) : base(Status.InvalidArgument, message) {}
}
/// <summary>Two hooks, or a hook and the caller, fed the same name (TF's RuntimeError, H22/H23).</summary>
public class FeedConflictException : InvalidArgumentException {
  internal const string Marker = "Same tensor is fed by";
  public FeedConflictException(string message) : base(message) {}
}
/// <summary>A bounded wait ran out (a worker waiting for the chief).</summary>
public class DeadlineExceededException : TrainWatchException {
  public DeadlineExceededException(string message) : base(Status.DeadlineExceeded, message) {}
}
/// <summary>A name or file does not exist.</summary>
public class NotFoundException : TrainWatchException {
  public NotFoundException(string message) : base(Status.NotFound, message) {}
}
public class AlreadyExistsException : TrainWatchException {
  public AlreadyExistsException(string message) : base(Status.AlreadyExists, message) {}
}
public class PermissionDeniedException : TrainWatchException {
  public PermissionDeniedException(string message) : base(Status.PermissionDenied, message) {}
}
/// <summary>Out of memory or disk space.</summary>
public class ResourceExhaustedException : TrainWatchException {
  public ResourceExhaustedException(string message) : base(Status.ResourceExhausted, message) {}
}
/// <summary>The object is in the wrong state (closed, stopped, failed).</summary>
public class FailedPreconditionException : TrainWatchException {
  public FailedPreconditionException(string message) : base(Status.FailedPrecondition, message) {}
}
/// <summary>Preemption: a monitored session recovers from it.</summary>
public class AbortedException : TrainWatchException {
  public AbortedException(string message) : base(Status.Aborted, message) {}
}
/// <summary>End of input: a clean end.</summary>
public class OutOfRangeException : TrainWatchException {
  public OutOfRangeException(string message) : base(Status.OutOfRange, message) {}
}
public class UnimplementedException : TrainWatchException {
  public UnimplementedException(string message) : base(Status.Unimplemented, message) {}
}
/// <summary>A bug in trainwatch; please report it.</summary>
public class InternalException : TrainWatchException {
  public InternalException(string message) : base(Status.Internal, message) {}
}
/// <summary>Transient unavailability: a monitored session recovers from it.</summary>
public class UnavailableException : TrainWatchException {
  public UnavailableException(string message) : base(Status.Unavailable, message) {}
}
/// <summary>Corrupt or truncated data.</summary>
public class DataLossException : TrainWatchException {
  public DataLossException(string message) : base(Status.DataLoss, message) {}
}
public class UnauthenticatedException : TrainWatchException {
  public UnauthenticatedException(string message) : base(Status.Unauthenticated, message) {}
}
/// <summary>A watched value was NaN (or Inf): TF's NanTensorHook error.</summary>
public class NanLossDuringTrainingException : TrainWatchException {
  public NanLossDuringTrainingException(string message) : base(Status.NanLoss, message) {}
}
/// <summary>An operating-system I/O call failed.</summary>
public class IOFailureException : TrainWatchException {
  public IOFailureException(string message) : base(Status.IO, message) {}
}
/// <summary>The step asked to stop (TF's StopIteration from StepContext.request_stop): a clean end.</summary>
public class StopIterationException : TrainWatchException {
  public StopIterationException(string message) : base(Status.StopIteration, message) {}
}
/// <summary>A callback failed without an exception left to rethrow (one run on a background thread).</summary>
public class CallbackFailedException : TrainWatchException {
  public CallbackFailedException(string message) : base(Status.CallbackFailed, message) {}
}

}  // namespace TrainWatch
