// extern "C" shims for trainwatch/common.h.
#include "base/enum_bits.h"
#include "base/log.h"
#include "base/tensor.h"
#include "capi/guard.h"

using tw::capi::Guard;

extern "C" {

unsigned tw_version_number(void) { return TW_VERSION_NUMBER; }
const char *tw_version_string(void) { return TW_VERSION_STRING; }

const char *tw_status_name(tw_status status) { return tw::StatusName(status); }

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

int64_t tw_tensor_element_count(const tw_tensor *t) {
  int64_t count = -1;
  const tw_status status = Guard([&] {
    tw_tensor view;
    TW_RETURN_IF_ERROR(tw::ReadTensor(t, "tensor", &view, tw::Place::kHostOrDevice));  // reads no data
    count = tw::ElementCount(view);
    return tw::Status();
  });
  return status == TW_OK ? count : -1;
}

void tw_set_log_sink(tw_log_fn fn, void *user_data) { tw::SetLogSink(fn, user_data); }
void tw_set_log_level(tw_log_level level) { tw::SetLogLevel(level); }

}  // extern "C"
