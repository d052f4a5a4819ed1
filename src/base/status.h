// A status with a message: what every internal function returns instead of throwing.
#ifndef TRAINWATCH_BASE_STATUS_H
#define TRAINWATCH_BASE_STATUS_H

#include <cstdarg>
#include <cstdint>
#include <string>
#include <utility>

#include "trainwatch/common.h"

namespace tw {

class Status {
 public:
  Status() = default;  // OK; allocates nothing, so the hot path returns it for free
  Status(tw_status code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == TW_OK; }
  tw_status code() const { return code_; }
  const std::string &message() const { return message_; }

  // The same code with "<prefix><message>", for adding where an error happened.
  Status WithPrefix(const std::string &prefix) const { return Status(code_, prefix + message_); }

 private:
  tw_status code_ = TW_OK;
  std::string message_;
};

// printf-style constructor: Errorf(TW_NOT_FOUND, "no variable '%s'", name).
Status Errorf(tw_status code, const char *format, ...) __attribute__((format(printf, 2, 3)));

// vsnprintf into a std::string.
std::string FormatV(const char *format, va_list args);

// This thread's last error message: what tw_last_error_message() returns. The C shims store failures
// here; callback hooks read it to learn what a failing callback said through tw_set_error.
void SetThreadErrorMessage(std::string message);
const std::string &ThreadErrorMessage();

// "TW_ABORTED" for TW_ABORTED, "TW_UNKNOWN_STATUS" for a value not listed (tw_status_name's text).
const char *StatusName(tw_status status);
// Counts SetThreadErrorMessage calls on this thread, so a caller can tell whether a callback stored a
// message without clearing the user's last one.
uint64_t ThreadErrorGeneration();

// Calls a user callback (`call` returns its tw_status) and turns a failure into a Status whose message
// is "<where><what the callback stored through tw_set_error>", or "<where>returned <code name>" when it
// stored nothing.
// `where` is a string, or a callable returning one: it is only evaluated when the callback failed, so
// that callers on the per-step path build no text.
inline std::string DescribeWhere(const char *where) { return where; }
inline std::string DescribeWhere(const std::string &where) { return where; }
template <typename Where>
auto DescribeWhere(const Where &where) -> decltype(std::string(where())) {
  return where();
}

template <typename Where, typename Call>
Status CallUserCallback(const Where &where, Call call) {
  const uint64_t generation = ThreadErrorGeneration();
  const tw_status code = call();
  if (code == TW_OK) return Status();
  const std::string prefix = DescribeWhere(where);
  if (ThreadErrorGeneration() != generation) return Status(code, prefix + ThreadErrorMessage());
  return Status(code, prefix + "returned " + StatusName(code));
}

// A Status for a failed OS call: code TW_IO, or TW_RESOURCE_EXHAUSTED for a resource that ran out
// (ENOSPC, EDQUOT, EFBIG, ENOMEM, ENOBUFS, and EMFILE/ENFILE: no descriptor left), message
// "<what>: <strerror(err)>".
Status ErrnoStatus(int err, const std::string &what);

}  // namespace tw

// Returns from the enclosing function when `expr` yields a non-OK Status.
#define TW_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::tw::Status tw_status_ = (expr);        \
    if (!tw_status_.ok()) return tw_status_; \
  } while (0)

#endif  // TRAINWATCH_BASE_STATUS_H
