#include "hooks/global_step_waiter_hook.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/log.h"
#include "base/timer.h"
#include "session/run_context.h"
#include "session/session.h"

namespace tw {
namespace {

constexpr int64_t kProgressLogEvery = 1000;  // B42: a progress line each time the step moved this much

class GlobalStepWaiterHook final : public Hook {
 public:
  explicit GlobalStepWaiterHook(GlobalStepWaiterConfig config)
      : Hook("GlobalStepWaiterHook"), config_(std::move(config)) {}

  Status Begin(Session &) override {
    started_ = false;
    return Status();
  }

  // B42, plus the bound.
  Status BeforeRun(RunContext &ctx) override {
    if (started_) return Status();
    const int64_t target = config_.wait_until_step;
    if (target <= 0) {
      started_ = true;
      return Status();
    }
    Log(TW_LOG_INFO, "Waiting for global step %lld before starting training.", static_cast<long long>(target));
    const double start = MonotonicSeconds();
    int64_t last_logged_step = 0;
    for (;;) {
      int64_t current = 0;
      TW_RETURN_IF_ERROR(ReadGlobalStep(*ctx.session, &current));
      if (current >= target) {
        started_ = true;
        return Status();
      }
      if (current - last_logged_step > kProgressLogEvery) {
        Log(TW_LOG_INFO, "Waiting for global step %lld before starting training. Current step is %lld.",
            static_cast<long long>(target), static_cast<long long>(current));
        last_logged_step = current;
      }
      double pause = config_.poll_secs;
      if (config_.max_wait_secs >= 0) {
        const double left = config_.max_wait_secs - (MonotonicSeconds() - start);
        if (left <= 0) {
          return Errorf(TW_DEADLINE_EXCEEDED,
                        "Global step did not reach %lld within %g secs (TW_OPT_WAIT_MAX_SECS); last read %lld.",
                        static_cast<long long>(target), config_.max_wait_secs, static_cast<long long>(current));
        }
        pause = std::min(pause, left);
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    }
  }

 private:
  Status ReadGlobalStep(Session &session, int64_t *out) {
    if (config_.read_global_step == nullptr) {
      *out = session.global_step();
      return Status();
    }
    const UserCallback<tw_global_step_fn> &read = *config_.read_global_step;
    return CallUserCallback("GlobalStepWaiterHook global step function: ",
                            [&] { return read.fn(read.user_data, &session, out); });
  }

  GlobalStepWaiterConfig config_;
  bool started_ = false;
};

}  // namespace

Status NewGlobalStepWaiterHook(GlobalStepWaiterConfig config, Hook **out) {
  *out = new GlobalStepWaiterHook(std::move(config));
  return Status();
}

}  // namespace tw
