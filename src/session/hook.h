// The hook interface inside the library: TF's SessionRunHook plus on_error. Built-in hooks subclass
// it; hooks written in C (or by bindings) come through CallbackHook, and TF's "subclass a built-in hook"
// through WrappedHook. Hooks are reference counted so that the caller and the sessions holding a hook
// may release it in any order.
#ifndef TRAINWATCH_SESSION_HOOK_H
#define TRAINWATCH_SESSION_HOOK_H

#include <atomic>
#include <string>

#include "base/status.h"
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

  // Hooks that write files or logs for the whole job (checkpoints, summaries, step rates, logged
  // values) say so: in a job of many ranks a session other than the chief's leaves them out (D14).
  virtual bool chief_only_in_a_job() const { return false; }
  // ... except a checkpoint saver in a job with sharded variables: each checkpoint needs every rank's
  // part, so every rank runs it (D17) whatever options the hook itself was created with.
  virtual bool writes_a_part_in_a_sharded_job() const { return false; }
  // What this hook makes the session write into its checkpoint directory ("a CheckpointSaverHook"), or
  // nullptr when it writes nothing there: a session none of whose hooks writes checkpoints, and that
  // saves on no preemption, only restores and takes no lock (C24).
  virtual const char *checkpoint_writer() const { return nullptr; }
  // The directory this hook saves checkpoints into with the session's saver when it is not the
  // session's own (a CheckpointSaverHook's checkpoint_dir), or nullptr: tw_session_save_checkpoint
  // saves there too (C27).
  virtual const std::string *checkpoint_directory() const { return nullptr; }

  // The hook this one wraps (tw_hook_wrap), or nullptr. A session claims a wrapper's whole chain, so a
  // wrapped hook cannot run twice or in two sessions.
  virtual tw_hook *inner() const { return nullptr; }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // The open session this hook belongs to, or nullptr: a hook serves one open session at a time. Atomic:
  // a session may be closed on another thread than the one offering the hook to a new session.
  std::atomic<tw::Session *> owner{nullptr};

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

// Checks a caller's tw_hook_callbacks table and copies it; a newer caller's table is accepted when the
// slots this library does not know are empty.
Status CopyCallbackTable(const tw_hook_callbacks *callbacks, tw_hook_callbacks *out);

// A hook whose callbacks run in place of `inner`'s (tw_hook_wrap); NULL slots run the inner's. name
// NULL → the inner's name. Takes its own reference to inner.
Status NewWrappedHook(const char *name, Hook *inner, const tw_hook_callbacks *callbacks, void *user_data, Hook **out);

// Session::ClaimHooks' check for hooks[index] and the hooks it wraps: none may belong to an open session
// (TW_FAILED_PRECONDITION) or appear in hooks[0..index) or what those wrap (TW_INVALID_ARGUMENT, with a
// message naming both). hooks[index] itself repeating hooks[j] is the caller's check.
Status CheckHookChainFree(Hook *const *hooks, size_t index);

// super().<callback>(…): runs `inner`'s callback from inside the same callback of the wrapper that
// wraps it (on this thread, with the same session or run context); otherwise TW_FAILED_PRECONDITION.
Status CallInnerBegin(Hook *inner, Session &session);
Status CallInnerAfterCreateSession(Hook *inner, Session &session);
Status CallInnerBeforeRun(Hook *inner, RunContext &ctx);
Status CallInnerAfterRun(Hook *inner, RunContext &ctx);
Status CallInnerEnd(Hook *inner, Session &session);
Status CallInnerOnError(Hook *inner, Session &session, tw_status error);

}  // namespace tw

#endif  // TRAINWATCH_SESSION_HOOK_H
