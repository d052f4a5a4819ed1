// Progress of a long save or restore (C26): reported to the process's progress sink (tw_set_progress_sink,
// trainwatch/checkpoint.h) once the work has run the sink's every_n_secs, then every every_n_secs, and
// once more when it ends — so that a multi-gigabyte checkpoint is not silent until it is done. The
// default sink is an INFO line of the library's logger (base/log.h).
#ifndef TRAINWATCH_BASE_PROGRESS_H
#define TRAINWATCH_BASE_PROGRESS_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "base/status.h"
#include "trainwatch/checkpoint.h"

namespace tw {

class Progress {
 public:
  // Starts the clock of one operation on `path`, with the sink set now.
  Progress(tw_progress_kind kind, std::string path);
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  // Adds to the bytes the operation will count (before the work that counts them).
  void Expect(uint64_t bytes) { total_.fetch_add(bytes, std::memory_order_relaxed); }
  // Counts bytes done; reports when a report is due. Thread-safe: an atomic add and a clock read, the
  // report itself made by one thread at a time (bytes_done never goes back between reports).
  void Add(uint64_t bytes);
  // The operation succeeded: the last report (bytes_done = what was counted), when the operation was
  // reported on before or ran every_n_secs. An operation that fails is not reported: its status is.
  // Neither Add nor Finish fails or throws (a log line that cannot be allocated is dropped).
  void Finish();

 private:
  int64_t ElapsedNs() const;
  void Report(bool final);  // under report_mutex_

  const tw_progress_kind kind_;
  const std::string path_;
  tw_progress_fn fn_ = nullptr;  // NULL: the logger
  void *user_data_ = nullptr;
  int64_t every_ns_ = 0;  // INT64_MAX: no sink listens
  const std::chrono::steady_clock::time_point start_;
  std::atomic<uint64_t> total_{0};
  std::atomic<uint64_t> done_{0};
  std::atomic<int64_t> next_report_ns_{0};
  std::mutex report_mutex_;
  bool reported_ = false;
};

// Whether this thread is inside a call of the user's progress sink, which must not call back into the
// saver or session doing the work (tw_set_progress_sink): such calls check this and refuse.
bool InsideProgressSink();

// tw_set_progress_sink: every_n_secs >= 0 and finite, else TW_INVALID_ARGUMENT naming it.
Status SetProgressSink(double every_n_secs, tw_progress_fn fn, void *user_data);

}  // namespace tw

#endif  // TRAINWATCH_BASE_PROGRESS_H
