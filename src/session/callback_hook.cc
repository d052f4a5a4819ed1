// Hooks written in C: each virtual forwards to a slot of the caller's table.
#include <cstring>

#include "session/hook.h"

namespace tw {
namespace {

// The first published table: struct_size plus the seven slots.
constexpr size_t kMinTableSize = sizeof(tw_hook_callbacks);

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
  if (callbacks == nullptr) return Status(TW_INVALID_ARGUMENT, "callbacks is NULL");
  if (callbacks->struct_size < kMinTableSize) {
    return Errorf(TW_INVALID_ARGUMENT, "callbacks->struct_size is %u, expected %zu (sizeof(tw_hook_callbacks))",
                  callbacks->struct_size, kMinTableSize);
  }
  // A newer caller's table: accept it only if the slots this library does not know are empty.
  if (callbacks->struct_size > sizeof(tw_hook_callbacks)) {
    const unsigned char *extra = reinterpret_cast<const unsigned char *>(callbacks) + sizeof(tw_hook_callbacks);
    for (size_t i = 0; i < callbacks->struct_size - sizeof(tw_hook_callbacks); ++i) {
      if (extra[i] != 0) {
        return Errorf(TW_INVALID_ARGUMENT,
                      "callbacks->struct_size is %u and sets slots this library (%s) does not know",
                      callbacks->struct_size, TW_VERSION_STRING);
      }
    }
  }
  std::memcpy(out, callbacks, sizeof(*out));
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
