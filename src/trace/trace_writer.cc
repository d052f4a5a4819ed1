#include "trace/trace_writer.h"

#include <cmath>
#include <cstdio>

#include "base/file_io.h"

namespace tw {
namespace trace {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not one (overlong forms,
// surrogates and code points past U+10FFFF are invalid).
size_t Utf8SequenceLength(const std::string &s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  size_t length;
  uint32_t code;
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  const bool surrogate = code >= 0xd800 && code <= 0xdfff;
  return (overlong || surrogate || code > 0x10ffff) ? 0 : length;
}

void AppendNumber(double value, std::string *out) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  *out += text;
}

void AppendInt(int64_t value, std::string *out) { *out += std::to_string(value); }

// Microseconds with nanosecond resolution, the precision Chrome's "ts" and "dur" carry.
void AppendMicros(double value, std::string *out) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.3f", value);
  *out += text;
}

void AppendNameMetadata(const char *kind, int64_t pid, const int64_t *tid, const std::string &name, std::string *out) {
  *out += "{\"name\":\"";
  *out += kind;
  *out += "\",\"ph\":\"M\",\"pid\":";
  AppendInt(pid, out);
  if (tid != nullptr) {
    *out += ",\"tid\":";
    AppendInt(*tid, out);
  }
  *out += ",\"args\":{\"name\":";
  AppendJsonString(name, out);
  *out += "}}";
}

void AppendSpan(const TraceSpan &span, std::string *out) {
  *out += "{\"name\":";
  AppendJsonString(span.name, out);
  *out += ",\"cat\":";
  AppendJsonString(span.category, out);
  *out += ",\"ph\":\"X\",\"ts\":";
  AppendMicros(std::isfinite(span.start_us) ? span.start_us : 0.0, out);
  *out += ",\"dur\":";
  AppendMicros(std::isfinite(span.duration_us) && span.duration_us > 0 ? span.duration_us : 0.0, out);
  *out += ",\"pid\":";
  AppendInt(span.pid, out);
  *out += ",\"tid\":";
  AppendInt(span.tid, out);
  *out += ",\"args\":{";
  for (size_t i = 0; i < span.args.size(); ++i) {
    const TraceArg &arg = span.args[i];
    if (i > 0) *out += ',';
    AppendJsonString(arg.key, out);
    *out += ':';
    if (!arg.is_number) {
      AppendJsonString(arg.text, out);
    } else if (std::isfinite(arg.number)) {
      AppendNumber(arg.number, out);
    } else {
      AppendJsonString(std::isnan(arg.number) ? "nan" : (arg.number > 0 ? "inf" : "-inf"), out);
    }
  }
  *out += "}}";
}

}  // namespace

void AppendJsonString(const std::string &text, std::string *out) {
  out->push_back('"');
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          *out += escaped;
        } else {
          const size_t length = Utf8SequenceLength(text, i);
          if (length == 0) {
            *out += "\\ufffd";
            ++i;
            continue;
          }
          out->append(text, i, length);
          i += length;
          continue;
        }
    }
    ++i;
  }
  out->push_back('"');
}

void TraceWriter::AddSpan(TraceSpan span) {
  std::lock_guard<std::mutex> lock(mutex_);
  spans_.push_back(std::move(span));
}

void TraceWriter::SetProcessName(int64_t pid, std::string name) {
  std::lock_guard<std::mutex> lock(mutex_);
  process_names_[pid] = std::move(name);
}

void TraceWriter::SetThreadName(int64_t pid, int64_t tid, std::string name) {
  std::lock_guard<std::mutex> lock(mutex_);
  thread_names_[{pid, tid}] = std::move(name);
}

void TraceWriter::ClearSpans() {
  std::lock_guard<std::mutex> lock(mutex_);
  spans_.clear();
}

size_t TraceWriter::span_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spans_.size();
}

std::string TraceWriter::ToJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  const auto separate = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (const auto &entry : process_names_) {
    separate();
    AppendNameMetadata("process_name", entry.first, nullptr, entry.second, &out);
  }
  for (const auto &entry : thread_names_) {
    separate();
    AppendNameMetadata("thread_name", entry.first.first, &entry.first.second, entry.second, &out);
  }
  for (const TraceSpan &span : spans_) {
    separate();
    AppendSpan(span, &out);
  }
  out += "],\"displayTimeUnit\":\"ms\"}\n";
  return out;
}

Status TraceWriter::WriteFile(const std::string &path) const { return WriteFileAtomically(path, ToJson()); }

std::string TimelinePath(const std::string &dir, int64_t step) {
  return JoinPath(dir, "timeline-" + std::to_string(step) + ".json");
}

}  // namespace trace
}  // namespace tw
