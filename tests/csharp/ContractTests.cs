using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;

namespace TrainWatch.Tests {

/// <summary>The public enums and exception classes against the C header, and bad input as exceptions.</summary>
static class ContractTests {
  static readonly Assembly Library = typeof(Session).Assembly;

  /// <summary>Header name → value of the SWIG layer's enum `nativeEnum` (internal to TrainWatch.dll).</summary>
  static Dictionary<string, long> HeaderEnum(string nativeEnum, string prefix) {
    Type type = Library.GetType("TrainWatch.Native." + nativeEnum, true);
    return Enum.GetNames(type).ToDictionary(name => Normalized(name, prefix),
                                            name => Convert.ToInt64(Enum.Parse(type, name)));
  }

  static string Normalized(string name, string prefix) {
    if (name.StartsWith(prefix)) name = name.Substring(prefix.Length);
    return name.Replace("_", "").ToUpperInvariant();
  }

  static void SameMembers(Type csharp, Dictionary<string, long> header) {
    foreach (string name in Enum.GetNames(csharp)) {
      string key = name.ToUpperInvariant();
      Check.True(header.ContainsKey(key), csharp.Name + "." + name + " is in the header");
      Check.Equal(header[key], Convert.ToInt64(Enum.Parse(csharp, name)), csharp.Name + "." + name);
    }
    Check.Equal(header.Count, Enum.GetNames(csharp).Length, csharp.Name + ": every header value has a member");
  }

  [Test]
  public static void OptionDTypeNanActionLogLevelEventAndProgressEnumsMatchTheHeader() {
    SameMembers(typeof(Option), HeaderEnum("tw_option", "TW_OPT_"));
    SameMembers(typeof(OptionState), HeaderEnum("tw_option_state", "TW_OPTION_"));
    SameMembers(typeof(NanAction), HeaderEnum("tw_nan_action", "TW_NAN_ACTION_"));
    SameMembers(typeof(LogLevel), HeaderEnum("tw_log_level", "TW_LOG_"));
    var dtypes = HeaderEnum("tw_dtype", "TW_");
    dtypes["INVALID"] = dtypes["DTYPEINVALID"];
    dtypes.Remove("DTYPEINVALID");
    SameMembers(typeof(DType), dtypes);
    SameMembers(typeof(EventKind), HeaderEnum("tw_event_kind", "TW_EVENT_"));
    SameMembers(typeof(ProgressKind), HeaderEnum("tw_progress_kind", "TW_PROGRESS_"));
    var logStatuses = HeaderEnum("tw_session_log_status", "TW_SESSION_LOG_");
    logStatuses["UNSPECIFIED"] = logStatuses["STATUSUNSPECIFIED"];
    logStatuses.Remove("STATUSUNSPECIFIED");
    SameMembers(typeof(SessionLogStatus), logStatuses);
    Check.Equal("bfloat16", DType.BFloat16.Name(), "dtype names come from the library");
    Check.Equal(4, DType.Float32.Size(), "dtype sizes come from the library");
  }

  [Test]
  public static void EveryLibraryStatusIsAStatusMemberWithItsName() {
    for (int code = 0; code < 1000; ++code) {
      string name = ((Status)code).Name();
      if (name == "TW_UNKNOWN_STATUS") continue;
      Check.True(Enum.IsDefined(typeof(Status), code), name + " (" + code + ") has a Status member");
      Check.Equal(name.Substring(3).Replace("_", ""), ((Status)code).ToString().ToUpperInvariant(), "member of " + name);
    }
    Check.Equal("TW_NAN_LOSS", Status.NanLoss.Name(), "Status.NanLoss");
  }

  [Test]
  public static void EachStatusThrowsItsTensorFlowClass() {
    var expected = new Dictionary<Status, Type> {
      { Status.Cancelled, typeof(CancelledException) }, { Status.Unknown, typeof(UnknownException) },
      { Status.InvalidArgument, typeof(InvalidArgumentException) },
      { Status.DeadlineExceeded, typeof(DeadlineExceededException) }, { Status.NotFound, typeof(NotFoundException) },
      { Status.AlreadyExists, typeof(AlreadyExistsException) }, { Status.PermissionDenied, typeof(PermissionDeniedException) },
      { Status.ResourceExhausted, typeof(ResourceExhaustedException) },
      { Status.FailedPrecondition, typeof(FailedPreconditionException) }, { Status.Aborted, typeof(AbortedException) },
      { Status.OutOfRange, typeof(OutOfRangeException) }, { Status.Unimplemented, typeof(UnimplementedException) },
      { Status.Internal, typeof(InternalException) }, { Status.Unavailable, typeof(UnavailableException) },
      { Status.DataLoss, typeof(DataLossException) }, { Status.Unauthenticated, typeof(UnauthenticatedException) },
      { Status.NanLoss, typeof(NanLossDuringTrainingException) }, { Status.IO, typeof(IOFailureException) },
      { Status.StopIteration, typeof(StopIterationException) }, { Status.CallbackFailed, typeof(CallbackFailedException) },
    };
    foreach (Status code in Enum.GetValues(typeof(Status))) {
      if (code == Status.Ok) continue;
      Check.True(expected.ContainsKey(code), code + " has an exception class");
      TrainWatchException e = TrainWatchException.FromStatus(code, "text");
      Check.Equal(expected[code], e.GetType(), code.ToString());
      Check.Equal(code, e.Code, code + ": Code");
      Check.Equal("text", e.Message, code + ": Message");
    }
    Check.True(TrainWatchException.FromStatus(Status.InvalidArgument, "Same tensor is fed by two hooks.") is FeedConflictException,
               "a feed conflict is a FeedConflictException (H22)");
  }

