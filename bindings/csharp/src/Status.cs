namespace TrainWatch {

/// <summary>A trainwatch status code (tw_status): 0–16 are TensorFlow's canonical codes.</summary>
public enum Status {
  Ok = 0,
  Cancelled = 1,
  Unknown = 2,
  InvalidArgument = 3,
  DeadlineExceeded = 4,
  NotFound = 5,
  AlreadyExists = 6,
  PermissionDenied = 7,
  ResourceExhausted = 8,
  FailedPrecondition = 9,
  /// <summary>Preemption: a monitored session recovers from it.</summary>
  Aborted = 10,
  /// <summary>End of input: a clean end of training.</summary>
  OutOfRange = 11,
  Unimplemented = 12,
  Internal = 13,
  /// <summary>Transient unavailability: a monitored session recovers from it.</summary>
  Unavailable = 14,
  DataLoss = 15,
  Unauthenticated = 16,
  /// <summary>A watched value was NaN or Inf (TF's NanLossDuringTrainingError).</summary>
  NanLoss = 100,
  IO = 101,
  /// <summary>The step asked to stop (StepContext.RequestStop): a clean end.</summary>
  StopIteration = 102,
  /// <summary>A callback failed with an exception that is not a TrainWatchException.</summary>
  CallbackFailed = 103,
}

public static class StatusExtensions {
  /// <summary>The library's spelling of the status ("TW_NAN_LOSS"), as the parity trace writes it.</summary>
  public static string Name(this Status status) {
    return Native.native.status_name((int)status);
  }
}

}  // namespace TrainWatch
