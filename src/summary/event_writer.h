// Writes one TensorBoard event file: TF's EventsWriter and Python FileWriter rolled into one.
#ifndef TRAINWATCH_SUMMARY_EVENT_WRITER_H
#define TRAINWATCH_SUMMARY_EVENT_WRITER_H

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "summary/event.h"
#include "summary/record_writer.h"
#include "trainwatch/common.h"

namespace tw {
namespace summary {

struct EventWriterOptions {
  // Buffered events are written and synced once this many are pending, or at the first event added
  // flush_secs after the last flush (TF FileWriter's max_queue=10, flush_secs=120), and on Flush/Close.
  int max_queue = 10;
  double flush_secs = 120.0;
};

// Thread-safe: every method may be called from any thread.
class EventWriter {
 public:
  // Creates `logdir` (and parents), then a new file "<logdir>/events.out.tfevents.<%010d secs>.<host>"
  // — with ".<pid>" (then ".<pid>.<n>") appended only if that name is taken, so no file is ever
  // overwritten — and writes and syncs the file_version event "brain.Event:2" as its first record.
  // Errors: TW_INVALID_ARGUMENT (empty logdir), TW_FAILED_PRECONDITION (logdir is a file), TW_IO,
  // TW_RESOURCE_EXHAUSTED.
  static Status Open(const std::string &logdir, std::unique_ptr<EventWriter> *out,
                     const EventWriterOptions &options = EventWriterOptions());
  ~EventWriter();  // closes; a failure is logged

  // The Add* calls stamp the event with the current wall time. Errors: TW_FAILED_PRECONDITION (the
  // writer was closed), and the errors of Flush when the queue triggers one.
  Status AddScalar(const std::string &tag, int64_t step, double value);  // stored as float, as TF
  Status AddHistogram(const std::string &tag, int64_t step, const HistogramData &histogram);
  // The histogram of a tensor (HistogramOfTensor): also TW_INVALID_ARGUMENT for NaN/Inf elements.
  Status AddHistogram(const std::string &tag, int64_t step, const tw_tensor &values);
  // Several values in one Summary event at `step`, as a merged summary op writes them.
  Status AddSummary(int64_t step, std::vector<SummaryValue> values);
  // A Summary serialized elsewhere (TF's add_summary with bytes); TW_DATA_LOSS if it does not parse.
  Status AddSerializedSummary(int64_t step, const void *summary, size_t size);
  Status AddSessionLog(int64_t step, SessionStatus status, const std::string &checkpoint_path = "",
                       const std::string &msg = "");
  // Any event as given, wall_time included.
  Status WriteEvent(const Event &event);

  // Writes and syncs everything buffered. A no-op on a closed writer.
  Status Flush();
  // Flushes and closes the file; later Add* calls fail. Idempotent.
  Status Close();

  bool closed() const;
  const std::string &path() const { return path_; }
  const std::string &logdir() const { return logdir_; }

 private:
  EventWriter(std::string logdir, std::string path, int fd, const EventWriterOptions &options);
  Status AppendSerialized(const std::string &serialized_event);

  const std::string logdir_;
  const std::string path_;
  const EventWriterOptions options_;
  mutable std::mutex mutex_;
  RecordWriter records_;  // guarded by mutex_, as are the fields below
  bool closed_ = false;
  int pending_events_ = 0;
  double last_flush_ = 0;  // MonotonicSeconds()
};

// Seconds since the Unix epoch, with microseconds: what Event.wall_time holds.
double WallTimeSeconds();

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_EVENT_WRITER_H
