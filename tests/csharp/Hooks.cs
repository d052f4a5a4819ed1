using System;
using System.Collections.Generic;

namespace TrainWatch.Tests {

/// <summary>A test's own exception type: it must come out of the library unchanged.</summary>
sealed class Boom : Exception {
  public Boom(string message) : base(message) {}
}

/// <summary>Records its callbacks as "name:callback" and throws `error` from the one named `throwIn`.</summary>
sealed class Recorder : SessionRunHook {
  readonly string name;
  readonly List<string> log;
  public string ThrowIn;
  public Exception Error;
  public string Fetch;

  public Recorder(string name, List<string> log) : base(name) {
    this.name = name;
    this.log = log;
  }

  void Event(string callback) {
    log.Add(name + ":" + callback);
    if (callback == ThrowIn) throw Error;
  }

  public override void Begin(SessionRef session) { Event("begin"); }
  public override void AfterCreateSession(SessionRef session) { Event("after_create_session"); }

  public override void BeforeRun(RunContext context) {
    if (Fetch != null) context.RequestFetch(Fetch);
    Event("before_run");
  }

  public override void AfterRun(RunContext context) {
    if (Fetch != null) context.Result(Fetch);
    Event("after_run");
  }

  public override void End(SessionRef session) { Event("end"); }
  public override void OnError(SessionRef session, Status error) { Event("on_error " + error.Name()); }
}

static class Steps {
  /// <summary>A step that publishes the float32 scalar loss = `loss`.</summary>
  public static Action<StepContext> Loss(float loss) {
    return ctx => ctx.Publish("loss", loss);
  }

  public static void Nothing(StepContext ctx) {}
}

}  // namespace TrainWatch.Tests
