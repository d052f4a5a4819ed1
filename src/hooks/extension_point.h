// TF's protected methods that users override in a subclass of a built-in hook (LoggingTensorHook.
// _log_tensors, StepCounterHook._log_and_record, CheckpointSaverHook._save): an optional user function
// that replaces the built-in behaviour, and the rule that the built-in behaviour may be called back
// (super()._x) only from inside that function.
#ifndef TRAINWATCH_HOOKS_EXTENSION_POINT_H
#define TRAINWATCH_HOOKS_EXTENSION_POINT_H

#include <memory>
#include <string>

#include "session/hook.h"
#include "session/options.h"

namespace tw {

template <typename Fn>
class ExtensionPoint {
 public:
  explicit ExtensionPoint(const char *what) : what_(what) {}

  // Replaces the function (fn NULL restores the built-in; user_data/destroy are then ignored). Only
  // before `hook` joins a session. On error the caller keeps user_data.
  Status Set(const Hook &hook, Fn fn, void *user_data, void (*destroy)(void *)) {
    if (hook.owner != nullptr) {
      return Errorf(TW_FAILED_PRECONDITION, "hook '%s' belongs to an open session; set its %s function before",
                    hook.name().c_str(), what_);
    }
    callback_.reset(fn != nullptr ? new UserCallback<Fn>(fn, user_data, destroy) : nullptr);
    return Status();
  }

  bool overridden() const { return callback_ != nullptr; }

  // Calls the user's function with (user_data, args…); while it runs, CheckInside allows the default.
  template <typename... Args>
  Status Call(const Hook &hook, Args... args) {
    active_ = true;
    struct Reset {
      bool &flag;
      ~Reset() { flag = false; }
    } reset{active_};
    return CallUserCallback([&] { return "hook '" + hook.name() + "' " + what_ + ": "; },
                            [&] { return callback_->fn(callback_->user_data, args...); });
  }

  // The built-in behaviour is callable only from inside the user's function (super()._x).
  Status CheckInside(const Hook &hook, const char *function) const {
    if (active_) return Status();
    return Errorf(TW_FAILED_PRECONDITION, "%s: only valid inside the %s function set on hook '%s'", function, what_,
                  hook.name().c_str());
  }

 private:
  const char *what_;
  std::unique_ptr<UserCallback<Fn>> callback_;
  bool active_ = false;
};

// The built-in hook of type T behind `hook`, or TW_INVALID_ARGUMENT naming the kind expected.
template <typename T>
Status HookOfKind(Hook *hook, const char *kind, T **out) {
  if (hook == nullptr) return Status(TW_INVALID_ARGUMENT, "hook is NULL");
  *out = dynamic_cast<T *>(hook);
  if (*out == nullptr) return Errorf(TW_INVALID_ARGUMENT, "hook '%s' is not a %s", hook->name().c_str(), kind);
  return Status();
}

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_EXTENSION_POINT_H
