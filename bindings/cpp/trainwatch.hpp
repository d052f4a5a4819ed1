// trainwatch.hpp — a header-only C++17 facade over the trainwatch C API (include/trainwatch.h).
//
// It uses nothing but the public C header, so it is what every object-oriented binding builds on: the
// SWIG interface (bindings/swig/trainwatch.i) wraps these classes for Python, Java and C#, and C++
// programs may use it directly.
//
//  - Failing C calls throw trainwatch::Error (status code + the thread's message).
//  - Callbacks are virtual methods: subclass Hook, CheckpointSaverListener, StepFunction, … The C
//    trampolines catch every exception a callback throws (a target-language exception wrapped by SWIG
//    included), return a failing status to the library, and the C call that ran the callback rethrows
//    that same exception once the library has returned. A callback throwing trainwatch::Error returns
//    its code, so Error(TW_ABORTED, …) from a step triggers recovery and Error(TW_OUT_OF_RANGE, …)
//    ends the input cleanly; any other exception is TW_CALLBACK_FAILED.
//  - Handles are RAII and move-only. Hooks and listeners may be destroyed before or after the sessions
//    that hold them: a callback of a destroyed object fails the operation instead of touching freed
//    memory. StepFunction, InitFunction, … objects must outlive the calls and sessions using them.
//  - Thread rules are the C API's: a session and its hooks are used by one thread at a time.
#ifndef TRAINWATCH_HPP
#define TRAINWATCH_HPP

// Subclassing built-in hooks and the bindings' collectives are built on the experimental C API
// (trainwatch/common.h, "Experimental API"): those classes move when it does.
#ifndef TW_EXPERIMENTAL_API
#define TW_EXPERIMENTAL_API
#endif
#include <trainwatch.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef SWIG
#define TW_HPP_NORETURN
#else
#define TW_HPP_NORETURN [[noreturn]]
#endif

namespace trainwatch {

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

// A failing tw_status with its message.
class Error : public std::runtime_error {
 public:
  Error(tw_status code, const std::string &message) : std::runtime_error(message), code_(code) {}
  tw_status code() const noexcept { return code_; }

 private:
  tw_status code_;
};

namespace detail {

// The exception a callback threw during the innermost C call running on this thread.
inline std::exception_ptr &pending_exception() noexcept {
  thread_local std::exception_ptr pending;
  return pending;
}

// Runs one C call. When it fails, rethrows what a callback threw during it (the cause), or throws
// Error with the thread's message. Exceptions absorbed by the library (a recovered TW_ABORTED) are
// dropped. Nesting-safe: a C call made from inside a callback keeps its own slot.
template <typename CCall>
void call(CCall &&c_call) {
  std::exception_ptr outer = std::exchange(pending_exception(), nullptr);
  const tw_status status = c_call();
  std::exception_ptr thrown = std::exchange(pending_exception(), std::move(outer));
  if (status == TW_OK) return;
  if (thrown) std::rethrow_exception(thrown);
  throw Error(status, tw_last_error_message());
}

// Runs a callback body for a C trampoline: nothing escapes into C. The exception is kept for call().
template <typename Body>
tw_status guarded(Body &&body) noexcept {
  try {
    body();
    return TW_OK;
  } catch (const Error &e) {
    pending_exception() = std::current_exception();
    return tw_set_error(e.code() == TW_OK ? TW_CALLBACK_FAILED : e.code(), e.what());
  } catch (const std::exception &e) {
    pending_exception() = std::current_exception();
    return tw_set_error(TW_CALLBACK_FAILED, e.what());
  } catch (...) {
    pending_exception() = std::current_exception();
    return tw_set_error(TW_CALLBACK_FAILED, "a callback threw an exception that is not a std::exception");
  }
}

// For callbacks that cannot fail (on_error, log lines): exceptions are dropped.
template <typename Body>
void swallowed(Body &&body) noexcept {
  try {
    body();
  } catch (...) {
  }
}

// The user_data of a callback table whose target object may die before the C object it registered:
// the C side owns the Binding (destroy deletes it), the target only clears the pointer.
template <typename Target>
struct Binding {
  Target *target;
  static void destroy(void *user_data) { delete static_cast<Binding *>(user_data); }
  static Target &of(void *user_data) {
    Target *target = static_cast<Binding *>(user_data)->target;
    if (target == nullptr) throw Error(TW_FAILED_PRECONDITION, "the callback object was destroyed while still in use");
    return *target;
  }
};

// "Not given" for int64 arguments (TF's None).
constexpr int64_t unset = TW_UNSET;

}  // namespace detail

// ------------------------------------------------------------------------------------------------
// Versions and logging
// ------------------------------------------------------------------------------------------------

inline std::string version_string() { return tw_version_string(); }
inline unsigned version_number() { return tw_version_number(); }
inline std::string status_name(tw_status status) { return tw_status_name(status); }
inline std::string dtype_name(int dtype) { return tw_dtype_name(static_cast<tw_dtype>(dtype)); }
inline size_t dtype_size(int dtype) { return tw_dtype_size(static_cast<tw_dtype>(dtype)); }

// Receives every log line of the library; write may be called from any thread that runs library code
// (background checkpoint writers included). Exceptions it throws are dropped.
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void write(int level, const std::string &message) = 0;
};

// Routes log lines to `sink` (not owned; it must live until replaced), or back to stderr for nullptr.
inline void set_log_sink(LogSink *sink) {
  if (sink == nullptr) {
    tw_set_log_sink(nullptr, nullptr);
    return;
  }
  tw_set_log_sink(
      [](void *user_data, tw_log_level level, const char *message) {
        detail::swallowed([&] { static_cast<LogSink *>(user_data)->write(level, message); });
      },
      sink);
}
inline void set_log_level(int level) { tw_set_log_level(static_cast<tw_log_level>(level)); }

