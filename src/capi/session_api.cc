// extern "C" shims for hooks and sessions in trainwatch/session.h and trainwatch/hooks.h.
#include "base/versioned.h"
#include "capi/guard.h"
#include "session/session.h"
#include "training/monitored_training_session.h"

using tw::Status;
using tw::capi::Guard;

namespace {

tw_status CreateSession(tw_session **out, const tw_options *opts, tw_hook *const *hooks, size_t n_hooks,
                        bool recoverable) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    return tw::Session::Create(opts != nullptr ? *opts : tw::DefaultOptions(), hooks, n_hooks, recoverable, out);
  });
}

}  // namespace

extern "C" {

tw_status tw_hook_create(tw_hook **out, const char *name, const tw_hook_callbacks *callbacks, void *user_data) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    return tw::NewCallbackHook(name, callbacks, user_data, out);
  });
}

tw_status tw_hook_wrap(tw_hook **out, const char *name, tw_hook *inner, const tw_hook_callbacks *callbacks,
                       void *user_data) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    return tw::NewWrappedHook(name, inner, callbacks, user_data, out);
  });
}

tw_status tw_hook_call_begin(tw_hook *inner, tw_session *session) {
  return Guard([&] {
    TW_CHECK_ARG(inner, "inner");
    TW_CHECK_ARG(session, "session");
    return tw::CallInnerBegin(inner, *session);
  });
}

tw_status tw_hook_call_after_create_session(tw_hook *inner, tw_session *session) {
  return Guard([&] {
    TW_CHECK_ARG(inner, "inner");
    TW_CHECK_ARG(session, "session");
    return tw::CallInnerAfterCreateSession(inner, *session);
  });
}

tw_status tw_hook_call_before_run(tw_hook *inner, tw_run_context *ctx) {
  return Guard([&] {
    TW_CHECK_ARG(inner, "inner");
    TW_CHECK_ARG(ctx, "ctx");
    return tw::CallInnerBeforeRun(inner, *ctx);
  });
}

tw_status tw_hook_call_after_run(tw_hook *inner, tw_run_context *ctx) {
  return Guard([&] {
    TW_CHECK_ARG(inner, "inner");
    TW_CHECK_ARG(ctx, "ctx");
    return tw::CallInnerAfterRun(inner, *ctx);
  });
}

tw_status tw_hook_call_end(tw_hook *inner, tw_session *session) {
  return Guard([&] {
    TW_CHECK_ARG(inner, "inner");
    TW_CHECK_ARG(session, "session");
    return tw::CallInnerEnd(inner, *session);
  });
}

void tw_hook_call_on_error(tw_hook *inner, tw_session *session, tw_status error) {
  // on_error cannot fail; a misplaced call is reported through tw_last_error_message only.
  (void)Guard([&] {
    TW_CHECK_ARG(inner, "inner");
    TW_CHECK_ARG(session, "session");
    return tw::CallInnerOnError(inner, *session, error);
  });
}

void tw_hook_destroy(tw_hook *hook) {
  if (hook != nullptr) hook->Unref();
}

const char *tw_hook_name(const tw_hook *hook) { return hook != nullptr ? hook->name().c_str() : nullptr; }

tw_status tw_monitored_session_create(tw_session **out, const tw_options *opts, tw_hook *const *hooks, size_t n_hooks) {
  return CreateSession(out, opts, hooks, n_hooks, /*recoverable=*/true);
}

tw_status tw_singular_monitored_session_create(tw_session **out, const tw_options *opts, tw_hook *const *hooks,
                                               size_t n_hooks) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    if (opts != nullptr && opts->Int64(TW_OPT_IS_CHIEF) == 0) {
      return Status(TW_INVALID_ARGUMENT, "a SingularMonitoredSession is always a chief; unset TW_OPT_IS_CHIEF");
    }
    return tw::Session::Create(opts != nullptr ? *opts : tw::DefaultOptions(), hooks, n_hooks, false, out);
  });
}

tw_status tw_monitored_training_session_create(tw_session **out, const tw_options *opts, tw_hook *const *hooks,
                                               size_t n_hooks, tw_hook *const *chief_only_hooks,
                                               size_t n_chief_only_hooks) {
  return Guard([&] {
    TW_CHECK_ARG(out, "out");
    return tw::CreateMonitoredTrainingSession(opts != nullptr ? *opts : tw::DefaultOptions(), hooks, n_hooks,
                                              chief_only_hooks, n_chief_only_hooks, out);
  });
}

