using System;
using System.Collections.Generic;

namespace TrainWatch {

/// <summary>
/// Reads a TensorBoard event file from its first record (TF's summary_iterator), verifying every
/// record's checksums: a corrupt or truncated record is DataLossException naming the file and offset.
/// </summary>
public sealed class EventReader : IDisposable {
  readonly Native.EventReader native;
  bool disposed;

  /// <summary>Opens `path` (NotFoundException when there is no such file).</summary>
  public EventReader(string path) { native = new Native.EventReader(path ?? ""); }

  /// <summary>The next event, or null after the last one.</summary>
  public Event Next() {
    if (disposed) throw new ObjectDisposedException("EventReader");
    using (var e = new Native.Event()) return native.Next(e) ? new Event(e) : null;
  }

  /// <summary>Every event of the file at `path`, in order.</summary>
  public static IReadOnlyList<Event> ReadAll(string path) {
    var events = new List<Event>();
    using (var reader = new EventReader(path)) {
      for (Event e = reader.Next(); e != null; e = reader.Next()) events.Add(e);
    }
    return events.AsReadOnly();
  }

  /// <summary>Closes the file. Safe to call twice.</summary>
  public void Dispose() {
    if (disposed) return;
    disposed = true;
    native.Dispose();
  }
}

}  // namespace TrainWatch