  [Test]
  public static void ALibraryStatusBecomesItsClassWithTheMessage() {
    var log = new List<string>();
    using (var hook = new Recorder("r", log) { Fetch = "nope" })
    using (Session session = Session.Monitored(null, hook)) {
      var e = Check.Throws<NotFoundException>(() => session.Run(Steps.Loss(1)), "fetching a name nobody publishes");
      Check.Contains("nope", e.Message, "the message names the fetch");
      Check.Equal("TW_NOT_FOUND", e.StatusName, "StatusName");
    }
  }

  [Test]
  public static void BadOptionsAreInvalidArgumentNeverACrash() {
    using (var options = new Options()) {
      Check.Throws<InvalidArgumentException>(() => options.SetString(Option.CheckpointEveryNSteps, "2"), "a string for an int64 key");
      Check.Throws<InvalidArgumentException>(() => options.SetInt64((Option)4242, 1), "an unknown key");
      Check.Throws<InvalidArgumentException>(() => options.SetString(Option.CheckpointDir, null), "a null string");
      Check.Throws<InvalidArgumentException>(() => options.AddVariable(null), "a null variable");
      options.SetInt64(Option.CheckpointEveryNSteps, 2);
      Check.Equal(2L, options.GetInt64(Option.CheckpointEveryNSteps), "an int64 option reads back");
      Check.Equal(OptionState.Set, options.State(Option.CheckpointEveryNSteps), "its state");
      options.SetNone(Option.CheckpointEveryNSteps);
      Check.Equal(OptionState.None, options.State(Option.CheckpointEveryNSteps), "TF's explicit None");
    }
  }

  [Test]
  public static void StopAtStepHookNeedsExactlyOneOfItsArgumentsB11() {
    Check.Contains("One of num_steps or last_step must be specified.",
                   Check.Throws<InvalidArgumentException>(() => new StopAtStepHook(), "neither").Message, "neither");
    Check.Contains("Only one of num_steps or last_step can be specified.",
                   Check.Throws<InvalidArgumentException>(() => new StopAtStepHook(1, 2), "both").Message, "both");
  }

  [Test]
  public static void StopAtStepHookNumStepsStopsAfterThatManyRunsB13B14() {
    using (var stop = new StopAtStepHook(numSteps: 3))
    using (Session session = Session.Monitored(null, stop)) {
      int runs = 0;
      while (!session.ShouldStop) {
        session.Run(Steps.Nothing);
        ++runs;
      }
      Check.Equal(3, runs, "runs");
      Check.Equal(3L, session.GlobalStep, "global step");
      Check.Contains("Run called even after should_stop requested.",
                     Check.Throws<FailedPreconditionException>(() => session.Run(Steps.Nothing), "run after stop").Message,
                     "H29");
      session.Close();
    }
  }

  [Test]
  public static void NullArgumentsAreInvalidArgument() {
    Check.Throws<InvalidArgumentException>(() => Session.Monitored(null, (Hook)null), "a null hook");
    Check.Throws<InvalidArgumentException>(() => Tensor.FromArray<float>("x", null), "a null array");
    Check.Throws<InvalidArgumentException>(() => Tensor.FromArray("x", new float[3], 2, 2), "a shape that does not fit");
    using (Session session = Session.Monitored(null)) {
      Check.Throws<InvalidArgumentException>(() => session.Run(null), "a null step");
      Check.Throws<InvalidArgumentException>(() => session.Run(Steps.Nothing, (Tensor)null), "a null feed");
      Check.Throws<NotFoundException>(() => session.Variable("nope"), "an unknown variable");
    }
  }
}

}  // namespace TrainWatch.Tests