// ------------------------------------------------------------------------------------------------
// Tensors
// ------------------------------------------------------------------------------------------------

// A borrowed view of host memory (tw_tensor) that owns its name, shape and strides. Copying a Tensor
// copies the description, never the data.
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::string name, void *data, int dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {})
      : name_(std::move(name)), data_(data), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)) {}

  // Copies the description of a C view.
  static Tensor from_c(const tw_tensor &t) {
    std::vector<int64_t> shape, strides;
    if (t.ndim > 0 && t.shape != nullptr) shape.assign(t.shape, t.shape + t.ndim);
    if (t.ndim > 0 && t.strides != nullptr) strides.assign(t.strides, t.strides + t.ndim);
    return Tensor(t.name != nullptr ? t.name : "", t.data, t.dtype, std::move(shape), std::move(strides));
  }

  // The C view; its pointers stay valid while this Tensor lives unchanged.
  tw_tensor c_tensor() const {
    tw_tensor t;
    tw_tensor_init(&t);
    t.dtype = dtype_;
    t.name = name_.c_str();
    t.data = data_;
    t.ndim = static_cast<int32_t>(shape_.size());
    t.shape = shape_.empty() ? nullptr : shape_.data();
    t.strides = strides_.empty() ? nullptr : strides_.data();
    return t;
  }

  // The same memory read as another dtype of the same element size (uint16 bits as bfloat16, …).
  Tensor reinterpreted(int dtype) const {
    if (tw_dtype_size(static_cast<tw_dtype>(dtype)) != element_size() || element_size() == 0) {
      throw Error(TW_INVALID_ARGUMENT, "cannot view " + std::string(tw_dtype_name(static_cast<tw_dtype>(dtype_))) +
                                           " '" + name_ + "' as " + tw_dtype_name(static_cast<tw_dtype>(dtype)));
    }
    Tensor view = *this;
    view.dtype_ = dtype;
    return view;
  }

  const std::string &name() const noexcept { return name_; }
  void set_name(const std::string &name) { name_ = name; }
  void *data() const noexcept { return data_; }
  uintptr_t address() const noexcept { return reinterpret_cast<uintptr_t>(data_); }
  int dtype() const noexcept { return dtype_; }
  const std::vector<int64_t> &shape() const noexcept { return shape_; }
  // Element strides; empty means row-major contiguous.
  const std::vector<int64_t> &strides() const noexcept { return strides_; }
  int64_t element_count() const {
    const tw_tensor t = c_tensor();
    return tw_tensor_element_count(&t);
  }
  size_t element_size() const noexcept { return tw_dtype_size(static_cast<tw_dtype>(dtype_)); }

 private:
  std::string name_;
  void *data_ = nullptr;
  int dtype_ = TW_DTYPE_INVALID;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
};

namespace detail {
// C views of a list of Tensors, valid while the list lives unchanged.
inline std::vector<tw_tensor> c_tensors(const std::vector<Tensor> &tensors) {
  std::vector<tw_tensor> views;
  views.reserve(tensors.size());
  for (const Tensor &t : tensors) views.push_back(t.c_tensor());
  return views;
}
inline tw_tensor empty_c_tensor() {
  tw_tensor t;
  tw_tensor_init(&t);
  return t;
}

// The C elements of lists (tensor views, strings), their empty value and their facade value.
template <typename CElement>
struct ListElement;
template <>
struct ListElement<tw_tensor> {
  using Value = Tensor;
  static tw_tensor empty() { return empty_c_tensor(); }
  static Tensor value(const tw_tensor &t) { return Tensor::from_c(t); }
};
template <>
struct ListElement<const char *> {
  using Value = std::string;
  static const char *empty() { return nullptr; }
  static std::string value(const char *s) { return s != nullptr ? s : ""; }
};

// Every list getter: a C list is a count and an accessor by index (the tw_*_count / tw_*_at pairs);
// `at(index, &element)` calls the accessor. Returns the whole list as facade values.
template <typename CElement, typename At>
std::vector<typename ListElement<CElement>::Value> collect(size_t count, At &&at) {
  std::vector<typename ListElement<CElement>::Value> all;
  all.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    CElement element = ListElement<CElement>::empty();
    call([&] { return at(i, &element); });
    all.push_back(ListElement<CElement>::value(element));
  }
  return all;
}
}  // namespace detail

// ------------------------------------------------------------------------------------------------
// Numerics
// ------------------------------------------------------------------------------------------------

struct ScanResult {
  int64_t nan_count = 0;
  int64_t pos_inf_count = 0;
  int64_t neg_inf_count = 0;
  int64_t first_nonfinite_index = -1;  // -1 when every element is finite
};

// The statistics of a tensor, read in one pass (tw_tensor_stats).
struct TensorStats : ScanResult {
  int64_t element_count = 0;
  int64_t finite_count = 0;
  double min = 0, max = 0, mean = 0;  // over finite elements; NaN when there is none
};

inline ScanResult scan(const Tensor &tensor) {
  const tw_tensor t = tensor.c_tensor();
  tw_scan_result r;
  tw_scan_result_init(&r);
  detail::call([&] { return tw_scan(&r, &t); });
  return ScanResult{r.nan_count, r.pos_inf_count, r.neg_inf_count, r.first_nonfinite_index};
}

inline TensorStats tensor_stats(const Tensor &tensor) {
  const tw_tensor t = tensor.c_tensor();
  tw_numerics_stats s;
  tw_numerics_stats_init(&s);
  detail::call([&] { return tw_tensor_stats(&s, &t); });
  TensorStats out;
  out.nan_count = s.nan_count;
  out.pos_inf_count = s.pos_inf_count;
  out.neg_inf_count = s.neg_inf_count;
  out.first_nonfinite_index = s.first_nonfinite_index;
  out.element_count = s.element_count;
  out.finite_count = s.finite_count;
  out.min = s.min;
  out.max = s.max;
  out.mean = s.mean;
  return out;
}

