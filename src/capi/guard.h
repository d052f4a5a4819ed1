// What every extern "C" entry point is wrapped in: catch everything, store the message, return a code.
#ifndef TRAINWATCH_CAPI_GUARD_H
#define TRAINWATCH_CAPI_GUARD_H

#include <exception>
#include <new>
#include <string>

#include "base/status.h"
#include "trainwatch.h"  // every shim sees its TW_API declaration, so it is exported

namespace tw {
namespace capi {

// Stores the status's message for this thread and returns its code.
inline tw_status Fail(const Status &status) {
  SetThreadErrorMessage(status.message());
  return status.code();
}

// Runs `body` (returning Status) so that no exception crosses the ABI.
template <typename Body>
tw_status Guard(Body &&body) noexcept {
  try {
    const Status status = body();
    return status.ok() ? TW_OK : Fail(status);
  } catch (const std::bad_alloc &) {
    return Fail(Status(TW_RESOURCE_EXHAUSTED, "out of memory"));
  } catch (const std::exception &e) {
    return Fail(Status(TW_INTERNAL, std::string("internal error: ") + e.what()));
  } catch (...) {
    return Fail(Status(TW_INTERNAL, "internal error: unknown exception"));
  }
}

// Fails unless `pointer` is non-NULL; `what` names the argument.
#define TW_CHECK_ARG(pointer, what)                                                         \
  do {                                                                                      \
    if ((pointer) == nullptr) return ::tw::Errorf(TW_INVALID_ARGUMENT, "%s is NULL", what); \
  } while (0)

}  // namespace capi
}  // namespace tw

#endif  // TRAINWATCH_CAPI_GUARD_H
