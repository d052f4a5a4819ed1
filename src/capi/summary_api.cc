// extern "C" shims for trainwatch/summary.h.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/enum_bits.h"
#include "base/tensor.h"
#include "base/versioned.h"
#include "capi/guard.h"
#include "capi/summary_writer_handle.h"
#include "device/transfer.h"
#include "summary/event_reader.h"
#include "summary/event_writer.h"
#include "summary/writer_cache.h"
#include "trainwatch/summary.h"

using tw::Status;
using tw::capi::Guard;

// The reader and the storage of the last event it handed out, which tw_event's pointers point into.
struct tw_event_reader {
  std::unique_ptr<tw::summary::EventReader> reader;
  tw::summary::Event event;
  std::vector<tw_histogram> histograms;
  std::vector<tw_summary_value> values;
  std::vector<const tw_summary_value *> value_pointers;  // tw_event.values
};

namespace {

Status CheckTag(const char *tag) {
  TW_CHECK_ARG(tag, "tag");
  if (tag[0] == '\0') return Status(TW_INVALID_ARGUMENT, "tag is empty");
  return Status();
}

int32_t EventKind(tw::summary::Event::What what) {
  using What = tw::summary::Event::What;
  switch (what) {
    case What::kNone: return TW_EVENT_NONE;
    case What::kFileVersion: return TW_EVENT_FILE_VERSION;
    case What::kSummary: return TW_EVENT_SUMMARY;
    case What::kLogMessage: return TW_EVENT_LOG_MESSAGE;
    case What::kSessionLog: return TW_EVENT_SESSION_LOG;
    case What::kOther: return TW_EVENT_OTHER;
  }
  return TW_EVENT_OTHER;
}

int32_t ValueKind(tw::summary::SummaryValue::Kind kind) {
  using Kind = tw::summary::SummaryValue::Kind;
  switch (kind) {
    case Kind::kSimpleValue: return TW_SUMMARY_VALUE_SCALAR;
    case Kind::kHistogram: return TW_SUMMARY_VALUE_HISTOGRAM;
    case Kind::kOther: return TW_SUMMARY_VALUE_OTHER;
  }
  return TW_SUMMARY_VALUE_OTHER;
}

// Points *out (written up to its struct_size) into r's storage of r->event.
void ExposeEvent(tw_event_reader *r, tw_event *out) {
  const tw::summary::Event &e = r->event;
  r->histograms.assign(e.summary.size(), tw_histogram());
  r->values.assign(e.summary.size(), tw_summary_value());
  r->value_pointers.resize(e.summary.size());
  for (size_t i = 0; i < e.summary.size(); ++i) {
    const tw::summary::SummaryValue &v = e.summary[i];
    tw_summary_value &value = r->values[i];
    r->value_pointers[i] = &value;
    value.struct_size = sizeof(tw_summary_value);
    value.tag = v.tag.c_str();
    value.kind = ValueKind(v.kind);
    value.simple_value = v.simple_value;
    value.histogram = nullptr;
    if (v.kind == tw::summary::SummaryValue::Kind::kHistogram) {
      tw_histogram &h = r->histograms[i];
      h.struct_size = sizeof(tw_histogram);
      h.min = v.histogram.min;
      h.max = v.histogram.max;
      h.num = v.histogram.num;
      h.sum = v.histogram.sum;
      h.sum_squares = v.histogram.sum_squares;
      // A malformed file may list more limits than counts; expose only complete buckets.
      h.bucket_count = std::min(v.histogram.bucket_limit.size(), v.histogram.bucket.size());
      h.bucket_limit = v.histogram.bucket_limit.data();
      h.bucket = v.histogram.bucket.data();
      value.histogram = &h;
    }
  }
  const bool is_session_log = e.what == tw::summary::Event::What::kSessionLog;
  tw_event event = TW_EVENT_INIT;
  event.kind = EventKind(e.what);
  event.wall_time = e.wall_time;
  event.step = e.step;
  event.file_version = e.file_version.c_str();
  event.value_count = r->values.size();
  event.values = r->values.empty() ? nullptr : r->value_pointers.data();
  event.session_log_status = is_session_log ? static_cast<int32_t>(e.session_log.status) : 0;
  event.checkpoint_path = e.session_log.checkpoint_path.c_str();
  event.message = is_session_log ? e.session_log.msg.c_str() : e.log_message.message.c_str();
  event.log_level = e.log_message.level;
  tw::WriteVersioned(event, out);
}

}  // namespace

