// What hooks and the step function see during one run: TF's SessionRunContext (one per run, shared by
// every hook; requests and results kept per hook) and StepContext (merged feeds, requested names,
// published outputs). The session keeps one of each and refills them every run without allocating.
#ifndef TRAINWATCH_SESSION_RUN_CONTEXT_H
#define TRAINWATCH_SESSION_RUN_CONTEXT_H

#include <string>
#include <vector>

#include "base/tensor.h"
#include "session/hook.h"

struct tw_run_context {
  enum class Phase { kIdle, kBeforeRun, kAfterRun };

  // Prepares for a run of `hook_count` hooks with the caller's feeds (borrowed for the run).
  void Reset(tw::Session *owner, size_t hook_count, const tw_tensor *feeds, size_t feed_count);

  // Hook-facing operations (the C API forwards here).
  tw::Status RequestFetch(const char *name);
  tw::Status AddFeed(const tw_tensor *feed);
  tw::Status RequestStop();
  tw::Status GetResult(const char *name, tw_tensor *out) const;
  tw::Status ResultAt(size_t index, tw_tensor *out) const;
  size_t ResultCount() const;
  size_t RequestCount() const;
  tw::Status RequestAt(size_t index, const char **out) const;
  tw::Status OriginalFeedAt(size_t index, tw_tensor *out) const;

  // H23: the caller's feeds must not repeat a name a hook fed.
  tw::Status CheckUserFeedConflicts() const;

  struct PerHook {
    tw::ReusableList<std::string> fetches;       // names and patterns, first-request order
    std::vector<const tw::TensorRef *> results;  // resolved after the step
  };

  tw::Session *session = nullptr;
  Phase phase = Phase::kIdle;
  size_t hook_index = 0;  // whose callback is running
  bool stop_requested = false;
  tw::Status feed_error;  // a feed conflict found inside a hook's before_run (H22)
  const tw_tensor *user_feeds = nullptr;
  size_t user_feed_count = 0;
  std::vector<PerHook> hooks;
  tw::ReusableList<tw::TensorRef> hook_feeds;
};

struct tw_step_context {
  // Prepares for a step; `run` is nullptr for a run without hooks.
  void Reset(tw::Session *owner, const tw::RunContext *run, const tw_tensor *feeds, size_t feed_count,
             int64_t global_step);

  size_t FeedCount() const;
  tw::Status FeedAt(size_t index, tw_tensor *out) const;
  tw::Status FindFeed(const char *name, tw_tensor *out) const;
  bool IsRequested(const char *name) const;
  tw::Status Publish(const tw_tensor *output, bool copy);
  const tw::TensorRef *FindOutput(const std::string &name) const;

  tw::Session *session = nullptr;
  const tw::RunContext *run = nullptr;
  const tw_tensor *user_feeds = nullptr;
  size_t user_feed_count = 0;
  int64_t global_step_at_start = 0;
  bool global_step_set = false;
  int64_t new_global_step = 0;
  tw::ReusableList<std::string> requested;  // union of every hook's fetches, first-request order
  tw::ReusableList<tw::TensorRef> outputs;
  std::vector<std::vector<unsigned char>> copies;  // backing store of outputs[i] for publish_copy
};

namespace tw {
using StepContext = ::tw_step_context;

// fnmatch-style patterns are names containing '*', '?' or '['.
bool IsPattern(const char *name);
bool MatchesPattern(const std::string &pattern, const std::string &name);

// Checks a list of feeds from the caller: well-formed views with unique, non-empty names. A run's feeds
// may be device views (V5: passed to the step untouched); feeds the library copies (FinalOpsHook's)
// may not.
Status CheckFeeds(const tw_tensor *feeds, size_t feed_count, const char *what, Place place = Place::kHost);

}  // namespace tw

#endif  // TRAINWATCH_SESSION_RUN_CONTEXT_H
