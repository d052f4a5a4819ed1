// trainwatch/session.hpp — part of the C++ facade (bindings/cpp/trainwatch.hpp, whose comment gives its
// rules): step functions, the session seen from callbacks, run contexts, hooks, options and sessions
// (trainwatch/session.h).
#ifndef TRAINWATCH_HPP_SESSION_HPP
#define TRAINWATCH_HPP_SESSION_HPP

#include "common.hpp"

namespace trainwatch {

// ------------------------------------------------------------------------------------------------
// Sessions seen from callbacks, and the contexts of a run
// ------------------------------------------------------------------------------------------------

class StepContext;

// Runs a step: subclass and override run(), or pass any callable to Session::run in C++.
class StepFunction {
 public:
  virtual ~StepFunction() = default;
  virtual void run(StepContext &ctx) = 0;

  // The tw_step_fn trampoline; user_data is the StepFunction.
  static tw_status trampoline(void *user_data, tw_step_context *ctx);
};

// A session this object does not own: what callbacks receive (TF's run_context.session).
class SessionRef {
 public:
  explicit SessionRef(tw_session *session) noexcept : session_(session) {}

  // One step without hooks and without touching global_step (evaluation, iterator resets).
  void run_without_hooks(StepFunction &step, const std::vector<Tensor> &feeds = {}) {
    const std::vector<tw_tensor> views = detail::c_tensors(feeds);
    detail::call([&] {
      return tw_session_run_without_hooks(session_, views.data(), views.size(), &StepFunction::trampoline, &step);
    });
  }
  bool should_stop() const noexcept { return tw_session_should_stop(session_) != 0; }
  void request_stop() {
    detail::call([&] { return tw_session_request_stop(session_); });
  }
  int64_t global_step() const noexcept { return tw_session_global_step(session_); }
  void set_global_step(int64_t value) {
    detail::call([&] { return tw_session_set_global_step(session_, value); });
  }
  // TF's scaffold.saver.save(sess, prefix, global_step) inside the session: the variables saved by the
  // session's own saver into its checkpoint directory (tw_session_save_checkpoint); the checkpoint's path.
  std::string save_checkpoint(const std::string &prefix, int64_t global_step = TW_UNSET) {
    const char *path = nullptr;
    detail::call([&] { return tw_session_save_checkpoint(&path, session_, prefix.c_str(), global_step); });
    return path;
  }
  Tensor variable(const std::string &name) const {
    tw_tensor t = detail::empty_c_tensor();
    detail::call([&] { return tw_session_get_variable(&t, session_, name.c_str()); });
    return Tensor::from_c(t);
  }
  std::vector<Tensor> variables() const {
    return detail::collect<tw_tensor>(tw_session_variable_count(session_),
                                      [&](size_t i, tw_tensor *t) { return tw_session_variable_at(t, session_, i); });
  }
  // An output the step published in the current run; readable in after_run only (tw_session_get_output).
  Tensor output(const std::string &name) const {
    tw_tensor t = detail::empty_c_tensor();
    detail::call([&] { return tw_session_get_output(&t, session_, name.c_str()); });
    return Tensor::from_c(t);
  }
  bool is_chief() const noexcept { return tw_session_is_chief(session_) != 0; }
  // The session stopped because of a preemption (trainwatch/distributed.h; tw_session_preempted).
  bool preempted() const noexcept { return tw_session_preempted(session_) != 0; }
  void notify_preemption() {
    detail::call([&] { return tw_session_notify_preemption(session_); });
  }
  int64_t creation_count() const noexcept { return tw_session_creation_count(session_); }
  tw_session *handle() const noexcept { return session_; }
  // Identifies the session (equal for every reference to it).
  uintptr_t address() const noexcept { return reinterpret_cast<uintptr_t>(session_); }

#ifndef SWIG
  // Any callable taking StepContext&, without hooks.
  template <typename Callable, typename = decltype(std::declval<Callable &>()(std::declval<StepContext &>()))>
  void run_without_hooks(Callable &&fn, const std::vector<Tensor> &feeds = {});
#endif