inline bool has_nonfinite(const Tensor &tensor) {
  const tw_tensor t = tensor.c_tensor();
  int found = 0;
  detail::call([&] { return tw_has_nonfinite(&found, &t); });
  return found != 0;
}

// Throws Error(TW_INVALID_ARGUMENT, "<message> : Tensor had NaN values") when an element is not finite.
inline void check_numerics(const Tensor &tensor, const std::string &message) {
  const tw_tensor t = tensor.c_tensor();
  detail::call([&] { return tw_check_numerics(&t, message.c_str()); });
}

inline std::string numerics_target() { return tw_numerics_target(); }

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
        [](void *u, tw_session *s) { return guarded_on(u, [&](Hook &h) { SessionRef r(s); h.begin(r); }); },
        [](void *u, tw_session *s) {
          return guarded_on(u, [&](Hook &h) { SessionRef r(s); h.after_create_session(r); });
        },
        [](void *u, tw_run_context *c) { return guarded_on(u, [&](Hook &h) { RunContext r(c); h.before_run(r); }); },
        [](void *u, tw_run_context *c) { return guarded_on(u, [&](Hook &h) { RunContext r(c); h.after_run(r); }); },
        [](void *u, tw_session *s) { return guarded_on(u, [&](Hook &h) { SessionRef r(s); h.end(r); }); },
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
    detail::call([&] {
      return tw_options_set_init_fn(options_, fn == nullptr ? nullptr : &init_trampoline, fn, nullptr);
    });
  }
  void set_ready_fn(ReadyFunction *fn) {
    detail::call([&] {
      return tw_options_set_ready_fn(options_, fn == nullptr ? nullptr : &ready_trampoline, fn, nullptr);
    });
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
// Built-in hooks that take options or callbacks
// ------------------------------------------------------------------------------------------------

// CheckpointSaverListener (B17): override what you need. after_save returns true to request a stop.
class CheckpointSaverListener {
 public:
  explicit CheckpointSaverListener(const std::string &name = "CheckpointSaverListener") {
    static const tw_checkpoint_listener_callbacks table = {
        sizeof(tw_checkpoint_listener_callbacks),
        [](void *u) { return guarded_on(u, [&](CheckpointSaverListener &l) { l.begin(); }); },
        [](void *u, tw_session *s, int64_t step) {
          return guarded_on(u, [&](CheckpointSaverListener &l) { SessionRef r(s); l.before_save(r, step); });
        },
        [](void *u, tw_session *s, int64_t step, int *request_stop) {
          return guarded_on(u, [&](CheckpointSaverListener &l) {
            SessionRef r(s);
            *request_stop = l.after_save(r, step) ? 1 : 0;
          });
        },
        [](void *u, tw_session *s, int64_t step) {
          return guarded_on(u, [&](CheckpointSaverListener &l) { SessionRef r(s); l.end(r, step); });
        },
        &Binding::destroy,
    };
    binding_ = new Binding{this};
    const tw_status status = tw_checkpoint_listener_create(&listener_, name.c_str(), &table, binding_);
    if (status != TW_OK) {
      delete binding_;
      throw Error(status, tw_last_error_message());
    }
  }
  CheckpointSaverListener(const CheckpointSaverListener &) = delete;
  CheckpointSaverListener &operator=(const CheckpointSaverListener &) = delete;
  virtual ~CheckpointSaverListener() {
    binding_->target = nullptr;
    tw_checkpoint_listener_destroy(listener_);
  }

  virtual void begin() {}
  virtual void before_save(SessionRef &session, int64_t global_step) { (void)session, (void)global_step; }
  virtual bool after_save(SessionRef &session, int64_t global_step) {
    (void)session, (void)global_step;
    return false;
  }
  virtual void end(SessionRef &session, int64_t global_step) { (void)session, (void)global_step; }

  tw_checkpoint_listener *handle() const noexcept { return listener_; }

 private:
  using Binding = detail::Binding<CheckpointSaverListener>;
  template <typename Body>
  static tw_status guarded_on(void *user_data, Body &&body) {
    return detail::guarded([&] { body(Binding::of(user_data)); });
  }

  tw_checkpoint_listener *listener_ = nullptr;
  Binding *binding_;
};

// CheckpointSaverHook(checkpoint_dir, save_secs/save_steps in opts, listeners) (B18–B24).
class CheckpointSaverHook : public HookHandle {
 public:
  CheckpointSaverHook(const std::string &checkpoint_dir, const Options *opts,
                      const std::vector<CheckpointSaverListener *> &listeners = {}) {
    std::vector<tw_checkpoint_listener *> handles;
    for (CheckpointSaverListener *l : listeners) handles.push_back(l == nullptr ? nullptr : l->handle());
    create([&](tw_hook **out) {
      return tw_checkpoint_saver_hook_create(out, checkpoint_dir.c_str(), detail::handle_of(opts), handles.data(),
                                             handles.size());
    });
  }
};

// What a NanTensorHook found in one watched value (tw_nan_event).
struct NanEvent {
  std::string tensor_name;
  int64_t global_step = 0;
  int64_t nan_count = 0;
  int64_t pos_inf_count = 0;
  int64_t neg_inf_count = 0;
  int64_t first_nonfinite_index = -1;
};

// TW_NAN_ACTION_CALLBACK: decides what a divergence does (throw to fail the run). Must outlive the hook.
class NanFunction {
 public:
  virtual ~NanFunction() = default;
  virtual void on_nan(SessionRef &session, const NanEvent &event) = 0;
};

// NanTensorHook: TF's (loss_name, fail_on_nan_loss), or the full guard over names/patterns with
// TW_OPT_NAN_* options and an optional callback.
class NanTensorHook : public HookHandle {
 public:
  NanTensorHook(const std::string &loss_name, bool fail_on_nan_loss) {
    create([&](tw_hook **out) { return tw_nan_tensor_hook_create(out, loss_name.c_str(), fail_on_nan_loss ? 1 : 0); });
  }
  NanTensorHook(const std::vector<std::string> &watch, const Options *opts, NanFunction *fn = nullptr) {
    std::vector<const char *> names;
    for (const std::string &name : watch) names.push_back(name.c_str());
    create([&](tw_hook **out) {
      return tw_nan_tensor_hook_create_with_options(out, names.data(), names.size(), detail::handle_of(opts),
                                                    fn == nullptr ? nullptr : &trampoline, fn, nullptr);
    });
  }

 private:
  static tw_status trampoline(void *user_data, tw_session *session, const tw_nan_event *e) {
    return detail::guarded([&] {
      SessionRef ref(session);
      const NanEvent event{e->tensor_name != nullptr ? e->tensor_name : "", e->global_step, e->nan_count,
                           e->pos_inf_count, e->neg_inf_count, e->first_nonfinite_index};
      static_cast<NanFunction *>(user_data)->on_nan(ref, event);
    });
  }
};

// ------------------------------------------------------------------------------------------------
// The other tf.train hooks (LoggingTensor, StepCounter, SummarySaver, FeedFn, FinalOps, GlobalStepWaiter,
// Profiler). Steps are TW_UNSET and seconds negative when "not given". The C API reads every period from
// options (TW_OPT_EVERY_N_STEPS / _SECS); StepCounterHook and ProfilerHook keep TF's arguments here.
// ------------------------------------------------------------------------------------------------

class SummaryWriter;

namespace detail {
inline std::vector<const char *> c_strings(const std::vector<std::string> &strings) {
  std::vector<const char *> pointers;
  for (const std::string &s : strings) pointers.push_back(s.c_str());
  return pointers;
}
inline tw_summary_writer *handle_of(const SummaryWriter *writer);
// TF's (every_n_steps, every_n_secs, output_dir) as a periodic hook's options: TW_UNSET steps is None.
inline void set_period(Options &options, int64_t every_n_steps, double every_n_secs, const std::string &output_dir) {
  if (every_n_steps == TW_UNSET) {
    options.set_none(TW_OPT_EVERY_N_STEPS);
  } else {
    options.set_int64(TW_OPT_EVERY_N_STEPS, every_n_steps);
  }
  if (every_n_secs >= 0) options.set_double(TW_OPT_EVERY_N_SECS, every_n_secs);
  if (!output_dir.empty()) options.set_string(TW_OPT_OUTPUT_DIR, output_dir);
}
}  // namespace detail

// LoggingTensorHook's formatter: the text of one log line from the values (values[i].name() is the tag).
class LogFormatter {
 public:
  virtual ~LogFormatter() = default;
  virtual std::string format(const std::vector<Tensor> &values) = 0;
};

// LoggingTensorHook(tensors, every_n_iter, every_n_secs, at_end, formatter) (B6–B10): names, optional
// tags (TF's dict form: printed sorted by tag), TW_OPT_EVERY_N_STEPS / _EVERY_N_SECS / _LOG_AT_END /
// _LOG_MAX_ELEMENTS in opts. The formatter must outlive the hook.
class LoggingTensorHook : public HookHandle {
 public:
  LoggingTensorHook(const std::vector<std::string> &names, const std::vector<std::string> &tags, const Options *opts,
                    LogFormatter *formatter = nullptr) {
    const std::vector<const char *> c_names = detail::c_strings(names), c_tags = detail::c_strings(tags);
    create([&](tw_hook **out) {
      return tw_logging_tensor_hook_create(out, c_names.data(), tags.empty() ? nullptr : c_tags.data(), c_names.size(),
                                           detail::handle_of(opts), formatter == nullptr ? nullptr : &trampoline,
                                           formatter, nullptr);
    });
  }

 private:
  static tw_status trampoline(void *user_data, const tw_tensor *const *values, size_t n_values, char *buffer,
                              size_t buffer_size, size_t *length) {
    return detail::guarded([&] {
      std::vector<Tensor> tensors;
      for (size_t i = 0; i < n_values; ++i) tensors.push_back(Tensor::from_c(*values[i]));
      const std::string text = static_cast<LogFormatter *>(user_data)->format(tensors);
      *length = text.size();
      if (buffer_size > 0) {
        const size_t n = text.size() < buffer_size - 1 ? text.size() : buffer_size - 1;
        text.copy(buffer, n);
        buffer[n] = '\0';
      }
    });
  }
};

// StepCounterHook(every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None) (B26–B30).
class StepCounterHook : public HookHandle {
 public:
  StepCounterHook(int64_t every_n_steps, double every_n_secs, const std::string &output_dir,
                  const SummaryWriter *writer = nullptr) {
    Options options;
    detail::set_period(options, every_n_steps, every_n_secs, output_dir);
    create([&](tw_hook **out) { return tw_step_counter_hook_create(out, options.handle(), detail::handle_of(writer)); });
  }
};

// SummarySaverHook(save_steps, save_secs, output_dir, summary_writer, summary_op) (B35–B40): the values
// named or matched by `summarize` (empty: every published value); TW_OPT_EVERY_N_STEPS / _SECS,
// TW_OPT_OUTPUT_DIR, TW_OPT_SUMMARY_HISTOGRAMS in opts.
class SummarySaverHook : public HookHandle {
 public:
  SummarySaverHook(const std::vector<std::string> &summarize, const Options *opts,
                   const SummaryWriter *writer = nullptr) {
    const std::vector<const char *> names = detail::c_strings(summarize);
    create([&](tw_hook **out) {
      return tw_summary_saver_hook_create(out, names.empty() ? nullptr : names.data(), names.size(),
                                          detail::handle_of(opts), detail::handle_of(writer));
    });
  }
};

// FeedFnHook's feed_fn: the feeds of one run. The returned tensors' data must stay valid until that
// run returns (the hook keeps the descriptions until the next call). Must outlive the hook.
class FeedFunction {
 public:
  virtual ~FeedFunction() = default;
  virtual std::vector<Tensor> feeds() = 0;

  static tw_status trampoline(void *user_data, const tw_tensor **feeds, size_t *n_feeds) {
    return detail::guarded([&] {
      auto *self = static_cast<FeedFunction *>(user_data);
      self->last_ = self->feeds();
      self->views_ = detail::c_tensors(self->last_);
      *feeds = self->views_.empty() ? nullptr : self->views_.data();
      *n_feeds = self->views_.size();
    });
  }

 private:
  std::vector<Tensor> last_;
  std::vector<tw_tensor> views_;
};

// FeedFnHook(feed_fn) (B44).
class FeedFnHook : public HookHandle {
 public:
  explicit FeedFnHook(FeedFunction *fn) {
    create([&](tw_hook **out) { return tw_feed_fn_hook_create(out, &FeedFunction::trampoline, fn, nullptr); });
  }
};

// FinalOpsHook(final_ops, final_ops_feed_dict) (B43): runs `final_step` (which must outlive the hook)
// once at end() without hooks, with `feeds` (copied now), and keeps copies of what it publishes.
class FinalOpsHook : public HookHandle {
 public:
  FinalOpsHook(StepFunction *final_step, const std::vector<Tensor> &feeds = {}) {
    const std::vector<tw_tensor> views = detail::c_tensors(feeds);
    create([&](tw_hook **out) {
      return tw_final_ops_hook_create(out, views.data(), views.size(), &StepFunction::trampoline, final_step, nullptr);
    });
  }
  // False until the final step has completed (TF's final_ops_values is None).
  bool has_values() const noexcept {
    tw_tensor t = detail::empty_c_tensor();
    return tw_final_ops_hook_value_at(&t, hook_, 0) != TW_FAILED_PRECONDITION;
  }
  // The published values (copies owned by the hook), in publish order.
  std::vector<Tensor> values() const {
    return detail::collect<tw_tensor>(tw_final_ops_hook_value_count(hook_),
                                      [&](size_t i, tw_tensor *t) { return tw_final_ops_hook_value_at(t, hook_, i); });
  }
};

// GlobalStepWaiterHook's reader of the shared global step. Must outlive the hook.
class GlobalStepFunction {
 public:
  virtual ~GlobalStepFunction() = default;
  virtual int64_t global_step(SessionRef &session) = 0;
};

// GlobalStepWaiterHook(wait_until_step) (B41–B42); TW_OPT_WAIT_POLL_SECS / _WAIT_MAX_SECS in opts; the
// step is read through fn, or the session's own global step without one.
class GlobalStepWaiterHook : public HookHandle {
 public:
  GlobalStepWaiterHook(int64_t wait_until_step, const Options *opts, GlobalStepFunction *fn = nullptr) {
    create([&](tw_hook **out) {
      return tw_global_step_waiter_hook_create(out, wait_until_step, detail::handle_of(opts),
                                               fn == nullptr ? nullptr : &trampoline, fn, nullptr);
    });
  }

 private:
  static tw_status trampoline(void *user_data, tw_session *session, int64_t *global_step) {
    return detail::guarded([&] {
      SessionRef ref(session);
      *global_step = static_cast<GlobalStepFunction *>(user_data)->global_step(ref);
    });
  }
};

// ProfilerHook(save_steps, save_secs, output_dir) (B45–B47): Chrome-trace timelines of one run in N.
class ProfilerHook : public HookHandle {
 public:
  ProfilerHook(int64_t every_n_steps, double every_n_secs, const std::string &output_dir) {
    Options options;
    detail::set_period(options, every_n_steps, every_n_secs, output_dir);
    create([&](tw_hook **out) { return tw_profiler_hook_create(out, options.handle()); });
  }
};

// ------------------------------------------------------------------------------------------------
// Subclassing a built-in hook (tw_hook_wrap)
// ------------------------------------------------------------------------------------------------

// TF's "class MyHook(tf.train.NanTensorHook)": a hook that runs its virtual methods in place of a
// built-in hook's. Every default calls the built-in's callback (super()), so an override that calls
// the base method keeps the built-in behaviour and one that does not skips it. TF's protected
// extension points are virtuals too: log_tensors (LoggingTensorHook._log_tensors), log_and_record
// (StepCounterHook._log_and_record), save (CheckpointSaverHook._save, returns the stop request).
//
// `overridden` says which methods the subclass overrides (a mask of Overrides): only those are
// installed, the others stay the built-in's native callbacks and cost nothing — a binding computes
// the mask from the target-language class (directors cannot tell). overrides_all (the default)
// installs every callback (the defaults call through, so behaviour is the same) and the extension
// point matching the inner hook's kind; an extension bit given explicitly for a hook of another kind
// throws Error(TW_INVALID_ARGUMENT). Extension points must be installed before the inner hook joins a
// session (else Error(TW_FAILED_PRECONDITION)). The session takes the wrapper, never the inner as well.
// The wrapper keeps the inner C hook alive; `inner` may be destroyed first.
class WrappedHook : public HookHandle {
 public:
  enum Overrides {
    overrides_begin = 1 << 0,
    overrides_after_create_session = 1 << 1,
    overrides_before_run = 1 << 2,
    overrides_after_run = 1 << 3,
    overrides_end = 1 << 4,
    overrides_on_error = 1 << 5,
    overrides_log_tensors = 1 << 6,
    overrides_log_and_record = 1 << 7,
    overrides_save = 1 << 8,
    overrides_all = (1 << 9) - 1
  };

  // name empty: the inner's name.
  explicit WrappedHook(const HookHandle &inner, int overridden = overrides_all, const std::string &name = "")
      : inner_(inner.handle()) {
    tw_hook_callbacks table = {sizeof(tw_hook_callbacks), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                               &Binding::destroy};
    if (overridden & overrides_begin) table.begin = &on_session<&WrappedHook::begin>;
    if (overridden & overrides_after_create_session) {
      table.after_create_session = &on_session<&WrappedHook::after_create_session>;
    }
    if (overridden & overrides_before_run) table.before_run = &on_context<&WrappedHook::before_run>;
    if (overridden & overrides_after_run) table.after_run = &on_context<&WrappedHook::after_run>;
    if (overridden & overrides_end) table.end = &on_session<&WrappedHook::end>;
    if (overridden & overrides_on_error) table.on_error = &on_error_trampoline;
    binding_ = new Binding{this};
    try {
      create([&](tw_hook **out) {
        return tw_hook_wrap(out, name.empty() ? nullptr : name.c_str(), inner_, &table, binding_);
      });
    } catch (...) {
      delete binding_;
      throw;
    }
    const bool explicit_mask = overridden != overrides_all;
    if (overridden & overrides_log_tensors) {
      install(explicit_mask, [&](Extension *e) {
        return tw_logging_tensor_hook_set_log_fn(inner_, &log_tensors_trampoline, e, &Extension::destroy);
      });
    }
    if (overridden & overrides_log_and_record) {
      install(explicit_mask, [&](Extension *e) {
        return tw_step_counter_hook_set_record_fn(inner_, &log_and_record_trampoline, e, &Extension::destroy);
      });
    }
    if (overridden & overrides_save) {
      install(explicit_mask, [&](Extension *e) {
        return tw_checkpoint_saver_hook_set_save_fn(inner_, &save_trampoline, e, &Extension::destroy);
      });
    }
  }
  // Later callbacks — the wrapper's and the inner's extension points — fail the operation (the C hooks
  // may outlive this object).
  ~WrappedHook() override {
    binding_->target = nullptr;
    *self_ = nullptr;
  }

  // The callbacks; each default is super().
  virtual void begin(SessionRef &session) { super_begin(session); }
  virtual void after_create_session(SessionRef &session) { super_after_create_session(session); }
  virtual void before_run(RunContext &ctx) { super_before_run(ctx); }
  virtual void after_run(RunContext &ctx) { super_after_run(ctx); }
  virtual void end(SessionRef &session) { super_end(session); }
  // Cannot fail: exceptions are dropped.
  virtual void on_error(SessionRef &session, int error) { super_on_error(session, error); }

  // The extension points; each default is the built-in (valid only while the hook calls the override).
  virtual void log_tensors(const std::vector<Tensor> &values) { super_log_tensors(values); }
  virtual void log_and_record(int64_t elapsed_steps, double elapsed_time, int64_t global_step) {
    super_log_and_record(elapsed_steps, elapsed_time, global_step);
  }
  virtual bool save(SessionRef &session, int64_t step) { return super_save(session, step); }

  // super() calls (tw_hook_call_* and the extension points' built-ins), valid only from inside the
  // override of the same name; elsewhere they throw Error(TW_FAILED_PRECONDITION).
  void super_begin(SessionRef &session) {
    detail::call([&] { return tw_hook_call_begin(inner_, session.handle()); });
  }
  void super_after_create_session(SessionRef &session) {
    detail::call([&] { return tw_hook_call_after_create_session(inner_, session.handle()); });
  }
  void super_before_run(RunContext &ctx) {
    detail::call([&] { return tw_hook_call_before_run(inner_, ctx.handle()); });
  }
  void super_after_run(RunContext &ctx) {
    detail::call([&] { return tw_hook_call_after_run(inner_, ctx.handle()); });
  }
  void super_end(SessionRef &session) {
    detail::call([&] { return tw_hook_call_end(inner_, session.handle()); });
  }
  void super_on_error(SessionRef &session, int error) {
    tw_hook_call_on_error(inner_, session.handle(), static_cast<tw_status>(error));
  }
  void super_log_tensors(const std::vector<Tensor> &values) {
    const std::vector<tw_tensor> views = detail::c_tensors(values);
    std::vector<const tw_tensor *> pointers;
    for (const tw_tensor &view : views) pointers.push_back(&view);
    detail::call([&] { return tw_logging_tensor_hook_log_tensors(inner_, pointers.data(), pointers.size()); });
  }
  void super_log_and_record(int64_t elapsed_steps, double elapsed_time, int64_t global_step) {
    detail::call([&] { return tw_step_counter_hook_log_and_record(inner_, elapsed_steps, elapsed_time, global_step); });
  }
  bool super_save(SessionRef &session, int64_t step) {
    int stop = 0;
    detail::call([&] { return tw_checkpoint_saver_hook_save(&stop, inner_, session.handle(), step); });
    return stop != 0;
  }

  // The name of the hook this one wraps.
  std::string inner_name() const { return tw_hook_name(inner_); }

#ifndef SWIG
 private:
  using Binding = detail::Binding<WrappedHook>;

  template <void (WrappedHook::*method)(SessionRef &)>
  static tw_status on_session(void *user_data, tw_session *session) {
    return detail::guarded([&] {
      SessionRef ref(session);
      (Binding::of(user_data).*method)(ref);
    });
  }
  template <void (WrappedHook::*method)(RunContext &)>
  static tw_status on_context(void *user_data, tw_run_context *ctx) {
    return detail::guarded([&] {
      RunContext context(ctx);
      (Binding::of(user_data).*method)(context);
    });
  }
  static void on_error_trampoline(void *user_data, tw_session *session, tw_status error) {
    detail::swallowed([&] {
      SessionRef ref(session);
      Binding::of(user_data).on_error(ref, error);
    });
  }
  static tw_status log_tensors_trampoline(void *user_data, tw_hook *, const tw_tensor *const *values,
                                          size_t n_values) {
    return detail::guarded([&] {
      std::vector<Tensor> tensors;
      for (size_t i = 0; i < n_values; ++i) tensors.push_back(Tensor::from_c(*values[i]));
      Extension::of(user_data).log_tensors(tensors);
    });
  }
  static tw_status log_and_record_trampoline(void *user_data, tw_hook *, int64_t elapsed_steps, double elapsed_time,
                                             int64_t global_step) {
    return detail::guarded([&] { Extension::of(user_data).log_and_record(elapsed_steps, elapsed_time, global_step); });
  }
  static tw_status save_trampoline(void *user_data, tw_hook *, tw_session *session, int64_t step, int *stop) {
    return detail::guarded([&] {
      SessionRef ref(session);
      *stop = Extension::of(user_data).save(ref, step) ? 1 : 0;
    });
  }

  // An extension point's user_data, owned by the inner C hook (which may replace it or outlive this
  // object): it reaches the WrappedHook through a cell the destructor clears.
  struct Extension {
    std::shared_ptr<WrappedHook *> self;
    static void destroy(void *user_data) { delete static_cast<Extension *>(user_data); }
    static WrappedHook &of(void *user_data) {
      WrappedHook *target = *static_cast<Extension *>(user_data)->self;
      if (target == nullptr) throw Error(TW_FAILED_PRECONDITION, "the callback object was destroyed while still in use");
      return *target;
    }
  };

  // Sets one extension point. With the implicit overrides_all, an inner hook of another kind just has
  // no such extension point (the setter's TW_INVALID_ARGUMENT).
  template <typename Set>
  void install(bool explicit_mask, Set &&set) {
    Extension *extension = new Extension{self_};
    const tw_status status = set(extension);
    if (status == TW_OK) return;
    delete extension;
    if (status == TW_INVALID_ARGUMENT && !explicit_mask) return;
    throw Error(status, tw_last_error_message());
  }

  tw_hook *inner_;
  Binding *binding_;
  std::shared_ptr<WrappedHook *> self_ = std::make_shared<WrappedHook *>(this);
#endif
};

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
          return tw_singular_monitored_session_create(&session_, detail::handle_of(opts), handles.data(), handles.size());
        case monitored_training:
          return tw_monitored_training_session_create(&session_, detail::handle_of(opts), handles.data(),
                                                      handles.size(), chief_only.data(), chief_only.size());
        default:
          return tw_monitored_session_create(&session_, detail::handle_of(opts), handles.data(), handles.size());
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
    detail::call([&] { return tw_session_run(session_, views.data(), views.size(), &StepFunction::trampoline, &step); });
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

// ------------------------------------------------------------------------------------------------
// Checkpoints
// ------------------------------------------------------------------------------------------------

// tf.train.Saver over caller-owned variables (borrowed while the saver lives).
class Saver {
 public:
  explicit Saver(const std::vector<Tensor> &variables) {
    const std::vector<tw_tensor> views = detail::c_tensors(variables);
    detail::call([&] { return tw_saver_create(&saver_, views.data(), views.size()); });
  }
  // One rank's saver in a job (tw_saver_create_from_options): the variables, shards, collective and
  // retention of `options`; the variables' data is borrowed while the saver lives.
  explicit Saver(const Options &options) {
    detail::call([&] { return tw_saver_create_from_options(&saver_, options.handle()); });
  }
  Saver(const Saver &) = delete;
  Saver &operator=(const Saver &) = delete;
  ~Saver() { tw_saver_destroy(saver_); }

  void set_max_to_keep(int64_t n) {
    detail::call([&] { return tw_saver_set_max_to_keep(saver_, n); });
  }
  void set_keep_checkpoint_every_n_hours(double hours) {
    detail::call([&] { return tw_saver_set_keep_checkpoint_every_n_hours(saver_, hours); });
  }
  void set_pad_step_number(bool pad) {
    detail::call([&] { return tw_saver_set_pad_step_number(saver_, pad ? 1 : 0); });
  }
  // Off by default: see tw_saver_set_recycle_files for the risk it brings.
  void set_recycle_files(bool recycle) {
    detail::call([&] { return tw_saver_set_recycle_files(saver_, recycle ? 1 : 0); });
  }
  // Returns the checkpoint's path ("" for a saver without variables). global_step TW_UNSET: none.
  std::string save(const std::string &prefix, int64_t global_step = detail::unset) {
    const char *path = nullptr;
    detail::call([&] { return tw_saver_save(&path, saver_, prefix.c_str(), global_step); });
    return path != nullptr ? path : "";
  }
  void restore(const std::string &path) {
    detail::call([&] { return tw_saver_restore(saver_, path.c_str()); });
  }
  void restore_variables(const std::string &path, const std::vector<std::string> &names) {
    std::vector<const char *> c_names;
    for (const std::string &name : names) c_names.push_back(name.c_str());
    detail::call([&] { return tw_saver_restore_variables(saver_, path.c_str(), c_names.data(), c_names.size()); });
  }
  // Returns the checkpoint restored.
  std::string restore_newest_good(const std::string &dir) {
    const char *path = nullptr;
    detail::call([&] { return tw_saver_restore_newest_good(&path, saver_, dir.c_str()); });
    return path != nullptr ? path : "";
  }
  void recover_last_checkpoints(const std::string &dir) {
    detail::call([&] { return tw_saver_recover_last_checkpoints(saver_, dir.c_str()); });
  }
  std::vector<std::string> last_checkpoints() const {
    return detail::collect<const char *>(tw_saver_last_checkpoint_count(saver_), [&](size_t i, const char **path) {
      return tw_saver_last_checkpoint_at(path, saver_, i);
    });
  }

 private:
  tw_saver *saver_ = nullptr;
};

// tf.train.latest_checkpoint: the newest checkpoint's path, or "" when there is none.
inline std::string latest_checkpoint(const std::string &dir) {
  std::vector<char> path(256);
  for (;;) {
    const tw_status status = tw_latest_checkpoint(path.data(), path.size(), dir.c_str());
    if (status == TW_OK) return path.data();
    if (status == TW_NOT_FOUND) return "";
    if (status != TW_OUT_OF_RANGE) throw Error(status, tw_last_error_message());
    path.resize(path.size() * 4);
  }
}

// The tensors of a checkpoint: names, dtypes and shapes (no data).
inline std::vector<Tensor> list_variables(const std::string &path) {
  tw_checkpoint_variables *list = nullptr;
  detail::call([&] { return tw_checkpoint_list_variables(&list, path.c_str()); });
  std::vector<Tensor> all;
  try {
    all = detail::collect<tw_tensor>(tw_checkpoint_variables_count(list),
                                     [&](size_t i, tw_tensor *t) { return tw_checkpoint_variables_at(t, list, i); });
  } catch (...) {
    tw_checkpoint_variables_destroy(list);
    throw;
  }
  tw_checkpoint_variables_destroy(list);
  return all;
}

// Reads the tensor named destination.name() into destination's (contiguous) buffer.
inline void load_variable(const std::string &path, const Tensor &destination) {
  const tw_tensor t = destination.c_tensor();
  detail::call([&] { return tw_checkpoint_load_variable(path.c_str(), &t); });
}

// Throws Error(TW_DATA_LOSS, …) unless every checksum of the checkpoint matches.
inline void verify_checkpoint(const std::string &path) {
  detail::call([&] { return tw_checkpoint_verify(path.c_str()); });
}

// ------------------------------------------------------------------------------------------------
// Summaries (TensorBoard event files)
// ------------------------------------------------------------------------------------------------

// A handle on the shared event-file writer of a directory.
class SummaryWriter {
 public:
  explicit SummaryWriter(const std::string &logdir) {
    detail::call([&] { return tw_summary_writer_open(&writer_, logdir.c_str()); });
  }
  SummaryWriter(const SummaryWriter &) = delete;
  SummaryWriter &operator=(const SummaryWriter &) = delete;
  ~SummaryWriter() { tw_summary_writer_destroy(writer_); }

  void add_scalar(const std::string &tag, int64_t step, double value) {
    detail::call([&] { return tw_summary_writer_add_scalar(writer_, tag.c_str(), step, value); });
  }
  void add_histogram(const std::string &tag, int64_t step, const Tensor &values) {
    const tw_tensor t = values.c_tensor();
    detail::call([&] { return tw_summary_writer_add_histogram(writer_, tag.c_str(), step, &t); });
  }
  // `status` is a tw_session_log_status.
  void add_session_log(int64_t step, int status, const std::string &checkpoint_path = std::string(),
                       const std::string &msg = std::string()) {
    detail::call([&] {
      return tw_summary_writer_add_session_log(writer_, step, static_cast<tw_session_log_status>(status),
                                               checkpoint_path.c_str(), msg.c_str());
    });
  }
  // `serialized` holds the bytes of a Summary protobuf (TF's add_summary(bytes)).
  void add_summary(int64_t step, const std::string &serialized) {
    detail::call([&] { return tw_summary_writer_add_summary(writer_, step, serialized.data(), serialized.size()); });
  }
  void flush() {
    detail::call([&] { return tw_summary_writer_flush(writer_); });
  }
  void close() {
    detail::call([&] { return tw_summary_writer_close(writer_); });
  }
  std::string path() const { return tw_summary_writer_path(writer_); }
  tw_summary_writer *handle() const noexcept { return writer_; }

 private:
  tw_summary_writer *writer_ = nullptr;
};

inline tw_summary_writer *detail::handle_of(const SummaryWriter *writer) {
  return writer == nullptr ? nullptr : writer->handle();
}

// One decoded event; only scalar values of a summary are kept.
struct Event {
  int kind = TW_EVENT_NONE;
  double wall_time = 0;
  int64_t step = 0;
  std::vector<std::string> tags;     // every Summary.Value's tag
  std::vector<double> scalars;       // simple_value, NaN for a value that is not a scalar
  int session_log_status = 0;
  std::string checkpoint_path;
  std::string message;
};

class EventReader {
 public:
  explicit EventReader(const std::string &path) {
    detail::call([&] { return tw_event_reader_open(&reader_, path.c_str()); });
  }
  EventReader(const EventReader &) = delete;
  EventReader &operator=(const EventReader &) = delete;
  ~EventReader() { tw_event_reader_destroy(reader_); }

  // False after the last event.
  bool next(Event &out) {
    tw_event e;
    tw_event_init(&e);
    const tw_status status = tw_event_reader_next(&e, reader_);
    if (status == TW_OUT_OF_RANGE) return false;
    if (status != TW_OK) throw Error(status, tw_last_error_message());
    out = Event();
    out.kind = e.kind;
    out.wall_time = e.wall_time;
    out.step = e.step;
    for (size_t i = 0; i < e.value_count; ++i) {
      const tw_summary_value &value = *e.values[i];
      out.tags.emplace_back(value.tag);
      out.scalars.push_back(value.kind == TW_SUMMARY_VALUE_SCALAR ? value.simple_value
                                                                   : std::numeric_limits<double>::quiet_NaN());
    }
    out.session_log_status = e.session_log_status;
    out.checkpoint_path = e.checkpoint_path != nullptr ? e.checkpoint_path : "";
    out.message = e.message != nullptr ? e.message : "";
    return true;
  }

 private:
  tw_event_reader *reader_ = nullptr;
};

}  // namespace trainwatch

#endif  // TRAINWATCH_HPP