extern "C" {

tw_status tw_summary_writer_open(tw_summary_writer **out, const char *logdir) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    TW_CHECK_ARG(logdir, "logdir");
    if (logdir[0] == '\0') return Status(TW_INVALID_ARGUMENT, "logdir is empty");
    std::unique_ptr<tw_summary_writer> handle(new tw_summary_writer);
    TW_RETURN_IF_ERROR(tw::summary::GetCachedEventWriter(logdir, &handle->writer));
    *out = handle.release();
    return Status();
  });
}

tw_status tw_summary_writer_add_scalar(tw_summary_writer *writer, const char *tag, int64_t step, double value) {
  return Guard([&] {
    TW_CHECK_ARG(writer, "writer");
    TW_RETURN_IF_ERROR(CheckTag(tag));
    return writer->writer->AddScalar(tag, step, value);
  });
}

tw_status tw_summary_writer_add_histogram(tw_summary_writer *writer, const char *tag, int64_t step,
                                          const tw_tensor *values) {
  return Guard([&] {
    TW_CHECK_ARG(writer, "writer");
    TW_RETURN_IF_ERROR(CheckTag(tag));
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(values, "values", &view, tw::Place::kHostOrDevice));
    tw::device::HostCopy host;  // V4: the histogram of a device view is built from a host copy
    if (tw::IsOnDevice(view)) {
      TW_RETURN_IF_ERROR(tw::device::HostCopy::Make(view, &host));
      view = host.view();
    }
    return writer->writer->AddHistogram(tag, step, view);
  });
}

tw_status tw_summary_writer_add_session_log(tw_summary_writer *writer, int64_t step, tw_session_log_status status,
                                            const char *checkpoint_path, const char *msg) {
  return Guard([&] {
    TW_CHECK_ARG(writer, "writer");
    const int32_t value = tw::EnumBits(status);
    if (value < TW_SESSION_LOG_STATUS_UNSPECIFIED || value > TW_SESSION_LOG_CHECKPOINT) {
      return tw::Errorf(TW_INVALID_ARGUMENT, "status %d is not a tw_session_log_status", static_cast<int>(value));
    }
    return writer->writer->AddSessionLog(step, static_cast<tw::summary::SessionStatus>(value),
                                         checkpoint_path != nullptr ? checkpoint_path : "", msg != nullptr ? msg : "");
  });
}

tw_status tw_summary_writer_add_summary(tw_summary_writer *writer, int64_t step, const void *summary, size_t size) {
  return Guard([&] {
    TW_CHECK_ARG(writer, "writer");
    if (summary == nullptr && size > 0) return Status(TW_INVALID_ARGUMENT, "summary is NULL");
    static const char kEmpty = 0;
    return writer->writer->AddSerializedSummary(step, summary != nullptr ? summary : &kEmpty, size);
  });
}

tw_status tw_summary_writer_flush(tw_summary_writer *writer) {
  return Guard([&] {
    TW_CHECK_ARG(writer, "writer");
    return writer->writer->Flush();
  });
}

const char *tw_summary_writer_path(const tw_summary_writer *writer) {
  return writer != nullptr ? writer->writer->path().c_str() : nullptr;
}

tw_status tw_summary_writer_close(tw_summary_writer *writer) {
  return Guard([&] {
    TW_CHECK_ARG(writer, "writer");
    return writer->writer->Close();
  });
}

void tw_summary_writer_destroy(tw_summary_writer *writer) { delete writer; }

tw_status tw_event_reader_open(tw_event_reader **out, const char *path) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    TW_CHECK_ARG(path, "path");
    std::unique_ptr<tw_event_reader> handle(new tw_event_reader);
    TW_RETURN_IF_ERROR(tw::summary::EventReader::Open(path, &handle->reader));
    *out = handle.release();
    return Status();
  });
}

tw_status tw_event_reader_next(tw_event *out, tw_event_reader *reader) {
  return Guard([&] {
    TW_CHECK_ARG(reader, "reader");
    TW_RETURN_IF_ERROR(tw::CheckOutVersioned(out, "out"));
    tw::summary::Event event;
    TW_RETURN_IF_ERROR(reader->reader->Next(&event));
    reader->event = std::move(event);
    ExposeEvent(reader, out);
    return Status();
  });
}

void tw_event_reader_destroy(tw_event_reader *reader) { delete reader; }

}  // extern "C"
