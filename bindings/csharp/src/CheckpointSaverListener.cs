namespace TrainWatch {

/// <summary>
/// TF's CheckpointSaverListener (B17): override what you need; return true from AfterSave to request a
/// stop. What a callback throws fails the run, as a hook's does. Dispose it after the hooks using it.
/// </summary>
public abstract class CheckpointSaverListener : System.IDisposable {
  readonly ListenerBridge bridge;
  bool disposed;

  protected CheckpointSaverListener(string name = null) {
    bridge = new ListenerBridge(this, name ?? GetType().Name);
  }

  public virtual void Begin() {}
  public virtual void BeforeSave(SessionRef session, long globalStep) {}
  public virtual bool AfterSave(SessionRef session, long globalStep) { return false; }
  public virtual void End(SessionRef session, long globalStep) {}

  internal Native.CheckpointSaverListener Handle {
    get {
      if (disposed) throw new System.ObjectDisposedException(GetType().Name);
      return bridge.Listener();
    }
  }

  public void Dispose() {
    if (disposed) return;
    disposed = true;
    bridge.Dispose();
  }

  sealed class ListenerBridge : Native.ManagedListener {
    readonly CheckpointSaverListener listener;

    internal ListenerBridge(CheckpointSaverListener listener, string name) : base(name) { this.listener = listener; }

    public override bool ManagedBegin() { return CallbackGuard.Invoke(() => listener.Begin()); }

    public override bool ManagedBeforeSave(Native.SessionRef session, long globalStep) {
      return WithSession(session, s => listener.BeforeSave(s, globalStep));
    }

    public override bool ManagedAfterSave(Native.SessionRef session, long globalStep) {
      return WithSession(session, s => SetStop(listener.AfterSave(s, globalStep)));
    }

    public override bool ManagedEnd(Native.SessionRef session, long globalStep) {
      return WithSession(session, s => listener.End(s, globalStep));
    }

    static bool WithSession(Native.SessionRef session, System.Action<SessionRef> callback) {
      return SessionRef.InvokeGuarded(session, "a listener's SessionRef", callback);
    }
  }
}

}  // namespace TrainWatch