 protected:
  tw_session *session_;
};

// What a step function sees (tw_step_context): feeds, requested names, outputs to publish.
class StepContext {
 public:
  explicit StepContext(tw_step_context *ctx) noexcept : ctx_(ctx) {}

  size_t feed_count() const noexcept { return tw_step_context_feed_count(ctx_); }
  Tensor feed_at(size_t index) const {
    tw_tensor t = detail::empty_c_tensor();
    detail::call([&] { return tw_step_context_feed_at(&t, ctx_, index); });
    return Tensor::from_c(t);
  }
  std::vector<Tensor> feeds() const {
    return detail::collect<tw_tensor>(feed_count(),
                                      [&](size_t i, tw_tensor *t) { return tw_step_context_feed_at(t, ctx_, i); });
  }
  Tensor feed(const std::string &name) const {
    tw_tensor t = detail::empty_c_tensor();
    detail::call([&] { return tw_step_context_get_feed(&t, ctx_, name.c_str()); });
    return Tensor::from_c(t);
  }
  bool is_requested(const std::string &name) const noexcept {
    return tw_step_context_is_requested(ctx_, name.c_str()) != 0;
  }
  std::vector<std::string> requested() const {
    return detail::collect<const char *>(tw_step_context_requested_count(ctx_), [&](size_t i, const char **name) {
      return tw_step_context_requested_at(name, ctx_, i);
    });
  }
  // Borrows the data until the session's run returns.
  void publish(const Tensor &output) {
    const tw_tensor t = output.c_tensor();
    detail::call([&] { return tw_step_context_publish(ctx_, &t); });
  }
  // Copies the data into session-owned memory.
  void publish_copy(const Tensor &output) {
    const tw_tensor t = output.c_tensor();
    detail::call([&] { return tw_step_context_publish_copy(ctx_, &t); });
  }
  int64_t global_step() const noexcept { return tw_step_context_global_step(ctx_); }
  void set_global_step(int64_t value) {
    detail::call([&] { return tw_step_context_set_global_step(ctx_, value); });
  }
  // TF's StepContext.request_stop(): throws Error(TW_STOP_ITERATION), which ends the step at once.
  TW_HPP_NORETURN void request_stop() {
    const tw_status status = tw_step_context_request_stop(ctx_);
    throw Error(status, tw_last_error_message());
  }
  SessionRef session() const noexcept { return SessionRef(tw_step_context_session(ctx_)); }
  tw_step_context *handle() const noexcept { return ctx_; }

 private:
  tw_step_context *ctx_;
};

inline tw_status StepFunction::trampoline(void *user_data, tw_step_context *ctx) {
  return detail::guarded([&] {
    StepContext context(ctx);
    static_cast<StepFunction *>(user_data)->run(context);
  });
}

#ifndef SWIG
namespace detail {
template <typename Callable>
class CallableStep final : public StepFunction {
 public:
  explicit CallableStep(Callable &fn) : fn_(fn) {}
  void run(StepContext &ctx) override { fn_(ctx); }

 private:
  Callable &fn_;
};
}  // namespace detail

template <typename Callable, typename>
void SessionRef::run_without_hooks(Callable &&fn, const std::vector<Tensor> &feeds) {
  detail::CallableStep<std::remove_reference_t<Callable>> step(fn);
  run_without_hooks(static_cast<StepFunction &>(step), feeds);
}
#endif

// The run context a hook sees in before_run / after_run (tw_run_context). It always acts for the hook
// whose callback is running.
class RunContext {
 public:
  explicit RunContext(tw_run_context *ctx) noexcept : ctx_(ctx) {}

