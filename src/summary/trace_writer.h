// Chrome trace event files ("timeline-<step>.json"), the format Perfetto and chrome://tracing open:
//   {"traceEvents":[{"name":…,"cat":…,"ph":"X","ts":…,"dur":…,"pid":…,"tid":…,"args":{…}}, …],
//    "displayTimeUnit":"ms"}
// plus "M" (metadata) events naming processes and threads.
#ifndef TRAINWATCH_SUMMARY_TRACE_WRITER_H
#define TRAINWATCH_SUMMARY_TRACE_WRITER_H

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tw {
namespace summary {

// One "args" entry of a span: a string or a number.
struct TraceArg {
  static TraceArg String(std::string key, std::string value) { return {std::move(key), std::move(value), 0, false}; }
  static TraceArg Number(std::string key, double value) { return {std::move(key), std::string(), value, true}; }

  std::string key;
  std::string text;
  double number;
  bool is_number;  // a non-finite number is written as a string ("nan", "inf"), JSON having none
};

// A complete ("X") event: something that ran from start_us for duration_us microseconds.
struct TraceSpan {
  std::string name;
  std::string category;
  int64_t pid = 0;
  int64_t tid = 0;
  double start_us = 0;
  double duration_us = 0;  // negative durations are written as 0
  std::vector<TraceArg> args;
};

// Collects spans and names, then writes them as one JSON file. Thread-safe.
class TraceWriter {
 public:
  void AddSpan(TraceSpan span);
  void SetProcessName(int64_t pid, std::string name);
  void SetThreadName(int64_t pid, int64_t tid, std::string name);

  // Drops the spans (names are kept): what a profiler does after writing one step's trace.
  void ClearSpans();
  size_t span_count() const;

  // The trace as JSON: metadata events first, then spans in the order added. Strings are escaped and
  // invalid UTF-8 is replaced by U+FFFD, so any input gives a valid JSON document.
  std::string ToJson() const;

  // Writes ToJson() to `path` atomically (temporary file, fsync, rename). Errors: TW_IO,
  // TW_RESOURCE_EXHAUSTED.
  Status WriteFile(const std::string &path) const;

 private:
  mutable std::mutex mutex_;
  std::vector<TraceSpan> spans_;
  std::map<int64_t, std::string> process_names_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
};

// "<dir>/timeline-<step>.json", TF ProfilerHook's file name.
std::string TimelinePath(const std::string &dir, int64_t step);

// Appends `text` to *out as a JSON string literal (quotes included).
void AppendJsonString(const std::string &text, std::string *out);

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_TRACE_WRITER_H
