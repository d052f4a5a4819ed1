using System;

namespace TrainWatch {

/// <summary>The library's log lines.</summary>
public static class Log {
  static readonly object sinkLock = new object();
  // Referenced so that native code may call them: the sink, and the one it replaced (a line being
  // written on another thread may still be in it).
  static SinkBridge sink;
#pragma warning disable 414  // only ever assigned: it exists to keep the object alive
  static SinkBridge replacedSink;
#pragma warning restore 414

  /// <summary>Drops lines below `level` (default Info).</summary>
  public static void SetLevel(LogLevel level) { Native.native.set_log_level((int)level); }

  /// <summary>
  /// Sends every log line to `write` instead of stderr (null: back to stderr). It may be called from
  /// any thread that runs library code, background checkpoint writers included; what it throws is
  /// dropped.
  /// </summary>
  public static void SetSink(Action<LogLevel, string> write) {
    lock (sinkLock) {
      SinkBridge bridge = write == null ? null : new SinkBridge(write);
      Native.native.set_log_sink(bridge == null ? null : bridge.Sink());
      replacedSink = sink;
      sink = bridge;
    }
  }

  sealed class SinkBridge : Native.ManagedLogSink {
    readonly Action<LogLevel, string> write;

    internal SinkBridge(Action<LogLevel, string> write) { this.write = write; }

    public override void ManagedWrite(int level, string message) {
      CallbackGuard.InvokeDropping(() => write((LogLevel)level, message));
    }
  }
}

}  // namespace TrainWatch
