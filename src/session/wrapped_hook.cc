// TF's "subclass a built-in hook" for C and the bindings: a hook whose callbacks run in place of an
// inner hook's, and may call the inner's (super()) through tw_hook_call_*. A NULL slot is "not
// overridden": the inner's callback runs there directly, so a wrapper that overrides nothing behaves
// exactly as its inner hook.
//
// Which super() call is legal is tracked per thread: while a wrapper's callback runs, a frame names the
// inner hook, the callback kind and the session or run context it was given; while the inner's callback
// runs, a barrier frame forbids super() calls from inside it (an extension point, for instance).

#include "session/hook.h"

namespace tw {
namespace {

enum class Kind { kBegin, kAfterCreateSession, kBeforeRun, kAfterRun, kEnd, kOnError };

const char *KindName(Kind kind) {
  switch (kind) {
    case Kind::kBegin: return "begin";
    case Kind::kAfterCreateSession: return "after_create_session";
    case Kind::kBeforeRun: return "before_run";
    case Kind::kAfterRun: return "after_run";
    case Kind::kEnd: return "end";
    case Kind::kOnError: return "on_error";
  }
  return "?";
}

struct Frame {
  const Hook *wrapper;  // nullptr: a barrier (an inner callback is running)
  const Hook *inner;
  Kind kind;
  const void *arg;      // the session or run context the wrapper's callback received
  const Status *error;  // on_error: the error the wrapper heard, with its message
  Frame *prev;
};

thread_local Frame *t_top = nullptr;

// Pushes a frame for the life of a scope, also when an exception unwinds it.
class ScopedFrame {
 public:
  ScopedFrame(const Hook *wrapper, const Hook *inner, Kind kind, const void *arg, const Status *error = nullptr)
      : frame_{wrapper, inner, kind, arg, error, t_top} {
    t_top = &frame_;
  }
  ~ScopedFrame() { t_top = frame_.prev; }
  ScopedFrame(const ScopedFrame &) = delete;
  ScopedFrame &operator=(const ScopedFrame &) = delete;

 private:
  Frame frame_;
};

class WrappedHook final : public Hook {
 public:
  WrappedHook(std::string name, Hook *inner, const tw_hook_callbacks &table, void *user_data)
      : Hook(std::move(name)), inner_(inner), table_(table), user_data_(user_data) {
    inner_->Ref();
  }

  Hook *inner() const override { return inner_; }

  Status Begin(Session &s) override {
    if (table_.begin == nullptr) return inner_->Begin(s);
    return Call(table_.begin, Kind::kBegin, &s);
  }
  Status AfterCreateSession(Session &s) override {
    if (table_.after_create_session == nullptr) return inner_->AfterCreateSession(s);
    return Call(table_.after_create_session, Kind::kAfterCreateSession, &s);
  }
  Status BeforeRun(RunContext &ctx) override {
    if (table_.before_run == nullptr) return inner_->BeforeRun(ctx);
    return Call(table_.before_run, Kind::kBeforeRun, &ctx);
  }
  Status AfterRun(RunContext &ctx) override {
    if (table_.after_run == nullptr) return inner_->AfterRun(ctx);
    return Call(table_.after_run, Kind::kAfterRun, &ctx);
  }
  Status End(Session &s) override {
    if (table_.end == nullptr) return inner_->End(s);
    return Call(table_.end, Kind::kEnd, &s);
  }
  void OnError(Session &s, const Status &error) override {
    if (table_.on_error == nullptr) return inner_->OnError(s, error);
    ScopedFrame frame(this, inner_, Kind::kOnError, &s, &error);
    table_.on_error(user_data_, &s, error.code());
  }

 private:
  ~WrappedHook() override {
    if (table_.destroy != nullptr) table_.destroy(user_data_);
    inner_->Unref();
  }

  // A failing callback's status carries what it stored through tw_set_error — when it returns the
  // inner's failure, the inner's message.
  template <typename Arg>
  Status Call(tw_status (*slot)(void *, Arg *), Kind kind, Arg *arg) {
    ScopedFrame frame(this, inner_, kind, arg);
    return CallUserCallback([&] { return "hook '" + name() + "' " + KindName(kind) + ": "; },
                            [&] { return slot(user_data_, arg); });
  }

