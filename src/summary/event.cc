#include "summary/event.h"

#include <cstring>

#include "summary/proto_wire.h"

namespace tw {
namespace summary {
namespace {

// Field numbers, from event.proto and summary.proto.
namespace event_field {
constexpr uint32_t kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5, kLogMessage = 6, kSessionLog = 7;
}
namespace summary_field {
constexpr uint32_t kValue = 1;
}
namespace value_field {
constexpr uint32_t kTag = 1, kSimpleValue = 2, kHisto = 5;
}
namespace histogram_field {
constexpr uint32_t kMin = 1, kMax = 2, kNum = 3, kSum = 4, kSumSquares = 5, kBucketLimit = 6, kBucket = 7;
}
namespace session_log_field {
constexpr uint32_t kStatus = 1, kCheckpointPath = 2, kMsg = 3;
}
namespace log_message_field {
constexpr uint32_t kLevel = 1, kMessage = 2;
}

// Proto3 omits a double at its default; the test is on the bits, so -0.0 is written (as protobuf does).
bool IsDefault(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits == 0;
}

void WriteDoubleUnlessDefault(ProtoWriter &w, uint32_t field, double v) {
  if (!IsDefault(v)) w.WriteDouble(field, v);
}

// Writes a nested message: its bytes are built first, then emitted with their length.
template <typename EncodeBody>
void WriteMessage(ProtoWriter &w, uint32_t field, EncodeBody &&encode_body) {
  std::string body;
  ProtoWriter nested(&body);
  encode_body(nested);
  w.WriteString(field, body);
}

void EncodeHistogram(const HistogramData &h, ProtoWriter &w) {
  using namespace histogram_field;
  WriteDoubleUnlessDefault(w, kMin, h.min);
  WriteDoubleUnlessDefault(w, kMax, h.max);
  WriteDoubleUnlessDefault(w, kNum, h.num);
  WriteDoubleUnlessDefault(w, kSum, h.sum);
  WriteDoubleUnlessDefault(w, kSumSquares, h.sum_squares);
  w.WritePackedDoubles(kBucketLimit, h.bucket_limit);
  w.WritePackedDoubles(kBucket, h.bucket);
}

void EncodeValue(const SummaryValue &v, ProtoWriter &w) {
  using namespace value_field;
  if (!v.tag.empty()) w.WriteString(kTag, v.tag);
  switch (v.kind) {  // oneof members are written even at their default
    case SummaryValue::Kind::kSimpleValue: w.WriteFloat(kSimpleValue, v.simple_value); break;
    case SummaryValue::Kind::kHistogram:
      WriteMessage(w, kHisto, [&](ProtoWriter &nested) { EncodeHistogram(v.histogram, nested); });
      break;
    case SummaryValue::Kind::kOther: break;
  }
}

void EncodeEventHeader(double wall_time, int64_t step, ProtoWriter &w) {
  WriteDoubleUnlessDefault(w, event_field::kWallTime, wall_time);
  if (step != 0) w.WriteInt64(event_field::kStep, step);
}

Status DecodeHistogram(const ProtoField &field, HistogramData *h) {
  using namespace histogram_field;
  TW_RETURN_IF_ERROR(ExpectWireType(field, WireType::kLengthDelimited, "Summary.Value.histo"));
  ProtoReader reader(field.bytes, field.size);
  ProtoField f;
  while (reader.Next(&f)) {
    double *scalar = nullptr;
    switch (f.number) {
      case kMin: scalar = &h->min; break;
      case kMax: scalar = &h->max; break;
      case kNum: scalar = &h->num; break;
      case kSum: scalar = &h->sum; break;
      case kSumSquares: scalar = &h->sum_squares; break;
      case kBucketLimit:
        TW_RETURN_IF_ERROR(ReadRepeatedDouble(f, "HistogramProto.bucket_limit", &h->bucket_limit));
        break;
      case kBucket: TW_RETURN_IF_ERROR(ReadRepeatedDouble(f, "HistogramProto.bucket", &h->bucket)); break;
      default: break;
    }
    if (scalar != nullptr) {
      TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kFixed64, "HistogramProto field"));
      *scalar = f.AsDouble();
    }
  }
  return reader.status();
}

Status DecodeValue(const ProtoField &field, SummaryValue *v) {
  using namespace value_field;
  TW_RETURN_IF_ERROR(ExpectWireType(field, WireType::kLengthDelimited, "Summary.value"));
  ProtoReader reader(field.bytes, field.size);
  ProtoField f;
  while (reader.Next(&f)) {
    switch (f.number) {
      case kTag:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kLengthDelimited, "Summary.Value.tag"));
        v->tag = f.AsString();
        break;
      case kSimpleValue:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kFixed32, "Summary.Value.simple_value"));
        v->kind = SummaryValue::Kind::kSimpleValue;
        v->simple_value = f.AsFloat();
        break;
      case kHisto:
        v->kind = SummaryValue::Kind::kHistogram;
        v->histogram = HistogramData();
        TW_RETURN_IF_ERROR(DecodeHistogram(f, &v->histogram));
        break;
      case 3:
      case 4:
      case 6:
      case 8:  // old-style histogram, image, audio, tensor: the other oneof members
        v->kind = SummaryValue::Kind::kOther;
        break;
      default: break;
    }
  }
  return reader.status();
}

