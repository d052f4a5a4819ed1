// The hook interface inside the library: TF's SessionRunHook plus on_error. Built-in hooks subclass
// it; hooks written in C (or by bindings) come through CallbackHook. Hooks are reference counted so
// that the caller and the sessions holding a hook may release it in any order.
#ifndef TRAINWATCH_CORE_HOOK_H
#define TRAINWATCH_CORE_HOOK_H

#include <atomic>
#include <string>

#include "core/status.h"
#include "trainwatch/session.h"

namespace tw {
using Session = ::tw_session;
using RunContext = ::tw_run_context;
}  // namespace tw

struct tw_hook {
  explicit tw_hook(std::string name) : name_(std::move(name)) {}
  tw_hook(const tw_hook &) = delete;
  tw_hook &operator=(const tw_hook &) = delete;

  virtual tw::Status Begin(tw::Session &) { return tw::Status(); }
  virtual tw::Status AfterCreateSession(tw::Session &) { return tw::Status(); }
  virtual tw::Status BeforeRun(tw::RunContext &) { return tw::Status(); }
  virtual tw::Status AfterRun(tw::RunContext &) { return tw::Status(); }
  virtual tw::Status End(tw::Session &) { return tw::Status(); }
  virtual void OnError(tw::Session &, const tw::Status &) {}

  const std::string &name() const { return name_; }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // The open session this hook belongs to, or nullptr: a hook serves one open session at a time.
  tw::Session *owner = nullptr;

 protected:
  virtual ~tw_hook() = default;

 private:
  std::string name_;
  std::atomic<int> refs_{1};
};

namespace tw {

using Hook = ::tw_hook;

// A hook made from a C callback table (tw_hook_create).
Status NewCallbackHook(const char *name, const tw_hook_callbacks *callbacks, void *user_data, Hook **out);

}  // namespace tw

#endif  // TRAINWATCH_CORE_HOOK_H