  Hook *inner_;  // one reference
  tw_hook_callbacks table_;
  void *user_data_;
};

// Checks that a super() call for `inner` is legal here, then runs `call` behind a barrier frame.
template <typename Call>
Status CallInner(Hook *inner, Kind kind, const void *arg, Call call) {
  const char *what = KindName(kind);
  const Frame *top = t_top;
  if (top == nullptr || top->wrapper == nullptr) {
    return Errorf(TW_FAILED_PRECONDITION,
                  "tw_hook_call_%s: only valid inside the %s callback of a hook made by tw_hook_wrap, for its "
                  "inner hook",
                  what, what);
  }
  if (top->inner != inner) {
    return Errorf(TW_FAILED_PRECONDITION, "tw_hook_call_%s: hook '%s' is not the inner hook of '%s' (which wraps '%s')",
                  what, inner->name().c_str(), top->wrapper->name().c_str(), top->inner->name().c_str());
  }
  if (top->kind != kind) {
    return Errorf(TW_FAILED_PRECONDITION,
                  "tw_hook_call_%s: called from the %s of '%s'; super() runs the inner's callback of the same kind",
                  what, KindName(top->kind), top->wrapper->name().c_str());
  }
  if (top->arg != arg) {
    return Errorf(TW_FAILED_PRECONDITION, "tw_hook_call_%s: pass the %s that the %s of '%s' received", what,
                  kind == Kind::kBeforeRun || kind == Kind::kAfterRun ? "run context" : "session", what,
                  top->wrapper->name().c_str());
  }
  ScopedFrame barrier(nullptr, nullptr, kind, arg);
  return call(*top);
}

}  // namespace

Status NewWrappedHook(const char *name, Hook *inner, const tw_hook_callbacks *callbacks, void *user_data, Hook **out) {
  if (inner == nullptr) return Status(TW_INVALID_ARGUMENT, "inner is NULL");
  if (name != nullptr && name[0] == '\0')
    return Status(TW_INVALID_ARGUMENT, "hook name is empty (NULL takes the inner's)");
  tw_hook_callbacks table;
  TW_RETURN_IF_ERROR(CopyCallbackTable(callbacks, &table));
  *out = new WrappedHook(name != nullptr ? std::string(name) : inner->name(), inner, table, user_data);
  return Status();
}

Status CheckHookChainFree(Hook *const *hooks, size_t index) {
  const Hook *hook = hooks[index];
  for (const Hook *link = hook; link != nullptr; link = link->inner()) {
    if (link->owner == nullptr) continue;
    if (link == hook) {
      return Errorf(TW_FAILED_PRECONDITION, "hooks[%zu] ('%s') already belongs to another open session", index,
                    hook->name().c_str());
    }
    return Errorf(TW_FAILED_PRECONDITION, "hooks[%zu] ('%s') wraps hook '%s', which already belongs to an open session",
                  index, hook->name().c_str(), link->name().c_str());
  }
  for (size_t j = 0; j < index; ++j) {
    for (const Hook *earlier = hooks[j]; earlier != nullptr; earlier = earlier->inner()) {
      for (const Hook *link = hook; link != nullptr; link = link->inner()) {
        if (link != earlier || (link == hook && earlier == hooks[j])) continue;
        if (link == hook) {
          return Errorf(TW_INVALID_ARGUMENT,
                        "hooks[%zu] ('%s') is wrapped by hooks[%zu] ('%s'); a wrapped hook runs through its wrapper "
                        "only",
                        index, hook->name().c_str(), j, hooks[j]->name().c_str());
        }
        if (earlier == hooks[j]) {
          return Errorf(TW_INVALID_ARGUMENT,
                        "hooks[%zu] ('%s') wraps hooks[%zu] ('%s'); a wrapped hook runs through its wrapper only",
                        index, hook->name().c_str(), j, earlier->name().c_str());
        }
        return Errorf(TW_INVALID_ARGUMENT, "hooks[%zu] ('%s') and hooks[%zu] ('%s') both wrap hook '%s'", index,
                      hook->name().c_str(), j, hooks[j]->name().c_str(), link->name().c_str());
      }
    }
  }
  return Status();
}

Status CallInnerBegin(Hook *inner, Session &session) {
  return CallInner(inner, Kind::kBegin, &session, [&](const Frame &) { return inner->Begin(session); });
}

Status CallInnerAfterCreateSession(Hook *inner, Session &session) {
  return CallInner(inner, Kind::kAfterCreateSession, &session,
                   [&](const Frame &) { return inner->AfterCreateSession(session); });
}

Status CallInnerBeforeRun(Hook *inner, RunContext &ctx) {
  return CallInner(inner, Kind::kBeforeRun, &ctx, [&](const Frame &) { return inner->BeforeRun(ctx); });
}

Status CallInnerAfterRun(Hook *inner, RunContext &ctx) {
  return CallInner(inner, Kind::kAfterRun, &ctx, [&](const Frame &) { return inner->AfterRun(ctx); });
}

Status CallInnerEnd(Hook *inner, Session &session) {
  return CallInner(inner, Kind::kEnd, &session, [&](const Frame &) { return inner->End(session); });
}

// The inner hears the wrapper's error with its message when the code is the one the wrapper heard.
Status CallInnerOnError(Hook *inner, Session &session, tw_status error) {
  return CallInner(inner, Kind::kOnError, &session, [&](const Frame &frame) {
    inner->OnError(session, frame.error->code() == error ? *frame.error : Status(error, tw::StatusName(error)));
    return Status();
  });
}

}  // namespace tw
