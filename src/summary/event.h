// TensorBoard's Event and Summary messages (tensorflow/core/util/event.proto, framework/summary.proto):
// the subset trainwatch writes and reads, and their protobuf encoding.
#ifndef TRAINWATCH_SUMMARY_EVENT_H
#define TRAINWATCH_SUMMARY_EVENT_H

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tw {
namespace summary {

// The first record of every event file carries this file_version.
constexpr const char kFileVersion[] = "brain.Event:2";

// HistogramProto. Bucket i counts values in [bucket_limit[i-1], bucket_limit[i]) (the first from
// -DBL_MAX); runs of empty buckets are merged into one, as TF writes them.
struct HistogramData {
  double min = 0;
  double max = 0;
  double num = 0;
  double sum = 0;
  double sum_squares = 0;
  std::vector<double> bucket_limit;
  std::vector<double> bucket;
};

// Summary.Value: a tag and one of its values.
struct SummaryValue {
  enum class Kind { kSimpleValue, kHistogram, kOther };  // kOther: images, audio, tensors (not decoded)
  std::string tag;
  Kind kind = Kind::kOther;
  float simple_value = 0;
  HistogramData histogram;
};

// SessionLog.status.
enum class SessionStatus : int32_t { kUnspecified = 0, kStart = 1, kStop = 2, kCheckpoint = 3 };

struct SessionLog {
  SessionStatus status = SessionStatus::kUnspecified;
  std::string checkpoint_path;
  std::string msg;
};

// LogMessage (deprecated in TF, still decoded). level: 10 debug, 20 info, 30 warn, 40 error, 50 fatal.
struct LogMessage {
  int32_t level = 0;
  std::string message;
};

struct Event {
  // Which member of Event's `what` oneof is set.
  enum class What { kNone, kFileVersion, kSummary, kLogMessage, kSessionLog, kOther };

  double wall_time = 0;  // seconds since the Unix epoch
  int64_t step = 0;
  What what = What::kNone;
  std::string file_version;
  std::vector<SummaryValue> summary;
  LogMessage log_message;
  SessionLog session_log;
};

// Appends the serialized Event to *out, byte for byte what TF's C++ serializer produces for the
// same message (proto3: zero wall_time/step omitted; fields in ascending order).
void EncodeEvent(const Event &event, std::string *out);

// An Event whose `what` is a Summary already serialized by someone else (TF's add_summary(bytes)).
void EncodeSummaryEvent(double wall_time, int64_t step, const void *summary, size_t size, std::string *out);

// Checks that bytes parse as a Summary (every Value well-formed) without keeping the result.
Status ValidateSummary(const void *summary, size_t size);

// Parses a serialized Event. Unknown fields are skipped, as protobuf does. Errors: TW_DATA_LOSS
// naming what is malformed.
Status DecodeEvent(const void *data, size_t size, Event *out);

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_EVENT_H
