#include "session/run_context.h"

#include <fnmatch.h>

#include <cstring>

#include "base/versioned.h"
#include "device/transfer.h"
#include "session/session.h"

namespace tw {

bool IsPattern(const char *name) { return std::strpbrk(name, "*?[") != nullptr; }

bool MatchesPattern(const std::string &pattern, const std::string &name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

namespace {

bool HasName(const tw_tensor &t) { return t.name != nullptr && t.name[0] != '\0'; }

// "['a', 'b']", the way TF prints the conflicting keys of two feed dicts.
std::string PythonList(const std::vector<std::string> &names) {
  std::string text = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += ", ";
    text += "'" + names[i] + "'";
  }
  return text + "]";
}

}  // namespace

Status CheckFeeds(const tw_tensor *feeds, size_t feed_count, const char *what, Place place) {
  if (feed_count > 0 && feeds == nullptr) {
    return Errorf(TW_INVALID_ARGUMENT, "%s is NULL but its count is %zu", what, feed_count);
  }
  for (size_t i = 0; i < feed_count; ++i) {
    const std::string where = std::string(what) + "[" + std::to_string(i) + "]";
    tw_tensor view;
    TW_RETURN_IF_ERROR(ReadTensor(&feeds[i], where, &view, place));
    if (!HasName(feeds[i])) return Errorf(TW_INVALID_ARGUMENT, "%s has no name", where.c_str());
    for (size_t j = 0; j < i; ++j) {
      if (std::strcmp(feeds[i].name, feeds[j].name) == 0) {
        return Errorf(TW_INVALID_ARGUMENT, "%s and %s[%zu] both feed '%s'", where.c_str(), what, j, feeds[i].name);
      }
    }
  }
  return Status();
}

}  // namespace tw

using tw::Errorf;
using tw::Status;

// ---- tw_run_context --------------------------------------------------------------------------------

void tw_run_context::Reset(tw::Session *owner, size_t hook_count, const tw_tensor *feeds, size_t feed_count) {
  session = owner;
  phase = Phase::kIdle;
  hook_index = 0;
  stop_requested = false;
  feed_error = Status();
  user_feeds = feeds;
  user_feed_count = feed_count;
  if (hooks.size() != hook_count) hooks.resize(hook_count);
  for (PerHook &hook : hooks) {
    hook.fetches.Clear();
    hook.results.clear();
  }
  hook_feeds.Clear();
}

Status tw_run_context::RequestFetch(const char *name) {
  if (phase != Phase::kBeforeRun) {
    return Status(TW_FAILED_PRECONDITION, "fetches can only be requested in before_run");
  }
  if (name == nullptr || name[0] == '\0') return Status(TW_INVALID_ARGUMENT, "fetch name is NULL or empty");
  PerHook &hook = hooks[hook_index];
  for (const std::string &existing : hook.fetches) {
    if (existing == name) return Status();
  }
  hook.fetches.Append().assign(name);
  return Status();
}

Status tw_run_context::AddFeed(const tw_tensor *in) {
  if (phase != Phase::kBeforeRun) return Status(TW_FAILED_PRECONDITION, "feeds can only be added in before_run");
  tw_tensor view;
  TW_RETURN_IF_ERROR(tw::ReadTensor(in, "feed", &view, tw::Place::kHostOrDevice));  // V5: passed on untouched
  const tw_tensor *feed = &view;
  if (!tw::HasName(*feed)) return Status(TW_INVALID_ARGUMENT, "feed has no name");
  for (const tw::TensorRef &existing : hook_feeds) {
    if (existing.name() == feed->name) {
      // H22: raised at once, even if the hook ignores this status.
      feed_error =
          Status(TW_INVALID_ARGUMENT, "Same tensor is fed by two hooks. Conflict(s): " + tw::PythonList({feed->name}));
      return feed_error;
    }
  }
  hook_feeds.Append().Assign(*feed, feed->name);
  return Status();
}

Status tw_run_context::CheckUserFeedConflicts() const {
  std::vector<std::string> conflicts;
  for (size_t i = 0; i < user_feed_count; ++i) {
    for (const tw::TensorRef &hook_feed : hook_feeds) {
      if (hook_feed.name() == user_feeds[i].name) conflicts.push_back(hook_feed.name());
    }
  }
  if (conflicts.empty()) return Status();
  return Status(TW_INVALID_ARGUMENT,
                "Same tensor is fed by a SessionRunHook and user. Conflict(s): " + tw::PythonList(conflicts));
}

Status tw_run_context::RequestStop() {
  if (phase == Phase::kIdle)
    return Status(TW_FAILED_PRECONDITION, "request_stop is only valid in before_run or after_run");
  stop_requested = true;
  return Status();
}

size_t tw_run_context::ResultCount() const { return phase == Phase::kAfterRun ? hooks[hook_index].results.size() : 0; }

// The acting hook's requests so far: what a binding turns into super().before_run's SessionRunArgs.
size_t tw_run_context::RequestCount() const { return phase != Phase::kIdle ? hooks[hook_index].fetches.size() : 0; }

Status tw_run_context::RequestAt(size_t index, const char **out) const {
  if (out == nullptr) return Status(TW_INVALID_ARGUMENT, "out is NULL");
  if (phase == Phase::kIdle) {
    return Status(TW_FAILED_PRECONDITION, "requests are only available in before_run or after_run");
  }
  const PerHook &hook = hooks[hook_index];
  if (index >= hook.fetches.size()) {
    return Errorf(TW_OUT_OF_RANGE, "request index %zu is past the %zu requests of this hook", index,
                  hook.fetches.size());
  }
  *out = hook.fetches[index].c_str();
  return Status();
}

