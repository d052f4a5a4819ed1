#include "base/status.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace tw {

namespace {
thread_local std::string t_error_message;
thread_local uint64_t t_error_generation = 0;
}  // namespace

std::string FormatV(const char *format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string text(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(&text[0], text.size() + 1, format, args);
  return text;
}

Status Errorf(tw_status code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string message = FormatV(format, args);
  va_end(args);
  return Status(code, std::move(message));
}

void SetThreadErrorMessage(std::string message) {
  t_error_message = std::move(message);
  ++t_error_generation;
}
const std::string &ThreadErrorMessage() { return t_error_message; }
uint64_t ThreadErrorGeneration() { return t_error_generation; }

const char *StatusName(tw_status status) {
  switch (status) {
#define TW_STATUS_CASE(code) \
  case code: return #code;
    TW_STATUS_CASE(TW_OK)
    TW_STATUS_CASE(TW_CANCELLED)
    TW_STATUS_CASE(TW_UNKNOWN)
    TW_STATUS_CASE(TW_INVALID_ARGUMENT)
    TW_STATUS_CASE(TW_DEADLINE_EXCEEDED)
    TW_STATUS_CASE(TW_NOT_FOUND)
    TW_STATUS_CASE(TW_ALREADY_EXISTS)
    TW_STATUS_CASE(TW_PERMISSION_DENIED)
    TW_STATUS_CASE(TW_RESOURCE_EXHAUSTED)
    TW_STATUS_CASE(TW_FAILED_PRECONDITION)
    TW_STATUS_CASE(TW_ABORTED)
    TW_STATUS_CASE(TW_OUT_OF_RANGE)
    TW_STATUS_CASE(TW_UNIMPLEMENTED)
    TW_STATUS_CASE(TW_INTERNAL)
    TW_STATUS_CASE(TW_UNAVAILABLE)
    TW_STATUS_CASE(TW_DATA_LOSS)
    TW_STATUS_CASE(TW_UNAUTHENTICATED)
    TW_STATUS_CASE(TW_NAN_LOSS)
    TW_STATUS_CASE(TW_IO)
    TW_STATUS_CASE(TW_STOP_ITERATION)
    TW_STATUS_CASE(TW_CALLBACK_FAILED)
#undef TW_STATUS_CASE
    default: return "TW_UNKNOWN_STATUS";
  }
}

Status ErrnoStatus(int err, const std::string &what) {
  const tw_status code = (err == ENOSPC || err == ENOMEM || err == EDQUOT || err == EFBIG || err == EMFILE ||
                          err == ENFILE || err == ENOBUFS)
                             ? TW_RESOURCE_EXHAUSTED
                             : TW_IO;
  return Status(code, what + ": " + std::strerror(err));
}

}  // namespace tw