  // before_run: SessionRunArgs.fetches / feed_dict.
  void request_fetch(const std::string &name) {
    detail::call([&] { return tw_run_context_request_fetch(ctx_, name.c_str()); });
  }
  // The data is borrowed until the run returns.
  void add_feed(const Tensor &feed) {
    const tw_tensor t = feed.c_tensor();
    detail::call([&] { return tw_run_context_add_feed(ctx_, &t); });
  }
  void request_stop() {
    detail::call([&] { return tw_run_context_request_stop(ctx_); });
  }
  bool stop_requested() const noexcept { return tw_run_context_stop_requested(ctx_) != 0; }
  SessionRef session() const noexcept { return SessionRef(tw_run_context_session(ctx_)); }

  // The caller's feeds of this run (SessionRunContext.original_args.feed_dict).
  std::vector<Tensor> original_feeds() const {
    return detail::collect<tw_tensor>(tw_run_context_original_feed_count(ctx_),
                                      [&](size_t i, tw_tensor *t) { return tw_run_context_original_feed(t, ctx_, i); });
  }

  // The names this hook requested so far in this run (after a super before_run: the built-in's
  // SessionRunArgs fetches), in request order.
  std::vector<std::string> requests() const {
    return detail::collect<const char *>(tw_run_context_request_count(ctx_), [&](size_t i, const char **name) {
      return tw_run_context_request_at(name, ctx_, i);
    });
  }

  // after_run: this hook's results; views valid until the run returns.
  Tensor result(const std::string &name) const {
    tw_tensor t = detail::empty_c_tensor();
    detail::call([&] { return tw_run_context_get_result(&t, ctx_, name.c_str()); });
    return Tensor::from_c(t);
  }
  std::vector<Tensor> results() const {
    return detail::collect<tw_tensor>(tw_run_context_result_count(ctx_),
                                      [&](size_t i, tw_tensor *t) { return tw_run_context_result_at(t, ctx_, i); });
  }
  tw_run_context *handle() const noexcept { return ctx_; }

 private:
  tw_run_context *ctx_;
};

// ------------------------------------------------------------------------------------------------
// Hooks
// ------------------------------------------------------------------------------------------------

// One reference to a C hook: what sessions accept. Built-in hooks are HookHandles; custom hooks
// derive from Hook.
class HookHandle {
 public:
  HookHandle(const HookHandle &) = delete;
  HookHandle &operator=(const HookHandle &) = delete;
  virtual ~HookHandle() { tw_hook_destroy(hook_); }

  tw_hook *handle() const noexcept { return hook_; }
  std::string name() const { return tw_hook_name(hook_); }

 protected:
  HookHandle() = default;
  // Adopts the reference a tw_*_hook_create call returned.
  template <typename Create>
  void create(Create &&c_create) {
    detail::call([&] { return c_create(&hook_); });
  }

  tw_hook *hook_ = nullptr;
};

// A hook written in C++ or, through SWIG directors, in Python, Java or C#: override what you need.
// Every callback may throw; the exception comes out of the session call that ran it.
class Hook : public HookHandle {
 public:
  explicit Hook(const std::string &name) {
    static const tw_hook_callbacks table = {
        sizeof(tw_hook_callbacks),
        [](void *u, tw_session *s) {
          return guarded_on(u, [&](Hook &h) {
            SessionRef r(s);
            h.begin(r);
          });
        },
        [](void *u, tw_session *s) {
          return guarded_on(u, [&](Hook &h) {
            SessionRef r(s);
            h.after_create_session(r);
          });
        },
        [](void *u, tw_run_context *c) {
          return guarded_on(u, [&](Hook &h) {
            RunContext r(c);
            h.before_run(r);
          });
        },
        [](void *u, tw_run_context *c) {
          return guarded_on(u, [&](Hook &h) {
            RunContext r(c);
            h.after_run(r);
          });
        },
        [](void *u, tw_session *s) {
          return guarded_on(u, [&](Hook &h) {
            SessionRef r(s);
            h.end(r);
          });
        },
        [](void *u, tw_session *s, tw_status error) {
          detail::swallowed([&] {
            SessionRef r(s);
            Binding::of(u).on_error(r, error);
          });
        },
        &Binding::destroy,
    };
    binding_ = new Binding{this};
    try {
      create([&](tw_hook **out) { return tw_hook_create(out, name.c_str(), &table, binding_); });
    } catch (...) {
      delete binding_;
      throw;
    }
  }
  ~Hook() override { binding_->target = nullptr; }

