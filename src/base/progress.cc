#include "base/progress.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <utility>

#include "base/log.h"

namespace tw {
namespace {

struct Sink {
  double every_n_secs = 2.0;
  tw_progress_fn fn = nullptr;
  void *user_data = nullptr;
};

std::mutex g_sink_mutex;
Sink g_sink;

thread_local int t_inside_sink = 0;  // calls of a user's sink on this thread now (InsideProgressSink)

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// "Saving checkpoint <path>: 512.0 of 1073.7 MB (48%), 250.3 MB/s, 2.2 s left" and, at the end,
// "Saved checkpoint <path>: 1073.7 MB in 4.3 s, 250.1 MB/s".
void LogProgress(tw_progress_kind kind, const std::string &path, uint64_t done, uint64_t total, double secs,
                 bool final) {
  const bool save = kind == TW_PROGRESS_SAVE;
  const double mb = static_cast<double>(done) / 1e6, total_mb = static_cast<double>(total) / 1e6;
  const double rate = secs > 0 ? mb / secs : 0.0;
  if (final) {
    Log(TW_LOG_INFO, "%s checkpoint %s: %.1f MB in %.1f s, %.1f MB/s", save ? "Saved" : "Restored", path.c_str(), mb,
        secs, rate);
    return;
  }
  const double percent = total > 0 ? 100.0 * mb / total_mb : 100.0;
  const double left = rate > 0 && total > done ? (total_mb - mb) / rate : 0.0;
  Log(TW_LOG_INFO, "%s checkpoint %s: %.1f of %.1f MB (%.0f%%), %.1f MB/s, %.1f s left", save ? "Saving" : "Restoring",
      path.c_str(), mb, total_mb, percent, rate, left);
}

}  // namespace

Progress::Progress(tw_progress_kind kind, std::string path)
    : kind_(kind), path_(std::move(path)), start_(std::chrono::steady_clock::now()) {
  Sink sink;
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    sink = g_sink;
  }
  fn_ = sink.fn;
  user_data_ = sink.user_data;
  // Nobody listens when the logger drops INFO lines and no callback is set: Add then only adds.
  const bool listened = fn_ != nullptr || LogEnabled(TW_LOG_INFO);
  every_ns_ = listened ? static_cast<int64_t>(std::min(sink.every_n_secs, 1e9) * 1e9) : kNever;
  next_report_ns_.store(every_ns_, std::memory_order_relaxed);
}

int64_t Progress::ElapsedNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Add(uint64_t bytes) {
  done_.fetch_add(bytes, std::memory_order_relaxed);
  int64_t due = next_report_ns_.load(std::memory_order_relaxed);
  if (due == kNever) return;
  const int64_t now = ElapsedNs();
  if (now < due) return;
  // One thread takes this report; the others go on working.
  if (!next_report_ns_.compare_exchange_strong(due, now + every_ns_, std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(report_mutex_);
  Report(false);
}

void Progress::Finish() {
  if (every_ns_ == kNever) return;
  std::lock_guard<std::mutex> lock(report_mutex_);
  if (reported_ || ElapsedNs() >= every_ns_) Report(true);
}

void Progress::Report(bool final) {
  reported_ = true;
  // Read under the mutex: reports are made in its order, and done_ only grows.
  const uint64_t done = done_.load(std::memory_order_relaxed);
  const uint64_t total = total_.load(std::memory_order_relaxed);
  const double secs = static_cast<double>(ElapsedNs()) * 1e-9;
  if (fn_ != nullptr) {
    ++t_inside_sink;
    fn_(user_data_, kind_, path_.c_str(), static_cast<int64_t>(done), static_cast<int64_t>(total), secs, final);
    --t_inside_sink;
    return;
  }
  // A line that cannot be formatted for lack of memory is dropped: a report never fails the work (a
  // restore's writing pass must not fail once it has begun, C21) nor throws out of a worker thread.
  try {
    LogProgress(kind_, path_, done, total, secs, final);
  } catch (const std::bad_alloc &) {
  }
}

bool InsideProgressSink() { return t_inside_sink > 0; }

Status SetProgressSink(double every_n_secs, tw_progress_fn fn, void *user_data) {
  if (!(every_n_secs >= 0) || !std::isfinite(every_n_secs)) {
    return Errorf(TW_INVALID_ARGUMENT, "every_n_secs must be a finite number >= 0, not %g", every_n_secs);
  }
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  g_sink = Sink{every_n_secs, fn, user_data};
  return Status();
}

}  // namespace tw
