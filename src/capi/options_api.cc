// extern "C" shims for the options part of trainwatch/session.h.
#include <cstring>
#include <memory>

#include "base/versioned.h"
#include "capi/guard.h"
#include "session/options.h"

using tw::Status;
using tw::capi::Guard;

extern "C" {

tw_status tw_options_create(tw_options **out) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    *out = new tw_options();
    return Status();
  });
}

void tw_options_destroy(tw_options *opts) { delete opts; }

tw_status tw_options_set_int64(tw_options *opts, tw_option key, int64_t value) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    TW_RETURN_IF_ERROR(tw::CheckOptionKey(key));
    return opts->SetInt64(key, value);
  });
}

tw_status tw_options_set_double(tw_options *opts, tw_option key, double value) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    TW_RETURN_IF_ERROR(tw::CheckOptionKey(key));
    return opts->SetDouble(key, value);
  });
}

tw_status tw_options_set_string(tw_options *opts, tw_option key, const char *value) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    TW_RETURN_IF_ERROR(tw::CheckOptionKey(key));
    return opts->SetString(key, value);
  });
}

tw_status tw_options_set_none(tw_options *opts, tw_option key) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    TW_RETURN_IF_ERROR(tw::CheckOptionKey(key));
    return opts->SetNone(key);
  });
}

tw_status tw_options_get_state(tw_option_state *out, const tw_options *opts, tw_option key) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    TW_RETURN_IF_ERROR(tw::CheckOptionKey(key));
    TW_CHECK_ARG(out, "out");
    return opts->GetState(key, out);
  });
}

tw_status tw_options_get_int64(int64_t *out, const tw_options *opts, tw_option key) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    TW_RETURN_IF_ERROR(tw::CheckOptionKey(key));
    TW_CHECK_ARG(out, "out");
    return opts->GetInt64(key, out);
  });
}

tw_status tw_options_get_double(double *out, const tw_options *opts, tw_option key) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    TW_RETURN_IF_ERROR(tw::CheckOptionKey(key));
    TW_CHECK_ARG(out, "out");
    return opts->GetDouble(key, out);
  });
}

tw_status tw_options_get_string(const char **out, const tw_options *opts, tw_option key) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    TW_RETURN_IF_ERROR(tw::CheckOptionKey(key));
    TW_CHECK_ARG(out, "out");
    return opts->GetString(key, out);
  });
}

tw_status tw_option_info_by_key(tw_option_info *out, tw_option key) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckOutVersioned(out, "out"));
    tw_option_info info;
    TW_RETURN_IF_ERROR(tw::DescribeOption(key, &info));
    tw::WriteVersioned(info, out);
    return Status();
  });
}

tw_status tw_option_info_by_name(tw_option_info *out, const char *name) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckOutVersioned(out, "out"));
    TW_CHECK_ARG(name, "name");
    tw_option_info info;
    TW_RETURN_IF_ERROR(tw::DescribeOptionNamed(name, &info));
    tw::WriteVersioned(info, out);
    return Status();
  });
}

tw_status tw_options_set_recoverable(tw_options *opts, tw_status status, int recoverable) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    return opts->SetRecoverable(status, recoverable != 0);
  });
}

tw_status tw_options_add_variable(tw_options *opts, const tw_tensor *var) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    return opts->RecordError(opts->AddVariable(var));
  });
}

tw_status tw_options_record_error(tw_options *opts, tw_status code, const char *message) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    if (code == TW_OK || std::strcmp(tw::StatusName(code), "TW_UNKNOWN_STATUS") == 0) {
      return tw::Errorf(TW_INVALID_ARGUMENT, "code must be a failing tw_status, got %d", static_cast<int>(code));
    }
    (void)opts->RecordError(Status(code, message != nullptr ? message : tw::StatusName(code)));
    return Status();
  });
}

tw_status tw_options_set_init_fn(tw_options *opts, tw_init_fn fn, void *user_data, void (*destroy)(void *)) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    opts->init_fn = fn == nullptr ? nullptr : std::make_shared<tw::UserCallback<tw_init_fn>>(fn, user_data, destroy);
    return Status();
  });
}

tw_status tw_options_set_ready_fn(tw_options *opts, tw_ready_fn fn, void *user_data, void (*destroy)(void *)) {
  return Guard([&] {
    TW_CHECK_ARG(opts, "opts");
    opts->ready_fn = fn == nullptr ? nullptr : std::make_shared<tw::UserCallback<tw_ready_fn>>(fn, user_data, destroy);
    return Status();
  });
}

}  // extern "C"