  virtual void begin(SessionRef &session) { (void)session; }
  virtual void after_create_session(SessionRef &session) { (void)session; }
  virtual void before_run(RunContext &ctx) { (void)ctx; }
  virtual void after_run(RunContext &ctx) { (void)ctx; }
  virtual void end(SessionRef &session) { (void)session; }
  // Instead of end when a run failed (TF tells no one). Cannot fail: exceptions are dropped.
  virtual void on_error(SessionRef &session, int error) { (void)session, (void)error; }

 private:
  using Binding = detail::Binding<Hook>;
  template <typename Body>
  static tw_status guarded_on(void *user_data, Body &&body) {
    return detail::guarded([&] { body(Binding::of(user_data)); });
  }

  Binding *binding_;
};

// StopAtStepHook(num_steps=None, last_step=None); pass TW_UNSET for the one left out.
class StopAtStepHook : public HookHandle {
 public:
  StopAtStepHook(int64_t num_steps, int64_t last_step) {
    create([&](tw_hook **out) { return tw_stop_at_step_hook_create(out, num_steps, last_step); });
  }
};

// ------------------------------------------------------------------------------------------------
// Options
// ------------------------------------------------------------------------------------------------

// Scaffold's init_fn: called by a chief that restored nothing. Must outlive the sessions using it.
class InitFunction {
 public:
  virtual ~InitFunction() = default;
  virtual void run(SessionRef &session) = 0;
};

// WorkerSessionCreator's readiness test. Must outlive the sessions using it.
class ReadyFunction {
 public:
  virtual ~ReadyFunction() = default;
  virtual bool ready(SessionRef &session) = 0;
};

// Session and hook options (tw_options): typed setters over TW_OPT_* keys.
class Options {
 public:
  Options() {
    detail::call([&] { return tw_options_create(&options_); });
  }
  Options(const Options &) = delete;
  Options &operator=(const Options &) = delete;
  ~Options() { tw_options_destroy(options_); }

