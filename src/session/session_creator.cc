#include "session/session_creator.h"

#include <chrono>
#include <cmath>
#include <thread>

#include "base/log.h"
#include "session/session.h"

namespace tw {
namespace {

// Calls a scaffold callback; a failure says which one.
template <typename Fn, typename... Args>
Status CallUser(const UserCallback<Fn> &callback, const char *what, Args... args) {
  return CallUserCallback([what] { return std::string(what) + ": "; },
                          [&] { return callback.fn(callback.user_data, args...); });
}

class ChiefSessionCreator final : public SessionCreator {
 public:
  ChiefSessionCreator(const Options &options, std::unique_ptr<Restorer> restorer)
      : init_fn_(options.init_fn),
        initial_global_step_(options.Int64(TW_OPT_INITIAL_GLOBAL_STEP)),
        restorer_(std::move(restorer)) {}

  // S5/S7: restore if there is something to restore; otherwise initialize — global_step back to its
  // initial value and Scaffold.init_fn — on first creation and after every recovery, as TF does.
  Status CreateSession(Session &session) override {
    bool restored = false;
    if (restorer_ != nullptr) TW_RETURN_IF_ERROR(restorer_->Restore(session, &restored));
    if (restored) return Status();
    session.set_global_step(initial_global_step_);
    if (init_fn_ != nullptr) return CallUser(*init_fn_, "init_fn", &session);
    return Status();
  }

 private:
  std::shared_ptr<UserCallback<tw_init_fn>> init_fn_;
  int64_t initial_global_step_;
  std::unique_ptr<Restorer> restorer_;
};

class WorkerSessionCreator final : public SessionCreator {
 public:
  explicit WorkerSessionCreator(const Options &options)
      : ready_fn_(options.ready_fn),
        recovery_wait_secs_(options.Double(TW_OPT_RECOVERY_WAIT_SECS)),
        max_wait_secs_(options.Double(TW_OPT_MAX_WAIT_SECS)) {}

  // S10: poll readiness every recovery_wait_secs; give up when the remaining time cannot cover
  // another wait (so max_wait_secs < recovery_wait_secs makes exactly one attempt).
  Status CreateSession(Session &session) override {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    for (;;) {
      int ready = 1;
      if (ready_fn_ != nullptr) TW_RETURN_IF_ERROR(CallUser(*ready_fn_, "ready_fn", &session, &ready));
      if (ready != 0) return Status();
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      if (max_wait_secs_ >= 0 && max_wait_secs_ - waited - recovery_wait_secs_ < 0) {
        return Errorf(TW_DEADLINE_EXCEEDED, "Session was not ready after waiting %d secs.",
                      static_cast<int>(std::lround(max_wait_secs_)));
      }
      Log(TW_LOG_INFO, "Waiting for model to be ready.  Ready_for_local_init_op:  None, ready: not ready");
      std::this_thread::sleep_for(std::chrono::duration<double>(recovery_wait_secs_));
    }
  }

 private:
  std::shared_ptr<UserCallback<tw_ready_fn>> ready_fn_;
  double recovery_wait_secs_;
  double max_wait_secs_;
};

}  // namespace

std::unique_ptr<SessionCreator> NewChiefSessionCreator(const Options &options, std::unique_ptr<Restorer> restorer) {
  return std::make_unique<ChiefSessionCreator>(options, std::move(restorer));
}

std::unique_ptr<SessionCreator> NewWorkerSessionCreator(const Options &options) {
  return std::make_unique<WorkerSessionCreator>(options);
}

}  // namespace tw
