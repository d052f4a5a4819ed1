// FeedFnHook (TF's B44): a callback supplies each run's feeds.
#ifndef TRAINWATCH_HOOKS_FEED_FN_HOOK_H
#define TRAINWATCH_HOOKS_FEED_FN_HOOK_H

#include <memory>

#include "session/hook.h"
#include "session/options.h"
#include "trainwatch/hooks.h"

namespace tw {

Status NewFeedFnHook(std::shared_ptr<UserCallback<tw_feed_fn>> feed_fn, Hook **out);

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_FEED_FN_HOOK_H