Status DecodeSummary(const void *data, size_t size, std::vector<SummaryValue> *values) {
  ProtoReader reader(data, size);
  ProtoField f;
  while (reader.Next(&f)) {
    if (f.number != summary_field::kValue) continue;
    values->emplace_back();
    TW_RETURN_IF_ERROR(DecodeValue(f, &values->back()));
  }
  return reader.status();
}

Status DecodeSessionLog(const ProtoField &field, SessionLog *log) {
  using namespace session_log_field;
  TW_RETURN_IF_ERROR(ExpectWireType(field, WireType::kLengthDelimited, "Event.session_log"));
  ProtoReader reader(field.bytes, field.size);
  ProtoField f;
  while (reader.Next(&f)) {
    switch (f.number) {
      case kStatus:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kVarint, "SessionLog.status"));
        log->status = static_cast<SessionStatus>(static_cast<int32_t>(f.scalar));
        break;
      case kCheckpointPath:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kLengthDelimited, "SessionLog.checkpoint_path"));
        log->checkpoint_path = f.AsString();
        break;
      case kMsg:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kLengthDelimited, "SessionLog.msg"));
        log->msg = f.AsString();
        break;
      default: break;
    }
  }
  return reader.status();
}

Status DecodeLogMessage(const ProtoField &field, LogMessage *log) {
  using namespace log_message_field;
  TW_RETURN_IF_ERROR(ExpectWireType(field, WireType::kLengthDelimited, "Event.log_message"));
  ProtoReader reader(field.bytes, field.size);
  ProtoField f;
  while (reader.Next(&f)) {
    if (f.number == kLevel) {
      TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kVarint, "LogMessage.level"));
      log->level = static_cast<int32_t>(f.scalar);
    } else if (f.number == kMessage) {
      TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kLengthDelimited, "LogMessage.message"));
      log->message = f.AsString();
    }
  }
  return reader.status();
}

}  // namespace

void EncodeEvent(const Event &event, std::string *out) {
  ProtoWriter w(out);
  EncodeEventHeader(event.wall_time, event.step, w);
  switch (event.what) {
    case Event::What::kFileVersion: w.WriteString(event_field::kFileVersion, event.file_version); break;
    case Event::What::kSummary:
      WriteMessage(w, event_field::kSummary, [&](ProtoWriter &summary) {
        for (const SummaryValue &v : event.summary) {
          WriteMessage(summary, summary_field::kValue, [&](ProtoWriter &value) { EncodeValue(v, value); });
        }
      });
      break;
    case Event::What::kLogMessage:
      WriteMessage(w, event_field::kLogMessage, [&](ProtoWriter &log) {
        if (event.log_message.level != 0) log.WriteVarint(log_message_field::kLevel, event.log_message.level);
        if (!event.log_message.message.empty()) log.WriteString(log_message_field::kMessage, event.log_message.message);
      });
      break;
    case Event::What::kSessionLog:
      WriteMessage(w, event_field::kSessionLog, [&](ProtoWriter &log) {
        const SessionLog &s = event.session_log;
        if (s.status != SessionStatus::kUnspecified) {
          log.WriteVarint(session_log_field::kStatus, static_cast<uint64_t>(static_cast<int64_t>(s.status)));
        }
        if (!s.checkpoint_path.empty()) log.WriteString(session_log_field::kCheckpointPath, s.checkpoint_path);
        if (!s.msg.empty()) log.WriteString(session_log_field::kMsg, s.msg);
      });
      break;
    case Event::What::kNone:
    case Event::What::kOther: break;
  }
}

void EncodeSummaryEvent(double wall_time, int64_t step, const void *summary, size_t size, std::string *out) {
  ProtoWriter w(out);
  EncodeEventHeader(wall_time, step, w);
  w.WriteBytes(event_field::kSummary, summary, size);
}

Status ValidateSummary(const void *summary, size_t size) {
  std::vector<SummaryValue> values;
  return DecodeSummary(summary, size, &values);
}

Status DecodeEvent(const void *data, size_t size, Event *out) {
  Event event;
  ProtoReader reader(data, size);
  ProtoField f;
  while (reader.Next(&f)) {
    switch (f.number) {
      case event_field::kWallTime:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kFixed64, "Event.wall_time"));
        event.wall_time = f.AsDouble();
        break;
      case event_field::kStep:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kVarint, "Event.step"));
        event.step = f.AsInt64();
        break;
      case event_field::kFileVersion:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kLengthDelimited, "Event.file_version"));
        event.what = Event::What::kFileVersion;
        event.file_version = f.AsString();
        break;
      case event_field::kSummary:
        TW_RETURN_IF_ERROR(ExpectWireType(f, WireType::kLengthDelimited, "Event.summary"));
        event.what = Event::What::kSummary;
        // Protobuf merges repeated occurrences of a message field, so values accumulate.
        TW_RETURN_IF_ERROR(DecodeSummary(f.bytes, f.size, &event.summary));
        break;
      case event_field::kLogMessage:
        event.what = Event::What::kLogMessage;
        TW_RETURN_IF_ERROR(DecodeLogMessage(f, &event.log_message));
        break;
      case event_field::kSessionLog:
        event.what = Event::What::kSessionLog;
        TW_RETURN_IF_ERROR(DecodeSessionLog(f, &event.session_log));
        break;
      case 4:
      case 8:
      case 9:  // graph_def, tagged_run_metadata, meta_graph_def
        event.what = Event::What::kOther;
        break;
      default: break;
    }
  }
  TW_RETURN_IF_ERROR(reader.status());
  *out = std::move(event);
  return Status();
}

}  // namespace summary
}  // namespace tw
