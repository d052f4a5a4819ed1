#include "checkpoint/state_file.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "base/regular_file.h"
#include "checkpoint/io/durable_file.h"
#include "checkpoint/io/path.h"

namespace tw {
namespace checkpoint {
namespace {

// protobuf's CEscape: what text_format.MessageToString does to string fields (as_utf8=False).
std::string Escape(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          const char octal[5] = {'\\', static_cast<char>('0' + (c >> 6)), static_cast<char>('0' + ((c >> 3) & 7)),
                                 static_cast<char>('0' + (c & 7)), '\0'};
          out += octal;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

// Python's repr of a float, which text_format uses for doubles: shortest round-trip digits, and a
// ".0" on integral values.
std::string FormatDouble(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // 'n': inf, nan
  return text;
}

// A tokenizer for the subset of protobuf text format a CheckpointState uses.
class TextParser {
 public:
  explicit TextParser(const std::string &text) : s_(text) {}

  Status Parse(CheckpointState *state) {
    bool has_model_path = false;
    for (SkipSpace(); pos_ < s_.size(); SkipSpace()) {
      std::string field;
      if (!Identifier(&field)) return Error("expected a field name");
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after " + field);
      SkipSpace();
      if (field == "model_checkpoint_path" || field == "all_model_checkpoint_paths") {
        std::string value;
        TW_RETURN_IF_ERROR(String(&value));
        if (field == "all_model_checkpoint_paths") {
          state->all_model_checkpoint_paths.push_back(value);
        } else if (has_model_path) {
          return Error("model_checkpoint_path appears twice");
        } else {
          has_model_path = true;
          state->model_checkpoint_path = value;
        }
      } else if (field == "all_model_checkpoint_timestamps" || field == "last_preserved_timestamp") {
        double value = 0;
        TW_RETURN_IF_ERROR(Number(&value));
        if (field == "all_model_checkpoint_timestamps") {
          state->all_model_checkpoint_timestamps.push_back(value);
        } else if (state->has_last_preserved_timestamp) {
          return Error("last_preserved_timestamp appears twice");
        } else {
          state->has_last_preserved_timestamp = true;
          state->last_preserved_timestamp = value;
        }
      } else {
        return Error("CheckpointState has no field named \"" + field + "\"");
      }
      SkipSpace();
      if (pos_ < s_.size() && (s_[pos_] == ',' || s_[pos_] == ';')) ++pos_;  // optional separators
    }
    state->job_identity = job_identity_;
    return Status();
  }

 private:
  Status Error(const std::string &what) const {
    return Status(TW_INVALID_ARGUMENT,
                  std::to_string(line_) + ":" + std::to_string(pos_ - line_start_ + 1) + " : " + what);
  }

  void SkipSpace() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '#') {
        const size_t begin = pos_;
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        if (begin == line_start_) JobIdentityComment(s_.substr(begin, pos_ - begin));
      } else if (c == '\n') {
        ++pos_;
        ++line_;
        line_start_ = pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else {
        return;
      }
    }
  }

  // The saver's job identity (job_identity.h), a comment to every other parser.
  void JobIdentityComment(const std::string &line) {
    const size_t prefix = sizeof(kJobIdentityComment) - 1;
    if (!job_identity_.empty() || line.size() != prefix + 32 || line.compare(0, prefix, kJobIdentityComment) != 0) {
      return;
    }
    const std::string hex = line.substr(prefix);
    if (hex.find_first_not_of("0123456789abcdef") == std::string::npos) job_identity_ = hex;
  }

  bool Consume(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  bool Identifier(std::string *out) {
    const size_t begin = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    out->assign(s_, begin, pos_ - begin);
    return pos_ > begin && !std::isdigit(static_cast<unsigned char>((*out)[0]));
  }

  // One or more adjacent quoted strings (text format concatenates them), with C escapes.
  Status String(std::string *out) {
    if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) return Error("expected a string");
    out->clear();
    while (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
      const char quote = s_[pos_++];
      for (;;) {
        if (pos_ >= s_.size() || s_[pos_] == '\n') return Error("unterminated string");
        const char c = s_[pos_++];
        if (c == quote) break;
        if (c != '\\') {
          *out += c;
          continue;
        }
        if (pos_ >= s_.size()) return Error("unterminated string");
        const char e = s_[pos_++];
        switch (e) {
          case 'n': *out += '\n'; break;
          case 'r': *out += '\r'; break;
          case 't': *out += '\t'; break;
          case 'a': *out += '\a'; break;
          case 'b': *out += '\b'; break;
          case 'f': *out += '\f'; break;
          case 'v': *out += '\v'; break;
          case '\\':
          case '\'':
          case '"':
          case '?': *out += e; break;
          case 'x': {
            int value = 0, digits = 0;
            while (digits < 2 && pos_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[pos_]))) {
              const char h = s_[pos_++];
              value = value * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
              ++digits;
            }
            if (digits == 0) return Error("bad \\x escape");
            *out += static_cast<char>(value);
            break;
          }
          default:
            if (e < '0' || e > '7') return Error(std::string("bad escape \\") + e);
            int value = e - '0';
            for (int digits = 1; digits < 3 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++digits) {
              value = value * 8 + (s_[pos_++] - '0');
            }
            *out += static_cast<char>(value & 0xff);
        }
      }
      SkipSpace();
    }
    return Status();
  }

