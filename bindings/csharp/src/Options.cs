using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// Session and hook options (tw_options): typed setters over Option keys. Each key has one type (see
/// include/trainwatch/session.h); a setter of another type throws InvalidArgumentException. Variables
/// added here are shared with every session created from these options, zero copy.
/// </summary>
public sealed class Options : IDisposable {
  readonly Native.Options native = new Native.Options();
  readonly List<Tensor> variables = new List<Tensor>();
  InitFunctionBridge initFunction;
  ReadyFunctionBridge readyFunction;
  bool disposed;

  internal Native.Options Checked {
    get {
      if (disposed) throw new ObjectDisposedException("Options");
      return native;
    }
  }

  /// <summary>The variables added so far: sessions keep them (and their arrays pinned) while they live.</summary>
  public IReadOnlyList<Tensor> Variables { get { return variables.AsReadOnly(); } }

  public Options SetInt64(Option key, long value) {
    Checked.SetInt64((int)key, value);
    return this;
  }

  public Options SetBool(Option key, bool value) { return SetInt64(key, value ? 1 : 0); }

  public Options SetDouble(Option key, double value) {
    Checked.SetDouble((int)key, value);
    return this;
  }

  public Options SetString(Option key, string value) {
    if (value == null) throw new InvalidArgumentException("option " + key + ": value is null (use SetNone)");
    Checked.SetString((int)key, value);
    return this;
  }

  /// <summary>TF's explicit None.</summary>
  public Options SetNone(Option key) {
    Checked.SetNone((int)key);
    return this;
  }

  public OptionState State(Option key) { return (OptionState)Checked.State((int)key); }
  public long GetInt64(Option key) { return Checked.GetInt64((int)key); }
  public double GetDouble(Option key) { return Checked.GetDouble((int)key); }
  /// <summary>"" for an unset string.</summary>
  public string GetString(Option key) { return Checked.GetString((int)key); }

  /// <summary>Whether a failing status makes a monitored session recover (default: Aborted, Unavailable).</summary>
  public Options SetRecoverable(Status status, bool recoverable) {
    Checked.SetRecoverable((int)status, recoverable);
    return this;
  }

  /// <summary>Registers a variable, by reference: the session reads, saves and restores its memory in place.</summary>
  public Options AddVariable(Tensor variable) {
    if (variable == null) throw new InvalidArgumentException("variable is null");
    Checked.AddVariable(variable.native);
    variables.Add(variable);
    return this;
  }

  /// <summary>
  /// Scaffold's init_fn (S7, S13): a chief that restored nothing calls `init` with the new session, at
  /// creation and after every recovery that restores nothing. null: none.
  /// </summary>
  public Options SetInitFunction(InitFunction init) {
    var bridge = init == null ? null : new InitFunctionBridge(init);
    Checked.SetInitFn(bridge == null ? null : bridge.Function());
    initFunction = bridge;
    return this;
  }

  /// <summary>
  /// WorkerSessionCreator's readiness test (S2, S10): a worker (Option.IsChief false) polls `ready` every
  /// Option.RecoveryWaitSecs until it returns true, for at most Option.MaxWaitSecs. null: ready at once.
  /// </summary>
  public Options SetReadyFunction(ReadyFunction ready) {
    var bridge = ready == null ? null : new ReadyFunctionBridge(ready);
    Checked.SetReadyFn(bridge == null ? null : bridge.Function());
    readyFunction = bridge;
    return this;
  }

  /// <summary>What a session created from these options uses and must keep alive: the variables (their arrays pinned) and the init and ready functions.</summary>
  internal object[] Borrowed {
    get {
      var borrowed = new List<object>(variables);
      if (initFunction != null) borrowed.Add(initFunction);
      if (readyFunction != null) borrowed.Add(readyFunction);
      return borrowed.ToArray();
    }
  }

  public void Dispose() {
    if (disposed) return;
    disposed = true;
    native.Dispose();
  }
}

}  // namespace TrainWatch
