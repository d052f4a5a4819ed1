// extern "C" shims for the built-in hooks of trainwatch/hooks.h.
#include <memory>
#include <string>
#include <vector>

#include "base/versioned.h"
#include "capi/guard.h"
#include "capi/summary_writer_handle.h"
#include "hooks/checkpoint_saver_hook.h"
#include "hooks/feed_fn_hook.h"
#include "hooks/final_ops_hook.h"
#include "hooks/global_step_waiter_hook.h"
#include "hooks/logging_tensor_hook.h"
#include "hooks/nan_tensor_hook.h"
#include "hooks/profiler_hook.h"
#include "hooks/step_counter_hook.h"
#include "hooks/stop_at_step_hook.h"
#include "hooks/summary_saver_hook.h"
#include "session/run_context.h"

using tw::Status;
using tw::capi::Guard;

namespace {

std::shared_ptr<tw::summary::EventWriter> WriterOf(const tw_summary_writer *writer) {
  return writer != nullptr ? writer->writer : nullptr;
}

// A callback with its user_data; from here on the callback owns user_data and frees it through destroy.
template <typename Fn>
std::shared_ptr<tw::UserCallback<Fn>> Adopt(Fn fn, void *user_data, void (*destroy)(void *)) {
  return std::make_shared<tw::UserCallback<Fn>>(fn, user_data, destroy);
}

// Copies a C array of strings, rejecting NULL and empty entries; `what` names the array.
Status CopyNames(const char *const *names, size_t count, const char *what, std::vector<std::string> *out) {
  if (count > 0 && names == nullptr) {
    return tw::Errorf(TW_INVALID_ARGUMENT, "%s is NULL but its count is %zu", what, count);
  }
  for (size_t i = 0; i < count; ++i) {
    if (names[i] == nullptr || names[i][0] == '\0') {
      return tw::Errorf(TW_INVALID_ARGUMENT, "%s[%zu] is NULL or empty", what, i);
    }
    out->emplace_back(names[i]);
  }
  return Status();
}

// The final values of a FinalOpsHook whose final step completed; otherwise nullptr and *status says why.
const tw::FinalOpsValues *CompletedFinalValues(const tw_hook *hook, Status *status) {
  if (hook == nullptr) {
    *status = Status(TW_INVALID_ARGUMENT, "hook is NULL");
    return nullptr;
  }
  const tw::FinalOpsValues *values = tw::FinalOpsValuesOf(hook);
  if (values == nullptr) {
    *status = tw::Errorf(TW_INVALID_ARGUMENT, "hook '%s' is not a FinalOpsHook", hook->name().c_str());
    return nullptr;
  }
  if (!values->ran) {
    *status = Status(TW_FAILED_PRECONDITION, "the FinalOpsHook's final step has not completed (it runs in end())");
    return nullptr;
  }
  return values;
}

}  // namespace

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

tw_status tw_logging_tensor_hook_create(tw_hook **out, const char *const *names, const char *const *tags,
                                        size_t n_names, const tw_options *opts, tw_log_formatter_fn formatter,
                                        void *user_data, void (*destroy)(void *)) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    TW_CHECK_ARG(names, "names");
    if (n_names == 0) return Status(TW_INVALID_ARGUMENT, "n_names is 0: LoggingTensorHook needs tensors to log");
    const tw::Options &options = opts != nullptr ? *opts : tw::DefaultOptions();
    tw::LoggingTensorConfig config;
    TW_RETURN_IF_ERROR(CopyNames(names, n_names, "names", &config.names));
    if (tags != nullptr) TW_RETURN_IF_ERROR(CopyNames(tags, n_names, "tags", &config.tags));
    config.every = tw::EveryNFromOptions(options);
    config.at_end = options.Int64(TW_OPT_LOG_AT_END) != 0;
    config.max_elements = options.Int64(TW_OPT_LOG_MAX_ELEMENTS);
    if (formatter != nullptr) config.formatter = Adopt(formatter, user_data, destroy);
    return tw::NewLoggingTensorHook(std::move(config), out);
  });
}

tw_status tw_step_counter_hook_create(tw_hook **out, const tw_options *opts, tw_summary_writer *writer) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    const tw::Options &options = opts != nullptr ? *opts : tw::DefaultOptions();
    tw::StepCounterConfig config;
    config.every = tw::EveryNFromOptions(options, 100);  // TF's every_n_steps=100
    if (const std::string *dir = options.String(TW_OPT_OUTPUT_DIR)) config.output_dir = *dir;
    config.writer = WriterOf(writer);
    return tw::NewStepCounterHook(std::move(config), out);
  });
}

tw_status tw_summary_saver_hook_create(tw_hook **out, const char *const *summarize, size_t n_summarize,
                                       const tw_options *opts, tw_summary_writer *writer) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    const tw::Options &options = opts != nullptr ? *opts : tw::DefaultOptions();
    tw::SummarySaverConfig config;
    TW_RETURN_IF_ERROR(CopyNames(summarize, n_summarize, "summarize", &config.summarize));
    config.every = tw::EveryNFromOptions(options);
    if (const std::string *dir = options.String(TW_OPT_OUTPUT_DIR)) config.output_dir = *dir;
    config.writer = WriterOf(writer);
    if (options.Int64(TW_OPT_SUMMARY_HISTOGRAMS) == 0) {
      config.histograms.emplace();
    } else if (const std::string *names = options.String(TW_OPT_SUMMARY_HISTOGRAM_NAMES)) {
      config.histograms.emplace();
      TW_RETURN_IF_ERROR(tw::SplitNameList(*names, "TW_OPT_SUMMARY_HISTOGRAM_NAMES", &*config.histograms));
    }
    return tw::NewSummarySaverHook(std::move(config), out);
  });
}