tw_status tw_session_run(tw_session *session, const tw_tensor *feeds, size_t n_feeds, tw_step_fn step,
                         void *user_data) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    tw::VersionedArray<tw_tensor> views;
    TW_RETURN_IF_ERROR(views.Read(feeds, n_feeds, "feeds"));
    return session->Run(views.data(), n_feeds, step, user_data, /*with_hooks=*/true);
  });
}

tw_status tw_session_run_without_hooks(tw_session *session, const tw_tensor *feeds, size_t n_feeds, tw_step_fn step,
                                       void *user_data) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    tw::VersionedArray<tw_tensor> views;
    TW_RETURN_IF_ERROR(views.Read(feeds, n_feeds, "feeds"));
    return session->Run(views.data(), n_feeds, step, user_data, /*with_hooks=*/false);
  });
}

int tw_session_should_stop(const tw_session *session) { return session == nullptr || session->ShouldStop(); }

tw_status tw_session_request_stop(tw_session *session) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    return session->RequestStop();
  });
}

tw_status tw_session_close(tw_session *session) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    return session->Close();
  });
}

tw_status tw_session_destroy(tw_session *session) {
  return Guard([&] { return session != nullptr ? tw::Session::Destroy(session) : Status(); });
}

int64_t tw_session_global_step(const tw_session *session) { return session != nullptr ? session->global_step() : 0; }

tw_status tw_session_set_global_step(tw_session *session, int64_t value) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    return session->SetGlobalStep(value);
  });
}

tw_status tw_session_save_checkpoint(const char **out_path, tw_session *session, const char *prefix,
                                     int64_t global_step) {
  return Guard([&] {
    TW_CHECK_ARG(out_path, "out_path");
    TW_CHECK_ARG(session, "session");
    TW_CHECK_ARG(prefix, "prefix");
    if (prefix[0] == '\0') return Status(TW_INVALID_ARGUMENT, "prefix is empty");
    TW_RETURN_IF_ERROR(session->SaveCheckpoint(prefix, global_step));
    *out_path = session->saved_checkpoint().c_str();
    return Status();
  });
}

tw_status tw_session_get_output(tw_tensor *out, const tw_session *session, const char *name) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    return session->GetOutput(name, out);
  });
}

tw_status tw_session_get_variable(tw_tensor *out, const tw_session *session, const char *name) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    TW_CHECK_ARG(name, "name");
    TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
    const tw::TensorRef *variable = session->FindVariable(name);
    if (variable == nullptr) return tw::Errorf(TW_NOT_FOUND, "no variable named '%s' is registered", name);
    return variable->WriteTo(out);
  });
}

size_t tw_session_variable_count(const tw_session *session) {
  return session != nullptr ? session->variables().size() : 0;
}

tw_status tw_session_variable_at(tw_tensor *out, const tw_session *session, size_t index) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
    if (index >= session->variables().size()) {
      return tw::Errorf(TW_OUT_OF_RANGE, "variable index %zu is past the %zu registered variables", index,
                        session->variables().size());
    }
    return session->variables()[index].WriteTo(out);
  });
}

size_t tw_session_hook_count(const tw_session *session) { return session != nullptr ? session->hook_count() : 0; }

tw_status tw_session_hook_at(tw_hook **out, const tw_session *session, size_t index) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    TW_CHECK_ARG(out, "out");
    if (session->closed()) return Status(TW_FAILED_PRECONDITION, "Session is closed.");
    if (index >= session->hook_count()) {
      return tw::Errorf(TW_OUT_OF_RANGE, "hook index %zu is past the session's %zu hooks", index,
                        session->hook_count());
    }
    *out = session->hook(index);
    return Status();
  });
}

int tw_session_is_chief(const tw_session *session) { return session != nullptr && session->is_chief(); }

int64_t tw_session_creation_count(const tw_session *session) {
  return session != nullptr ? session->creation_count() : 0;
}

tw_status tw_session_notify_preemption(tw_session *session) {
  return Guard([&] {
    TW_CHECK_ARG(session, "session");
    session->agreement().NotifyPreemption();
    return Status();
  });
}

int tw_session_preempted(const tw_session *session) { return session != nullptr && session->agreement().preempted(); }

}  // extern "C"
