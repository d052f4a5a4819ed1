#include "summary/event_writer.h"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <ctime>

#include "base/log.h"
#include "base/tensor.h"
#include "base/timer.h"
#include "summary/file_io.h"
#include "summary/histogram.h"

namespace tw {
namespace summary {
namespace {

std::string Hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// Opens a new file named as TF names event files; never truncates an existing one.
Status CreateEventFile(const std::string &logdir, int *fd, std::string *path) {
  char stem[64];
  std::snprintf(stem, sizeof(stem), "events.out.tfevents.%010lld.", static_cast<long long>(std::time(nullptr)));
  const std::string base = JoinPath(logdir, stem + Hostname());
  const std::string pid = "." + std::to_string(::getpid());
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::string candidate = base;
    if (attempt > 0) candidate += pid;
    if (attempt > 1) candidate += "." + std::to_string(attempt - 1);
    *fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (*fd >= 0) {
      *path = std::move(candidate);
      return Status();
    }
    if (errno != EEXIST) return ErrnoStatus(errno, "cannot create event file '" + candidate + "'");
  }
  return Status(TW_ALREADY_EXISTS, "every event file name tried in '" + logdir + "' is taken");
}

}  // namespace

double WallTimeSeconds() {
  struct timeval tv;
  ::gettimeofday(&tv, nullptr);
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

Status EventWriter::Open(const std::string &logdir, std::unique_ptr<EventWriter> *out,
                         const EventWriterOptions &options) {
  if (logdir.empty()) return Status(TW_INVALID_ARGUMENT, "logdir is empty");
  TW_RETURN_IF_ERROR(MakeDirectories(logdir));
  int fd;
  std::string path;
  TW_RETURN_IF_ERROR(CreateEventFile(logdir, &fd, &path));
  std::unique_ptr<EventWriter> writer(new EventWriter(logdir, path, fd, options));

  Event version;
  version.wall_time = WallTimeSeconds();
  version.what = Event::What::kFileVersion;
  version.file_version = kFileVersion;
  TW_RETURN_IF_ERROR(writer->WriteEvent(version));
  TW_RETURN_IF_ERROR(writer->Flush());  // TensorBoard sees the run as soon as it starts
  *out = std::move(writer);
  return Status();
}

EventWriter::EventWriter(std::string logdir, std::string path, int fd, const EventWriterOptions &options)
    : logdir_(std::move(logdir)),
      path_(std::move(path)),
      options_(options),
      records_(fd, path_),
      last_flush_(MonotonicSeconds()) {}

EventWriter::~EventWriter() {
  if (closed()) return;  // whoever closed it has heard the status
  const Status status = Close();
  if (!status.ok()) Log(TW_LOG_ERROR, "closing event file: %s", status.message().c_str());
}

Status EventWriter::AppendSerialized(const std::string &serialized_event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return Status(TW_FAILED_PRECONDITION, "event file '" + path_ + "' is closed");
  records_.Append(serialized_event);
  ++pending_events_;
  const double now = MonotonicSeconds();
  if (pending_events_ < options_.max_queue && now - last_flush_ < options_.flush_secs) return Status();
  pending_events_ = 0;
  last_flush_ = now;
  return records_.Flush();
}

Status EventWriter::WriteEvent(const Event &event) {
  std::string serialized;
  EncodeEvent(event, &serialized);
  return AppendSerialized(serialized);
}

Status EventWriter::AddSummary(int64_t step, std::vector<SummaryValue> values) {
  Event event;
  event.wall_time = WallTimeSeconds();
  event.step = step;
  event.what = Event::What::kSummary;
  event.summary = std::move(values);
  return WriteEvent(event);
}

Status EventWriter::AddScalar(const std::string &tag, int64_t step, double value) {
  std::vector<SummaryValue> values(1);
  values[0].tag = tag;
  values[0].kind = SummaryValue::Kind::kSimpleValue;
  values[0].simple_value = static_cast<float>(value);
  return AddSummary(step, std::move(values));
}

Status EventWriter::AddHistogram(const std::string &tag, int64_t step, const HistogramData &histogram) {
  std::vector<SummaryValue> values(1);
  values[0].tag = tag;
  values[0].kind = SummaryValue::Kind::kHistogram;
  values[0].histogram = histogram;
  return AddSummary(step, std::move(values));
}

Status EventWriter::AddHistogram(const std::string &tag, int64_t step, const tw_tensor &values) {
  HistogramData histogram;
  TW_RETURN_IF_ERROR(HistogramOfTensor(values, tag, &histogram));
  return AddHistogram(tag, step, histogram);
}

Status EventWriter::AddSerializedSummary(int64_t step, const void *summary, size_t size) {
  TW_RETURN_IF_ERROR(ValidateSummary(summary, size).WithPrefix("summary: "));
  std::string serialized;
  EncodeSummaryEvent(WallTimeSeconds(), step, summary, size, &serialized);
  return AppendSerialized(serialized);
}

Status EventWriter::AddSessionLog(int64_t step, SessionStatus status, const std::string &checkpoint_path,
                                  const std::string &msg) {
  Event event;
  event.wall_time = WallTimeSeconds();
  event.step = step;
  event.what = Event::What::kSessionLog;
  event.session_log.status = status;
  event.session_log.checkpoint_path = checkpoint_path;
  event.session_log.msg = msg;
  return WriteEvent(event);
}

Status EventWriter::Flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) return Status();
  pending_events_ = 0;
  last_flush_ = MonotonicSeconds();
  return records_.Flush();
}

Status EventWriter::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  return records_.Close();
}

bool EventWriter::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

}  // namespace summary
}  // namespace tw
