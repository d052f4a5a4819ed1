#include "hooks/feed_fn_hook.h"

#include "base/versioned.h"
#include "session/run_context.h"

namespace tw {
namespace {

class FeedFnHook final : public Hook {
 public:
  explicit FeedFnHook(std::shared_ptr<UserCallback<tw_feed_fn>> feed_fn)
      : Hook("FeedFnHook"), feed_fn_(std::move(feed_fn)) {}

  // Fetches nothing; every feed goes through AddFeed, which applies H22 (H23 is checked by the session
  // after every before_run).
  Status BeforeRun(RunContext &ctx) override {
    const tw_tensor *feeds = nullptr;
    size_t count = 0;
    TW_RETURN_IF_ERROR(
        CallUserCallback("FeedFnHook feed_fn: ", [&] { return feed_fn_->fn(feed_fn_->user_data, &feeds, &count); }));
    if (count > 0 && feeds == nullptr) {
      return Errorf(TW_INVALID_ARGUMENT, "FeedFnHook feed_fn: returned %zu feeds but a NULL array", count);
    }
    VersionedArray<tw_tensor> views;  // the callback's array steps by its elements' struct_size
    const Status read = views.Read(feeds, count, "feeds");
    if (!read.ok()) return read.WithPrefix("FeedFnHook feed_fn: ");
    for (size_t i = 0; i < count; ++i) {
      const Status status = ctx.AddFeed(&views.data()[i]);
      if (!status.ok()) return status.WithPrefix("FeedFnHook feed " + std::to_string(i) + ": ");
    }
    return Status();
  }

 private:
  std::shared_ptr<UserCallback<tw_feed_fn>> feed_fn_;
};

}  // namespace

Status NewFeedFnHook(std::shared_ptr<UserCallback<tw_feed_fn>> feed_fn, Hook **out) {
  if (feed_fn == nullptr || feed_fn->fn == nullptr) return Status(TW_INVALID_ARGUMENT, "feed_fn is NULL");
  *out = new FeedFnHook(std::move(feed_fn));
  return Status();
}

}  // namespace tw