  Status Number(double *out) {
    const size_t begin = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                s_[pos_] == '-' || s_[pos_] == '+')) {
      ++pos_;
    }
    const std::string token = s_.substr(begin, pos_ - begin);
    char *end = nullptr;
    *out = std::strtod(token.c_str(), &end);
    if (token.empty() || end != token.c_str() + token.size()) return Error("expected a number");
    return Status();
  }

  const std::string &s_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  std::string job_identity_;
};

// The file's parsed contents, paths still as written. TW_NOT_FOUND when it is missing; *type says
// which step failed otherwise ("OpError": reading, "ParseError": parsing).
Status ReadStateFile(const std::string &path, CheckpointState *state, const char **type) {
  std::string text;
  *type = "OpError";
  TW_RETURN_IF_ERROR(ReadRegularFile(path, "checkpoint state file", kMaxStateFileBytes, &text));
  *type = "ParseError";
  return ParseCheckpointState(text, state);
}

void JoinPaths(const std::string &dir, CheckpointState *state) {
  state->model_checkpoint_path = JoinPath(dir, state->model_checkpoint_path);
  for (std::string &p : state->all_model_checkpoint_paths) p = JoinPath(dir, p);
}

Status InvalidState(const std::string &dir) {
  return Status(TW_INVALID_ARGUMENT, "Invalid checkpoint state loaded from " + dir);
}

}  // namespace

std::string FormatCheckpointState(const CheckpointState &state) {
  std::string out;
  if (!state.job_identity.empty()) out = kJobIdentityComment + state.job_identity + "\n";
  out += "model_checkpoint_path: \"" + Escape(state.model_checkpoint_path) + "\"\n";
  for (const std::string &path : state.all_model_checkpoint_paths) {
    out += "all_model_checkpoint_paths: \"" + Escape(path) + "\"\n";
  }
  for (double t : state.all_model_checkpoint_timestamps)
    out += "all_model_checkpoint_timestamps: " + FormatDouble(t) + "\n";
  if (state.has_last_preserved_timestamp) {
    out += "last_preserved_timestamp: " + FormatDouble(state.last_preserved_timestamp) + "\n";
  }
  return out;
}

Status ParseCheckpointState(const std::string &text, CheckpointState *state) {
  CheckpointState parsed;
  TW_RETURN_IF_ERROR(TextParser(text).Parse(&parsed));
  *state = std::move(parsed);
  return Status();
}

Status WriteCheckpointState(const std::string &dir, const std::string &filename, const CheckpointState &state) {
  return WriteFileDurably(JoinPath(dir, filename), FormatCheckpointState(state));
}

Status ReadCheckpointState(const std::string &dir, const std::string &filename, CheckpointState *state, bool *found) {
  const std::string path = JoinPath(dir, filename);
  CheckpointState parsed;
  const char *type = "";
  const Status status = ReadStateFile(path, &parsed, &type);
  *found = false;
  if (status.code() == TW_NOT_FOUND) return Status();
  if (!status.ok()) {
    Log(TW_LOG_WARNING, "%s: %s", type, status.message().c_str());
    Log(TW_LOG_WARNING, "%s: Checkpoint ignored", path.c_str());
    return Status();
  }
  if (parsed.model_checkpoint_path.empty()) return InvalidState(dir);
  JoinPaths(dir, &parsed);
  *state = std::move(parsed);
  *found = true;
  return Status();
}

Status LoadCheckpointState(const std::string &dir, const std::string &filename, CheckpointState *state) {
  CheckpointState parsed;
  const char *type = "";
  TW_RETURN_IF_ERROR(ReadStateFile(JoinPath(dir, filename), &parsed, &type));
  if (parsed.model_checkpoint_path.empty()) return InvalidState(dir);
  JoinPaths(dir, &parsed);
  *state = std::move(parsed);
  return Status();
}

Status LatestCheckpoint(const std::string &dir, std::string *path, const std::string &filename) {
  CheckpointState state;
  bool found = false;
  TW_RETURN_IF_ERROR(ReadCheckpointState(dir, filename, &state, &found));
  if (!found) {
    path->clear();
    return Status();
  }
  // A TF V2 checkpoint is "<p>.index" + data files; a trainwatch (or TF V1) checkpoint is "<p>" itself.
  const std::string &p = state.model_checkpoint_path;
  if (PathExists(p) || PathExists(p + ".index")) {
    *path = p;
  } else {
    Log(TW_LOG_ERROR, "Couldn't match files for checkpoint %s", p.c_str());
    path->clear();
  }
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
