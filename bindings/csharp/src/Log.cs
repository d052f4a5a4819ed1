using System;

namespace TrainWatch {

/// <summary>The library's log lines.</summary>
public static class Log {
  static readonly object sinkLock = new object();
  // Every sink ever set, referenced so that native code may call it: a line being written on another
  // thread may still be in one that a later SetSink replaced.
  static readonly System.Collections.Generic.List<SinkBridge> sinks =
      new System.Collections.Generic.List<SinkBridge>();

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
      if (bridge != null) sinks.Add(bridge);
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
