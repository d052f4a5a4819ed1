// Hooks written in C: each virtual forwards to a slot of the caller's table.
#include <cstring>

#include "base/versioned.h"
#include "session/hook.h"

namespace tw {
namespace {

class CallbackHook final : public Hook {
 public:
  CallbackHook(std::string name, const tw_hook_callbacks &table, void *user_data)
      : Hook(std::move(name)), table_(table), user_data_(user_data) {}

  Status Begin(Session &s) override { return Call(table_.begin, "begin", &s); }
  Status AfterCreateSession(Session &s) override {
    return Call(table_.after_create_session, "after_create_session", &s);
  }
  Status BeforeRun(RunContext &ctx) override { return Call(table_.before_run, "before_run", &ctx); }
  Status AfterRun(RunContext &ctx) override { return Call(table_.after_run, "after_run", &ctx); }
  Status End(Session &s) override { return Call(table_.end, "end", &s); }
  void OnError(Session &s, const Status &error) override {
    if (table_.on_error != nullptr) table_.on_error(user_data_, &s, error.code());
  }

 private:
  ~CallbackHook() override {
    if (table_.destroy != nullptr) table_.destroy(user_data_);
  }

  // Calls a slot; a failing callback's status carries the message it stored through tw_set_error, or
  // a synthesized one when it stored none.
  template <typename Arg>
  Status Call(tw_status (*slot)(void *, Arg *), const char *what, Arg *arg) {
    if (slot == nullptr) return Status();
    return CallUserCallback([&] { return "hook '" + name() + "' " + what + ": "; },
                            [&] { return slot(user_data_, arg); });
  }

  tw_hook_callbacks table_;
  void *user_data_;
};

}  // namespace

Status CopyCallbackTable(const tw_hook_callbacks *callbacks, tw_hook_callbacks *out) {
  tw_hook_callbacks table = TW_HOOK_CALLBACKS_INIT;
  TW_RETURN_IF_ERROR(ReadVersioned(callbacks, "callbacks", &table));
  *out = table;
  return Status();
}

Status NewCallbackHook(const char *name, const tw_hook_callbacks *callbacks, void *user_data, Hook **out) {
  if (name == nullptr || name[0] == '\0') return Status(TW_INVALID_ARGUMENT, "hook name is NULL or empty");
  tw_hook_callbacks table;
  TW_RETURN_IF_ERROR(CopyCallbackTable(callbacks, &table));
  *out = new CallbackHook(name, table, user_data);
  return Status();
}

}  // namespace tw
