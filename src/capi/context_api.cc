// extern "C" shims for run contexts and step contexts in trainwatch/session.h.
#include "capi/guard.h"
#include "session/session.h"

using tw::Status;
using tw::capi::Guard;

extern "C" {

tw_status tw_run_context_request_fetch(tw_run_context *ctx, const char *name) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->RequestFetch(name);
  });
}

tw_status tw_run_context_add_feed(tw_run_context *ctx, const tw_tensor *feed) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->AddFeed(feed);
  });
}

tw_status tw_run_context_request_stop(tw_run_context *ctx) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->RequestStop();
  });
}

int tw_run_context_stop_requested(const tw_run_context *ctx) { return ctx != nullptr && ctx->stop_requested; }

tw_session *tw_run_context_session(tw_run_context *ctx) { return ctx != nullptr ? ctx->session : nullptr; }

size_t tw_run_context_original_feed_count(const tw_run_context *ctx) {
  return ctx != nullptr ? ctx->user_feed_count : 0;
}

tw_status tw_run_context_original_feed(const tw_run_context *ctx, size_t index, tw_tensor *out) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->OriginalFeedAt(index, out);
  });
}

tw_status tw_run_context_get_result(const tw_run_context *ctx, const char *name, tw_tensor *out) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->GetResult(name, out);
  });
}

size_t tw_run_context_result_count(const tw_run_context *ctx) { return ctx != nullptr ? ctx->ResultCount() : 0; }

tw_status tw_run_context_result_at(const tw_run_context *ctx, size_t index, tw_tensor *out) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->ResultAt(index, out);
  });
}

size_t tw_run_context_request_count(const tw_run_context *ctx) { return ctx != nullptr ? ctx->RequestCount() : 0; }

tw_status tw_run_context_request_at(const tw_run_context *ctx, size_t index, const char **out) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->RequestAt(index, out);
  });
}

size_t tw_step_context_feed_count(const tw_step_context *ctx) { return ctx != nullptr ? ctx->FeedCount() : 0; }

tw_status tw_step_context_feed_at(const tw_step_context *ctx, size_t index, tw_tensor *out) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->FeedAt(index, out);
  });
}

tw_status tw_step_context_find_feed(const tw_step_context *ctx, const char *name, tw_tensor *out) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->FindFeed(name, out);
  });
}

int tw_step_context_is_requested(const tw_step_context *ctx, const char *name) {
  return ctx != nullptr && name != nullptr && ctx->IsRequested(name);
}

size_t tw_step_context_requested_count(const tw_step_context *ctx) {
  return ctx != nullptr ? ctx->requested.size() : 0;
}

tw_status tw_step_context_requested_at(const tw_step_context *ctx, size_t index, const char **out) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    TW_CHECK_ARG(out, "out");
    if (index >= ctx->requested.size()) {
      return tw::Errorf(TW_OUT_OF_RANGE, "requested index %zu is past the %zu requested names", index,
                        ctx->requested.size());
    }
    *out = ctx->requested[index].c_str();
    return Status();
  });
}

tw_status tw_step_context_publish(tw_step_context *ctx, const tw_tensor *output) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->Publish(output, /*copy=*/false);
  });
}

tw_status tw_step_context_publish_copy(tw_step_context *ctx, const tw_tensor *output) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return ctx->Publish(output, /*copy=*/true);
  });
}

int64_t tw_step_context_global_step(const tw_step_context *ctx) {
  return ctx != nullptr ? ctx->global_step_at_start : 0;
}

tw_status tw_step_context_set_global_step(tw_step_context *ctx, int64_t value) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    ctx->global_step_set = true;
    ctx->new_global_step = value;
    return Status();
  });
}

tw_status tw_step_context_request_stop(tw_step_context *ctx) {
  return Guard([&] {
    TW_CHECK_ARG(ctx, "ctx");
    return Status(TW_STOP_ITERATION, "step_fn has requested the iterations to stop.");
  });
}

tw_session *tw_step_context_session(tw_step_context *ctx) { return ctx != nullptr ? ctx->session : nullptr; }

}  // extern "C"
