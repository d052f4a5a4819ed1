namespace TrainWatch {

/// <summary>Session and hook option keys (tw_option). Each has one type: see include/trainwatch/session.h.</summary>
public enum Option {
  IsChief = 1,
  CheckpointDir = 2,
  MaxRecoveryAttempts = 3,
  RecoveryBackoffSecs = 4,
  RecoveryBackoffMaxSecs = 5,
  RecoveryWaitSecs = 6,
  MaxWaitSecs = 7,
  AutoIncrementGlobalStep = 8,
  InitialGlobalStep = 9,
  CheckNumerics = 10,
  MaxToKeep = 11,
  KeepCheckpointEveryNHours = 12,
  CheckpointEveryNSecs = 13,
  CheckpointEveryNSteps = 14,
  CheckpointBasename = 15,
  AsyncCheckpoint = 16,
  SummaryDir = 17,
  SummaryEveryNSteps = 18,
  SummaryEveryNSecs = 19,
  StepCountEveryNSteps = 20,
  DeferredCheckpointListeners = 21,
  CatchPreemptionSignals = 22,
  CheckpointRecycleFiles = 23,
  NanAction = 100,
  NanDetectInf = 101,
  NanEveryNSteps = 102,
  NanMaxRollbacks = 103,
  EveryNSteps = 200,
  EveryNSecs = 201,
  OutputDir = 202,
  LogAtEnd = 203,
  LogMaxElements = 204,
  SummaryHistograms = 205,
  WaitPollSecs = 206,
  WaitMaxSecs = 207,
  SummaryHistogramNames = 208,
  CollectiveTimeoutSecs = 300,
  VoteEveryNRuns = 301,
  RestoreViaBroadcast = 302,
}

/// <summary>Whether an option was left at its default, set to TF's None, or set (tw_option_state).</summary>
public enum OptionState {
  Default = 0,
  None = 1,
  Set = 2,
}

/// <summary>What a NanTensorHook does about a divergence (tw_nan_action, the Option.NanAction value).</summary>
public enum NanAction {
  /// <summary>Fail the run with NanLossDuringTrainingException (TF: fail_on_nan_loss=True).</summary>
  Fail = 0,
  /// <summary>Log a warning and request a stop (TF: fail_on_nan_loss=False).</summary>
  Stop = 1,
  /// <summary>Call the hook's NanCallback, which decides.</summary>
  Callback = 2,
  /// <summary>Restore the newest good checkpoint and go on.</summary>
  Rollback = 3,
}

/// <summary>Log levels (tw_log_level).</summary>
public enum LogLevel {
  Debug = 10,
  Info = 20,
  Warning = 30,
  Error = 40,
}

}  // namespace TrainWatch