  void set_int64(int key, int64_t value) {
    detail::call([&] { return tw_options_set_int64(options_, static_cast<tw_option>(key), value); });
  }
  void set_double(int key, double value) {
    detail::call([&] { return tw_options_set_double(options_, static_cast<tw_option>(key), value); });
  }
  void set_string(int key, const std::string &value) {
    detail::call([&] { return tw_options_set_string(options_, static_cast<tw_option>(key), value.c_str()); });
  }
  // TF's explicit None (tw_option_state TW_OPTION_NONE).
  void set_none(int key) {
    detail::call([&] { return tw_options_set_none(options_, static_cast<tw_option>(key)); });
  }
  int state(int key) const {
    tw_option_state state = TW_OPTION_DEFAULT;
    detail::call([&] { return tw_options_get_state(&state, options_, static_cast<tw_option>(key)); });
    return state;
  }
  int64_t get_int64(int key) const {
    int64_t value = 0;
    detail::call([&] { return tw_options_get_int64(&value, options_, static_cast<tw_option>(key)); });
    return value;
  }
  double get_double(int key) const {
    double value = 0;
    detail::call([&] { return tw_options_get_double(&value, options_, static_cast<tw_option>(key)); });
    return value;
  }
  // "" for an unset string.
  std::string get_string(int key) const {
    const char *value = nullptr;
    detail::call([&] { return tw_options_get_string(&value, options_, static_cast<tw_option>(key)); });
    return value != nullptr ? value : "";
  }
  void set_recoverable(int status, bool recoverable) {
    detail::call([&] { return tw_options_set_recoverable(options_, status, recoverable ? 1 : 0); });
  }
  // The data is borrowed for the life of every session created from these options.
  void add_variable(const Tensor &variable) {
    const tw_tensor t = variable.c_tensor();
    detail::call([&] { return tw_options_add_variable(options_, &t); });
  }
  // A variable holding one box of a sharded global tensor (tw_options_add_shard): global_shape and
  // offset have one entry per dimension of the variable.
  void add_shard(const Tensor &variable, const std::vector<int64_t> &global_shape, const std::vector<int64_t> &offset) {
    const tw_tensor t = variable.c_tensor();
    const size_t ndim = static_cast<size_t>(t.ndim);
    if (global_shape.size() != ndim || offset.size() != ndim) {
      const std::string message = "shard '" + variable.name() + "' has " + std::to_string(ndim) +
                                  " dimensions but global_shape has " + std::to_string(global_shape.size()) +
                                  " and offset " + std::to_string(offset.size());
      record_error(TW_INVALID_ARGUMENT, message);  // sticky, as the library's own checks are
      throw Error(TW_INVALID_ARGUMENT, message);
    }
    detail::call([&] { return tw_options_add_shard(options_, &t, global_shape.data(), offset.data()); });
  }
  // A registration that failed before reaching the library (a binding's own check): kept on the
  // options, so that the session or saver created from them fails — in a job on every rank
  // (tw_options_record_error).
  void record_error(int code, const std::string &message) {
    detail::call([&] { return tw_options_record_error(options_, static_cast<tw_status>(code), message.c_str()); });
  }
  void set_init_fn(InitFunction *fn) {
    detail::call(
        [&] { return tw_options_set_init_fn(options_, fn == nullptr ? nullptr : &init_trampoline, fn, nullptr); });
  }
  void set_ready_fn(ReadyFunction *fn) {
    detail::call(
        [&] { return tw_options_set_ready_fn(options_, fn == nullptr ? nullptr : &ready_trampoline, fn, nullptr); });
  }
  tw_options *handle() const noexcept { return options_; }

 private:
  static tw_status init_trampoline(void *user_data, tw_session *session) {
    return detail::guarded([&] {
      SessionRef ref(session);
      static_cast<InitFunction *>(user_data)->run(ref);
    });
  }
  static tw_status ready_trampoline(void *user_data, tw_session *session, int *ready) {
    return detail::guarded([&] {
      SessionRef ref(session);
      *ready = static_cast<ReadyFunction *>(user_data)->ready(ref) ? 1 : 0;
    });
  }

  tw_options *options_ = nullptr;
};

namespace detail {
inline const tw_options *handle_of(const Options *options) { return options == nullptr ? nullptr : options->handle(); }
}  // namespace detail

// What the library knows of an option (tw_option_info_by_key / _by_name): its name, type
// (TW_OPTION_TYPE_*), default, bounds and readers (TW_OPTION_READ_BY_* bits), so that a binding reads
// them instead of restating them.
struct OptionInfo {
  int key = 0;
  std::string name;
  int type = 0;
  unsigned read_by = 0;
  int64_t int64_default = 0;
  int64_t int64_min = 0;
  int64_t int64_max = 0;
  double double_default = 0;
  double double_min = 0;
  bool double_min_exclusive = false;
};

namespace detail {
inline OptionInfo option_info_of(const tw_option_info &c) {
  OptionInfo info;
  info.key = c.key;
  info.name = c.name;
  info.type = c.type;
  info.read_by = c.read_by;
  info.int64_default = c.int64_default;
  info.int64_min = c.int64_min;
  info.int64_max = c.int64_max;
  info.double_default = c.double_default;
  info.double_min = c.double_min;
  info.double_min_exclusive = c.double_min_exclusive != 0;
  return info;
}
}  // namespace detail

// Throws Error(TW_NOT_FOUND) for a key or name that is no option.
inline OptionInfo option_info(int key) {
  tw_option_info info = TW_OPTION_INFO_INIT;
  detail::call([&] { return tw_option_info_by_key(&info, static_cast<tw_option>(key)); });
  return detail::option_info_of(info);
}
inline OptionInfo option_info_named(const std::string &name) {
  tw_option_info info = TW_OPTION_INFO_INIT;
  detail::call([&] { return tw_option_info_by_name(&info, name.c_str()); });
  return detail::option_info_of(info);
}

// ------------------------------------------------------------------------------------------------
// Sessions
// ------------------------------------------------------------------------------------------------

// An owned session: MonitoredSession (with recovery), SingularMonitoredSession (without), or
// MonitoredTrainingSession (a MonitoredSession whose options add TF's default hooks, T1–T10).
class Session : public SessionRef {
 public:
  enum Kind { monitored = 0, singular = 1, monitored_training = 2 };