Status tw_run_context::ResultAt(size_t index, tw_tensor *out) const {
  TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
  if (phase != Phase::kAfterRun) return Status(TW_FAILED_PRECONDITION, "results are only available in after_run");
  const PerHook &hook = hooks[hook_index];
  if (index >= hook.results.size()) {
    return Errorf(TW_OUT_OF_RANGE, "result index %zu is past the %zu results of this hook", index, hook.results.size());
  }
  return hook.results[index]->WriteTo(out);
}

Status tw_run_context::GetResult(const char *name, tw_tensor *out) const {
  if (name == nullptr) return Status(TW_INVALID_ARGUMENT, "name is NULL");
  TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
  if (phase != Phase::kAfterRun) return Status(TW_FAILED_PRECONDITION, "results are only available in after_run");
  for (const tw::TensorRef *result : hooks[hook_index].results) {
    if (result->name() == name) {
      return result->WriteTo(out);
    }
  }
  const tw::Hook *hook = session->hook(hook_index);
  return Errorf(TW_NOT_FOUND, "hook '%s' did not request '%s' in before_run", hook->name().c_str(), name);
}

Status tw_run_context::OriginalFeedAt(size_t index, tw_tensor *out) const {
  TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
  if (index >= user_feed_count) {
    return Errorf(TW_OUT_OF_RANGE, "feed index %zu is past the caller's %zu feeds", index, user_feed_count);
  }
  return tw::WriteView(user_feeds[index], out);
}

// ---- tw_step_context -------------------------------------------------------------------------------

void tw_step_context::Reset(tw::Session *owner, const tw::RunContext *run_context, const tw_tensor *feeds,
                            size_t feed_count, int64_t global_step) {
  session = owner;
  run = run_context;
  user_feeds = feeds;
  user_feed_count = feed_count;
  global_step_at_start = global_step;
  global_step_set = false;
  new_global_step = global_step;
  outputs.Clear();
  requested.Clear();
  if (run == nullptr) return;
  for (const tw::RunContext::PerHook &hook : run->hooks) {
    for (const std::string &name : hook.fetches) {
      bool seen = false;
      for (const std::string &existing : requested) seen = seen || existing == name;
      if (!seen) requested.Append().assign(name);
    }
  }
}

size_t tw_step_context::FeedCount() const { return (run != nullptr ? run->hook_feeds.size() : 0) + user_feed_count; }

Status tw_step_context::FeedAt(size_t index, tw_tensor *out) const {
  TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
  const size_t hook_feed_count = run != nullptr ? run->hook_feeds.size() : 0;
  if (index < hook_feed_count) {
    return run->hook_feeds[index].WriteTo(out);
  }
  if (index - hook_feed_count >= user_feed_count) {
    return Errorf(TW_OUT_OF_RANGE, "feed index %zu is past the %zu feeds of this run", index, FeedCount());
  }
  return tw::WriteView(user_feeds[index - hook_feed_count], out);
}

Status tw_step_context::FindFeed(const char *name, tw_tensor *out) const {
  if (name == nullptr) return Status(TW_INVALID_ARGUMENT, "name is NULL");
  TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
  tw_tensor view = TW_TENSOR_INIT;
  for (size_t i = 0; i < FeedCount(); ++i) {
    TW_RETURN_IF_ERROR(FeedAt(i, &view));
    if (std::strcmp(view.name, name) == 0) return tw::WriteView(view, out);
  }
  return Errorf(TW_NOT_FOUND, "no feed named '%s' in this run", name);
}

bool tw_step_context::IsRequested(const char *name) const {
  for (const std::string &entry : requested) {
    if (entry == name || (tw::IsPattern(entry.c_str()) && tw::MatchesPattern(entry, name))) return true;
  }
  return false;
}

const tw::TensorRef *tw_step_context::FindOutput(const std::string &name) const {
  for (const tw::TensorRef &output : outputs) {
    if (output.name() == name) return &output;
  }
  return nullptr;
}

Status tw_step_context::Publish(const tw_tensor *in, bool copy) {
  tw_tensor view;
  TW_RETURN_IF_ERROR(tw::ReadTensor(in, "output", &view, tw::Place::kHostOrDevice));
  const tw_tensor *output = &view;
  if (!tw::HasName(*output)) return Status(TW_INVALID_ARGUMENT, "output has no name");
  const std::string name = output->name;
  if (name == "global_step") {
    return Status(TW_INVALID_ARGUMENT, "'global_step' is the session's; set it with tw_step_context_set_global_step");
  }
  if (session->FindVariable(name) != nullptr) {
    return Errorf(TW_INVALID_ARGUMENT, "'%s' is a registered variable; hooks fetch it by name already", name.c_str());
  }
  size_t slot = 0;
  while (slot < outputs.size() && outputs[slot].name() != name) ++slot;
  tw::TensorRef &ref = slot < outputs.size() ? outputs[slot] : outputs.Append();
  if (!copy) {
    ref.Assign(*output, output->name);
    return Status();
  }
  if (copies.size() <= slot) copies.resize(slot + 1);
  std::vector<unsigned char> &store = copies[slot];
  store.resize(static_cast<size_t>(tw::ElementCount(*output)) * tw::DtypeSize(output->dtype));
  if (tw::IsOnDevice(*output)) {  // V6: the kept copy of a device value is host memory
    tw::device::HostCopy host;
    TW_RETURN_IF_ERROR(tw::device::HostCopy::Make(*output, &host));
    if (!store.empty()) std::memcpy(store.data(), host.view().data, store.size());
  } else {
    tw::CopyToContiguous(*output, store.data());
  }
  tw_tensor packed = *output;
  packed.strides = nullptr;
  packed.data = store.data();
  packed.device_type = TW_DEVICE_HOST;
  packed.device_id = 0;
  ref.Assign(packed, output->name);
  return Status();
}
