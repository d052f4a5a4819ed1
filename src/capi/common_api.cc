// extern "C" shims for trainwatch/common.h.
#include "base/enum_bits.h"
#include "base/log.h"
#include "base/tensor.h"
#include "capi/guard.h"

using tw::capi::Guard;

extern "C" {

unsigned tw_version_number(void) { return TW_VERSION_NUMBER; }
const char *tw_version_string(void) { return TW_VERSION_STRING; }

const char *tw_status_name(tw_status status) {
  switch (status) {
#define TW_STATUS_CASE(code) \
  case code:                 \
    return #code;
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
    default:
      return "TW_UNKNOWN_STATUS";
  }
}

const char *tw_last_error_message(void) { return tw::ThreadErrorMessage().c_str(); }

tw_status tw_set_error(tw_status status, const char *message) {
  try {
    tw::SetThreadErrorMessage(message != nullptr ? message : "");
  } catch (...) {  // out of memory while storing the text: the code still gets through
  }
  return status;
}

size_t tw_dtype_size(tw_dtype dtype) { return tw::DtypeSize(tw::EnumBits(dtype)); }
const char *tw_dtype_name(tw_dtype dtype) { return tw::DtypeName(tw::EnumBits(dtype)); }

void tw_tensor_init(tw_tensor *t) {
  if (t == nullptr) return;
  const tw_tensor init = TW_TENSOR_INIT;
  *t = init;
}

int64_t tw_tensor_element_count(const tw_tensor *t) {
  int64_t count = -1;
  const tw_status status = Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckTensor(t, "tensor"));
    count = tw::ElementCount(*t);
    return tw::Status();
  });
  return status == TW_OK ? count : -1;
}

void tw_set_log_sink(tw_log_fn fn, void *user_data) { tw::SetLogSink(fn, user_data); }
void tw_set_log_level(tw_log_level level) { tw::SetLogLevel(level); }

}  // extern "C"
