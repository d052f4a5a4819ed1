using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// TF's CheckpointSaverHook (B18–B24): saves the session's variables and global step to
/// checkpointDir when the session starts, every Option.SaveCheckpointSteps steps or
/// SaveCheckpointSecs seconds (one of them in `options`), and at the end; calls the listeners
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
    var hook = (Native.CheckpointSaverHook)Inner;
    Native.SessionRef native = session.Checked;
    return CallbackGuard.Call(() => hook.Save(native, step));
  }

  internal override bool InstallExtensionPoints() {
    if (!SubclassedHook.Overrides(GetType(), "Save", typeof(SessionRef), typeof(long))) return false;
    save = new SaveBridge(this);
    ((Native.CheckpointSaverHook)NativeHandle).SetSaveFunction(save.Function());
    return true;
  }

  SaveBridge save;  // called by the native hook while it lives

  sealed class SaveBridge : Native.ManagedCheckpointSaveFunction {
    readonly CheckpointSaverHook hook;

    internal SaveBridge(CheckpointSaverHook hook) { this.hook = hook; }

    public override bool ManagedSave(Native.SessionRef session, long step) {
      return SessionRef.InvokeGuarded(session, "a CheckpointSaverHook's SessionRef", s => SetStop(hook.Save(s, step)));
    }
  }

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