tw_status tw_feed_fn_hook_create(tw_hook **out, tw_feed_fn fn, void *user_data, void (*destroy)(void *)) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    TW_CHECK_ARG(fn, "fn");
    return tw::NewFeedFnHook(Adopt(fn, user_data, destroy), out);
  });
}

tw_status tw_final_ops_hook_create(tw_hook **out, const tw_tensor *feeds, size_t n_feeds, tw_step_fn final_step,
                                   void *user_data, void (*destroy)(void *)) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    TW_CHECK_ARG(final_step, "final_step");
    tw::VersionedArray<tw_tensor> views;
    TW_RETURN_IF_ERROR(views.Read(feeds, n_feeds, "feeds"));
    TW_RETURN_IF_ERROR(tw::CheckFeeds(views.data(), n_feeds, "feeds"));
    tw::FinalOpsConfig config;
    config.feeds.resize(n_feeds);
    for (size_t i = 0; i < n_feeds; ++i) config.feeds[i].Assign(views.data()[i], views.data()[i].name);
    config.final_step = Adopt(final_step, user_data, destroy);
    return tw::NewFinalOpsHook(std::move(config), out);
  });
}

size_t tw_final_ops_hook_value_count(const tw_hook *hook) {
  const tw::FinalOpsValues *values = hook != nullptr ? tw::FinalOpsValuesOf(hook) : nullptr;
  return values != nullptr && values->ran ? values->values.size() : 0;
}

tw_status tw_final_ops_hook_value_at(tw_tensor *out, const tw_hook *hook, size_t index) {
  return Guard([&] {
    TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
    Status status;
    const tw::FinalOpsValues *values = CompletedFinalValues(hook, &status);
    if (values == nullptr) return status;
    if (index >= values->values.size()) {
      return tw::Errorf(TW_OUT_OF_RANGE, "index %zu is past the %zu final values", index, values->values.size());
    }
    values->values[index].FillView(out);
    return Status();
  });
}

tw_status tw_final_ops_hook_get_value(tw_tensor *out, const tw_hook *hook, const char *name) {
  return Guard([&] {
    TW_CHECK_ARG(name, "name");
    TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
    Status status;
    const tw::FinalOpsValues *values = CompletedFinalValues(hook, &status);
    if (values == nullptr) return status;
    for (const tw::TensorCopy &value : values->values) {
      if (value.name() == name) {
        value.FillView(out);
        return Status();
      }
    }
    return tw::Errorf(TW_NOT_FOUND, "the final step published no value named '%s'", name);
  });
}

tw_status tw_global_step_waiter_hook_create(tw_hook **out, int64_t wait_until_step, const tw_options *opts,
                                            tw_global_step_fn fn, void *user_data, void (*destroy)(void *)) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    const tw::Options &options = opts != nullptr ? *opts : tw::DefaultOptions();
    tw::GlobalStepWaiterConfig config;
    config.wait_until_step = wait_until_step;
    config.poll_secs = options.Double(TW_OPT_WAIT_POLL_SECS);
    config.max_wait_secs = options.Double(TW_OPT_WAIT_MAX_SECS);
    if (fn != nullptr) config.read_global_step = Adopt(fn, user_data, destroy);
    return tw::NewGlobalStepWaiterHook(std::move(config), out);
  });
}

tw_status tw_profiler_hook_create(tw_hook **out, const tw_options *opts) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    const tw::Options &options = opts != nullptr ? *opts : tw::DefaultOptions();
    tw::ProfilerConfig config;
    config.every = tw::EveryNFromOptions(options);
    if (const std::string *dir = options.String(TW_OPT_OUTPUT_DIR)) config.output_dir = *dir;
    return tw::NewProfilerHook(std::move(config), out);
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

tw_status tw_logging_tensor_hook_set_log_fn(tw_hook *hook, tw_log_tensors_fn fn, void *user_data,
                                            void (*destroy)(void *)) {
  return Guard([&] { return tw::SetLogTensorsFn(hook, fn, user_data, destroy); });
}

tw_status tw_logging_tensor_hook_log_tensors(tw_hook *hook, const tw_tensor *const *values, size_t n_values) {
  return Guard([&] { return tw::LogTensorsDefault(hook, values, n_values); });
}

tw_status tw_step_counter_hook_set_record_fn(tw_hook *hook, tw_step_rate_fn fn, void *user_data,
                                             void (*destroy)(void *)) {
  return Guard([&] { return tw::SetStepRateFn(hook, fn, user_data, destroy); });
}

tw_status tw_step_counter_hook_log_and_record(tw_hook *hook, int64_t elapsed_steps, double elapsed_time,
                                              int64_t global_step) {
  return Guard([&] { return tw::LogAndRecordDefault(hook, elapsed_steps, elapsed_time, global_step); });
}

tw_status tw_checkpoint_saver_hook_set_save_fn(tw_hook *hook, tw_checkpoint_save_fn fn, void *user_data,
                                               void (*destroy)(void *)) {
  return Guard([&] { return tw::SetCheckpointSaveFn(hook, fn, user_data, destroy); });
}

tw_status tw_checkpoint_saver_hook_save(int *out_stop, tw_hook *hook, tw_session *session, int64_t step) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    TW_CHECK_ARG(out_stop, "out_stop");
    bool wants_stop = false;
    TW_RETURN_IF_ERROR(tw::CheckpointSaveDefault(hook, *session, step, &wants_stop));
    *out_stop = wants_stop ? 1 : 0;
    return Status();
  });
}

}  // extern "C"
