using System;

namespace TrainWatch {

/// <summary>
/// What a session runs hooks through: one reference to a native hook. Built-in hooks (the BuiltinHook
/// subclasses: StopAtStepHook, NanTensorHook, CheckpointSaverHook, …) and SessionRunHook subclasses
/// are Hooks. A session keeps the hooks it was given: disposing a SessionRunHook a session still uses
/// makes that session's callbacks to it fail with FailedPreconditionException, while a built-in hook,
/// and the C# functions it calls, keep working in the sessions that hold it.
/// </summary>
public abstract class Hook : IDisposable {
  bool disposed;

  /// <summary>The native hook; ObjectDisposedException after Dispose.</summary>
  internal Native.HookHandle Handle {
    get {
      if (disposed) throw new ObjectDisposedException(GetType().Name);
      return NativeHandle;
    }
  }

  internal abstract Native.HookHandle NativeHandle { get; }

  /// <summary>The name used in the library's messages.</summary>
  public string Name { get { return Handle.Name(); } }

  public void Dispose() {
    if (disposed) return;
    disposed = true;
    ReleaseNative();
    GC.SuppressFinalize(this);
  }

  /// <summary>Deletes the native objects (once).</summary>
  internal abstract void ReleaseNative();
}

/// <summary>A hook the library implements, held by its native handle.</summary>
public abstract class BuiltinHook : Hook {
  readonly Native.HookHandle handle;

  internal BuiltinHook(Native.HookHandle handle) { this.handle = handle; }

  internal override Native.HookHandle NativeHandle { get { return handle; } }
  internal override void ReleaseNative() { handle.Dispose(); }
}

}  // namespace TrainWatch
