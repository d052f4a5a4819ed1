using System.Collections.Generic;

namespace TrainWatch {

/// <summary>Which kind of record an Event is (tw_event_kind).</summary>
public enum EventKind {
  /// <summary>Only a wall time and a step.</summary>
  None = 0,
  /// <summary>The first event of a file: FileVersion is "brain.Event:2".</summary>
  FileVersion = 1,
  Summary = 2,
  LogMessage = 3,
  SessionLog = 4,
  /// <summary>A graph, run metadata, …: not decoded.</summary>
  Other = 5,
}

/// <summary>TF's SessionLog.status (tw_session_log_status).</summary>
public enum SessionLogStatus {
  Unspecified = 0,
  /// <summary>A run started (SummarySaverHook writes it on the first run).</summary>
  Start = 1,
  Stop = 2,
  /// <summary>A checkpoint was saved; CheckpointPath names it.</summary>
  Checkpoint = 3,
}

/// <summary>One event of a TensorBoard event file, as EventReader decodes it.</summary>
public sealed class Event {
  internal Event(Native.Event e) {
    Kind = (EventKind)e.Kind;
    WallTime = e.WallTime;
    Step = e.Step;
    var tags = new List<string>(e.Tags);
    var values = new List<double>(e.Scalars);
    var scalars = new Dictionary<string, double>();
    for (int i = 0; i < tags.Count; ++i) {
      if (!double.IsNaN(values[i])) scalars[tags[i]] = values[i];
    }
    Tags = tags.AsReadOnly();
    Scalars = scalars;
    SessionLogStatus = (SessionLogStatus)e.SessionLogStatus;
    CheckpointPath = e.CheckpointPath;
    Message = e.Message;
  }

  public EventKind Kind { get; private set; }
  /// <summary>Seconds since the Unix epoch.</summary>
  public double WallTime { get; private set; }
  public long Step { get; private set; }
  /// <summary>"brain.Event:2" for the file-version event, else null.</summary>
  public string FileVersion { get { return Kind == EventKind.FileVersion ? "brain.Event:2" : null; } }
  /// <summary>Every summary value's tag, in order.</summary>
  public IReadOnlyList<string> Tags { get; private set; }
  /// <summary>The scalar summary values by tag (histograms and other values are only in Tags).</summary>
  public IReadOnlyDictionary<string, double> Scalars { get; private set; }
  /// <summary>Kind SessionLog: its status; else Unspecified.</summary>
  public SessionLogStatus SessionLogStatus { get; private set; }
  /// <summary>A checkpoint SessionLog's checkpoint; else "".</summary>
  public string CheckpointPath { get; private set; }
  /// <summary>SessionLog.msg or LogMessage.message; else "".</summary>
  public string Message { get; private set; }
}

}  // namespace TrainWatch
