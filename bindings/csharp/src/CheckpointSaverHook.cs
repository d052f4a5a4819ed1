using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// TF's CheckpointSaverHook (B18–B24): saves the session's variables and global step to
/// checkpointDir when the session starts, every Option.EveryNSteps steps or
/// EveryNSecs seconds (one of them in `options`), and at the end; calls the listeners
/// around each save. Option.AsyncCheckpoint (default on) writes in the background.
/// </summary>
public class CheckpointSaverHook : BuiltinHook {
  readonly CheckpointSaverListener[] listeners;  // called by the native hook while it lives

  public CheckpointSaverHook(string checkpointDir, Options options = null, params CheckpointSaverListener[] listeners)
      : base(NewNative(checkpointDir, options, listeners)) {
    this.listeners = listeners;
  }

  /// <summary>The listeners given at creation.</summary>
  public IReadOnlyList<CheckpointSaverListener> Listeners {
    get { return System.Array.AsReadOnly(listeners ?? new CheckpointSaverListener[0]); }
  }

  /// <summary>
  /// TF's _save(session, step): saves a checkpoint (listeners around it) and returns the stop request
  /// (true: a listener asked to stop; in AfterRun a true result stops the training). Override it to save
  /// differently; base.Save(session, step) saves as the built-in does.
  /// </summary>
  protected virtual bool Save(SessionRef session, long step) {
    if (session == null) throw new InvalidArgumentException("session is null");
    Native.SessionRef native = session.Checked;
    return CallbackGuard.Call(() => Super.SuperSave(native, step));
  }

  internal bool CallSave(SessionRef session, long step) { return Save(session, step); }

  static Native.CheckpointSaverHook NewNative(string dir, Options options, CheckpointSaverListener[] listeners) {
    using (var handles = new Native.ListenerVector()) {
      if (listeners != null) {
        foreach (CheckpointSaverListener l in listeners) {
          if (l == null) throw new InvalidArgumentException("a listener is null");
          handles.Add(l.Handle);
        }
      }
      return new Native.CheckpointSaverHook(dir ?? "", options == null ? null : options.Checked, handles);
    }
  }
}

}  // namespace TrainWatch
