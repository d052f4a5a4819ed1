// extern "C" shims for the built-in hooks of trainwatch/hooks.h.
#include "capi/guard.h"
#include "hooks/checkpoint_saver_hook.h"
#include "hooks/nan_tensor_hook.h"
#include "hooks/stop_at_step_hook.h"

using tw::Status;
using tw::capi::Guard;

extern "C" {

tw_status tw_stop_at_step_hook_create(tw_hook **out, int64_t num_steps, int64_t last_step) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    return tw::NewStopAtStepHook(num_steps, last_step, out);
  });
}

tw_status tw_nan_tensor_hook_create(tw_hook **out, const char *loss_name, int fail_on_nan_loss) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    if (loss_name == nullptr || loss_name[0] == '\0') {
      return Status(TW_INVALID_ARGUMENT, "loss_name is NULL or empty");
    }
    tw::NanGuardConfig config;
    config.watch.emplace_back(loss_name);
    config.action = fail_on_nan_loss ? TW_NAN_ACTION_FAIL : TW_NAN_ACTION_STOP;
    config.detect_inf = false;  // TF's hook sees NaN only (B32)
    return tw::NewNanTensorHook(std::move(config), out);
  });
}

tw_status tw_nan_tensor_hook_create_with_options(tw_hook **out, const char *const *watch, size_t n_watch,
                                                 const tw_options *opts, tw_nan_fn fn, void *user_data,
                                                 void (*destroy)(void *)) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    if (watch == nullptr || n_watch == 0) return Status(TW_INVALID_ARGUMENT, "watch is NULL or empty");
    const tw::Options &options = opts != nullptr ? *opts : tw::DefaultOptions();
    tw::NanGuardConfig config;
    for (size_t i = 0; i < n_watch; ++i) {
      if (watch[i] == nullptr || watch[i][0] == '\0') {
        return tw::Errorf(TW_INVALID_ARGUMENT, "watch[%zu] is NULL or empty", i);
      }
      config.watch.emplace_back(watch[i]);
    }
    config.action = static_cast<tw_nan_action>(options.Int64(TW_OPT_NAN_ACTION));
    config.detect_inf = options.Int64(TW_OPT_NAN_DETECT_INF) != 0;
    config.every_n_steps = options.Int64(TW_OPT_NAN_EVERY_N_STEPS);
    config.max_rollbacks = options.Int64(TW_OPT_NAN_MAX_ROLLBACKS);
    if (config.action == TW_NAN_ACTION_CALLBACK && fn == nullptr) {
      return Status(TW_INVALID_ARGUMENT, "TW_NAN_ACTION_CALLBACK needs a tw_nan_fn");
    }
    // Built last: from here on the callback owns user_data, and a failure frees it through destroy.
    if (fn != nullptr) config.callback = std::make_shared<tw::UserCallback<tw_nan_fn>>(fn, user_data, destroy);
    return tw::NewNanTensorHook(std::move(config), out);
  });
}

tw_status tw_checkpoint_listener_create(tw_checkpoint_listener **out, const char *name,
                                        const tw_checkpoint_listener_callbacks *callbacks, void *user_data) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    return tw::NewCheckpointListener(name, callbacks, user_data, out);
  });
}

void tw_checkpoint_listener_destroy(tw_checkpoint_listener *listener) {
  if (listener != nullptr) listener->Unref();
}

tw_status tw_checkpoint_saver_hook_create(tw_hook **out, const char *checkpoint_dir, const tw_options *opts,
                                          tw_checkpoint_listener *const *listeners, size_t n_listeners) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    if (n_listeners > 0 && listeners == nullptr) {
      return tw::Errorf(TW_INVALID_ARGUMENT, "listeners is NULL but n_listeners is %zu", n_listeners);
    }
    for (size_t i = 0; i < n_listeners; ++i) {
      if (listeners[i] == nullptr) return tw::Errorf(TW_INVALID_ARGUMENT, "listeners[%zu] is NULL", i);
    }
    tw::CheckpointSaverConfig config;
    TW_RETURN_IF_ERROR(tw::MakeCheckpointSaverConfig(checkpoint_dir != nullptr ? checkpoint_dir : "",
                                                     opts != nullptr ? *opts : tw::DefaultOptions(), &config));
    for (size_t i = 0; i < n_listeners; ++i) {
      listeners[i]->Ref();
      config.listeners.push_back(listeners[i]);
    }
    return tw::NewCheckpointSaverHook(std::move(config), out);
  });
}

}  // extern "C"