  // opts may be null (defaults); hooks are referenced by the session, not owned. chief_only_hooks are
  // for monitored_training only.
  Session(Kind kind, const Options *opts, const std::vector<HookHandle *> &hooks,
          const std::vector<HookHandle *> &chief_only_hooks = {})
      : SessionRef(nullptr) {
    const std::vector<tw_hook *> handles = handles_of(hooks), chief_only = handles_of(chief_only_hooks);
    if (kind != monitored_training && !chief_only.empty()) {
      throw Error(TW_INVALID_ARGUMENT, "chief_only_hooks are for a MonitoredTrainingSession only");
    }
    detail::call([&] {
      switch (kind) {
        case singular:
          return tw_singular_monitored_session_create(&session_, detail::handle_of(opts), handles.data(),
                                                      handles.size());
        case monitored_training:
          return tw_monitored_training_session_create(&session_, detail::handle_of(opts), handles.data(),
                                                      handles.size(), chief_only.data(), chief_only.size());
        default: return tw_monitored_session_create(&session_, detail::handle_of(opts), handles.data(), handles.size());
      }
    });
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  // An open session is abandoned: closed without end() (as tw_session_destroy does). Destroy fails only
  // when called from inside one of the session's own callbacks, which a destructor cannot report.
  ~Session() { (void)tw_session_destroy(session_); }

  // One step with hooks; feeds are borrowed for the call.
  void run(StepFunction &step, const std::vector<Tensor> &feeds = {}) {
    const std::vector<tw_tensor> views = detail::c_tensors(feeds);
    detail::call(
        [&] { return tw_session_run(session_, views.data(), views.size(), &StepFunction::trampoline, &step); });
  }
  // end() on every hook (unless a run failed), then release the inner session.
  void close() {
    detail::call([&] { return tw_session_close(session_); });
  }
  // Frees the native session now, as the destructor does, but throws (FailedPrecondition) instead when
  // called from inside one of the session's own callbacks or while another thread runs it; the session
  // then stays usable. After it, every call fails ("session is NULL"). For bindings whose delete or
  // dispose can run inside a callback.
  void destroy() {
    detail::call([&] { return tw_session_destroy(session_); });
    session_ = nullptr;
  }

#ifndef SWIG
  template <typename Callable, typename = decltype(std::declval<Callable &>()(std::declval<StepContext &>()))>
  void run(Callable &&fn, const std::vector<Tensor> &feeds = {}) {
    detail::CallableStep<std::remove_reference_t<Callable>> step(fn);
    run(static_cast<StepFunction &>(step), feeds);
  }
#endif

 private:
  static std::vector<tw_hook *> handles_of(const std::vector<HookHandle *> &hooks) {
    std::vector<tw_hook *> handles;
    for (HookHandle *h : hooks) handles.push_back(h == nullptr ? nullptr : h->handle());
    return handles;
  }
};

}  // namespace trainwatch

#endif  // TRAINWATCH_HPP_SESSION_HPP
