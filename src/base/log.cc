#include "base/log.h"

#include "base/status.h"

#include <sys/time.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace tw {
namespace {

struct Sink {
  tw_log_fn fn = nullptr;
  void *user_data = nullptr;
};

std::mutex g_sink_mutex;
Sink g_sink;
std::atomic<int> g_min_level{TW_LOG_INFO};

char LevelLetter(tw_log_level level) {
  if (level >= TW_LOG_ERROR) return 'E';
  if (level >= TW_LOG_WARNING) return 'W';
  if (level >= TW_LOG_INFO) return 'I';
  return 'D';
}

// TF/glog style: "I1122 12:00:00.123456 trainwatch] message".
void WriteToStderr(tw_log_level level, const char *message) {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  struct tm tm;
  localtime_r(&tv.tv_sec, &tm);
  std::fprintf(stderr, "%c%02d%02d %02d:%02d:%02d.%06ld trainwatch] %s\n", LevelLetter(level), tm.tm_mon + 1,
               tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long>(tv.tv_usec), message);
}

}  // namespace

bool LogEnabled(tw_log_level level) { return level >= g_min_level.load(std::memory_order_relaxed); }

void Log(tw_log_level level, const char *format, ...) {
  if (!LogEnabled(level)) return;
  va_list args;
  va_start(args, format);
  const std::string message = FormatV(format, args);
  va_end(args);

  Sink sink;
  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    sink = g_sink;
  }
  if (sink.fn != nullptr) {
    sink.fn(sink.user_data, level, message.c_str());
  } else {
    WriteToStderr(level, message.c_str());
  }
}

void SetLogSink(tw_log_fn fn, void *user_data) {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  g_sink.fn = fn;
  g_sink.user_data = user_data;
}

void SetLogLevel(tw_log_level level) { g_min_level.store(level, std::memory_order_relaxed); }

}  // namespace tw
