// C# callbacks through the C++ facade, without a managed exception ever unwinding through native frames.
//
// SWIG's C# directors have no director:except: an exception thrown by a C# override would unwind
// through the library's frames. So C# never overrides a facade callback directly; it overrides the
// Managed* classes below, whose virtual methods return false instead of throwing. The C# side
// (bindings/csharp/src/CallbackGuard.cs) catches the exception, keeps the object under a ticket and
// records the ticket, status and message here (record_failure). The facade's own override then throws
// ManagedError, which the facade treats like any callback exception: its trampoline returns the
// status to the library, and the C call's wrapper rethrows it once the library has returned.
// csharp.i's %exception hands it back to C#, which throws the object kept under its ticket.
#ifndef TRAINWATCH_CSHARP_MANAGED_CALLBACKS_HPP
#define TRAINWATCH_CSHARP_MANAGED_CALLBACKS_HPP

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trainwatch.hpp"

namespace trainwatch {
namespace csharp {

// A C# callback failed; ticket names the C# exception object (0: there is none to rethrow).
class ManagedError : public Error {
 public:
  ManagedError(tw_status code, const std::string &message, int64_t ticket)
      : Error(code == TW_OK ? TW_CALLBACK_FAILED : code, message), ticket_(ticket) {}
  int64_t ticket() const noexcept { return ticket_; }

 private:
  int64_t ticket_;
};

namespace detail {
struct Failure {
  tw_status code = TW_CALLBACK_FAILED;
  std::string message = "a C# callback failed";
  int64_t ticket = 0;
};
inline Failure &recorded_failure() noexcept {
  thread_local Failure failure;
  return failure;
}

// Throws what the C# callback that just returned false recorded on this thread.
[[noreturn]] inline void throw_recorded_failure() {
  Failure failure = std::exchange(recorded_failure(), Failure());
  throw ManagedError(failure.code, failure.message, failure.ticket);
}

inline void check(bool succeeded) {
  if (!succeeded) throw_recorded_failure();
}
}  // namespace detail

// Called by C# right before a callback returns false.
inline void record_failure(int code, const std::string &message, int64_t ticket) {
  detail::recorded_failure() = detail::Failure{static_cast<tw_status>(code), message, ticket};
}

// A Hook whose callbacks are C# methods returning false on failure. on_error cannot fail.
class ManagedHook : public Hook {
 public:
  explicit ManagedHook(const std::string &name) : Hook(name) {}
  HookHandle *hook() noexcept { return this; }

  virtual bool managed_begin(SessionRef &session) = 0;
  virtual bool managed_after_create_session(SessionRef &session) = 0;
  virtual bool managed_before_run(RunContext &ctx) = 0;
  virtual bool managed_after_run(RunContext &ctx) = 0;
  virtual bool managed_end(SessionRef &session) = 0;
  virtual void managed_on_error(SessionRef &session, int error) = 0;

 private:
  void begin(SessionRef &session) final { detail::check(managed_begin(session)); }
  void after_create_session(SessionRef &session) final { detail::check(managed_after_create_session(session)); }
  void before_run(RunContext &ctx) final { detail::check(managed_before_run(ctx)); }
  void after_run(RunContext &ctx) final { detail::check(managed_after_run(ctx)); }
  void end(SessionRef &session) final { detail::check(managed_end(session)); }
  void on_error(SessionRef &session, int error) final { managed_on_error(session, error); }
};

// A C# subclass of a built-in hook: the WrappedHook whose overridden methods (`overridden`, a mask of
// WrappedHook::Overrides) call C# methods returning false on failure; the others stay the built-in's,
// run natively. C# reaches the super() calls through wrapped(); managed_save hands its stop request
// back through set_stop.
class ManagedWrappedHook : public WrappedHook {
 public:
  ManagedWrappedHook(const HookHandle &inner, int overridden) : WrappedHook(inner, overridden) {}
  HookHandle *hook() noexcept { return this; }
  WrappedHook *wrapped() noexcept { return this; }
  void set_stop(bool stop) noexcept { stop_ = stop; }

  virtual bool managed_begin(SessionRef &session) = 0;
  virtual bool managed_after_create_session(SessionRef &session) = 0;
  virtual bool managed_before_run(RunContext &ctx) = 0;
  virtual bool managed_after_run(RunContext &ctx) = 0;
  virtual bool managed_end(SessionRef &session) = 0;
  virtual void managed_on_error(SessionRef &session, int error) = 0;
  virtual bool managed_log_tensors(const std::vector<Tensor> &values) = 0;
  virtual bool managed_log_and_record(int64_t elapsed_steps, double elapsed_time, int64_t global_step) = 0;
  virtual bool managed_save(SessionRef &session, int64_t step) = 0;

 private:
  void begin(SessionRef &session) final { detail::check(managed_begin(session)); }
  void after_create_session(SessionRef &session) final { detail::check(managed_after_create_session(session)); }
  void before_run(RunContext &ctx) final { detail::check(managed_before_run(ctx)); }
  void after_run(RunContext &ctx) final { detail::check(managed_after_run(ctx)); }
  void end(SessionRef &session) final { detail::check(managed_end(session)); }
  void on_error(SessionRef &session, int error) final { managed_on_error(session, error); }
  void log_tensors(const std::vector<Tensor> &values) final { detail::check(managed_log_tensors(values)); }
  void log_and_record(int64_t elapsed_steps, double elapsed_time, int64_t global_step) final {
    detail::check(managed_log_and_record(elapsed_steps, elapsed_time, global_step));
  }
  bool save(SessionRef &session, int64_t step) final {
    stop_ = false;
    detail::check(managed_save(session, step));
    return stop_;
  }

  bool stop_ = false;
};

// A step function written in C#.
class ManagedStep : public StepFunction {
 public:
  StepFunction &step() noexcept { return *this; }
  virtual bool managed_run(StepContext &ctx) = 0;

 private:
  void run(StepContext &ctx) final { detail::check(managed_run(ctx)); }
};

// A CheckpointSaverListener written in C#; managed_after_save calls request_stop() to ask for a stop.
class ManagedListener : public CheckpointSaverListener {
 public:
  explicit ManagedListener(const std::string &name) : CheckpointSaverListener(name) {}
  CheckpointSaverListener *listener() noexcept { return this; }
  void request_stop() noexcept { stop_requested_ = true; }

  virtual bool managed_begin() = 0;
  virtual bool managed_before_save(SessionRef &session, int64_t global_step) = 0;
  virtual bool managed_after_save(SessionRef &session, int64_t global_step) = 0;
  virtual bool managed_end(SessionRef &session, int64_t global_step) = 0;

 private:
  void begin() final { detail::check(managed_begin()); }
  void before_save(SessionRef &session, int64_t global_step) final {
    detail::check(managed_before_save(session, global_step));
  }
  bool after_save(SessionRef &session, int64_t global_step) final {
    stop_requested_ = false;
    detail::check(managed_after_save(session, global_step));
    return stop_requested_;
  }
  void end(SessionRef &session, int64_t global_step) final { detail::check(managed_end(session, global_step)); }

  bool stop_requested_ = false;
};

// NanTensorHook's TW_NAN_ACTION_CALLBACK written in C#.
class ManagedNanFunction : public NanFunction {
 public:
  NanFunction *function() noexcept { return this; }
  virtual bool managed_on_nan(SessionRef &session, const NanEvent &event) = 0;

 private:
  void on_nan(SessionRef &session, const NanEvent &event) final { detail::check(managed_on_nan(session, event)); }
};

// Scaffold's init_fn written in C# (Options.SetInitFunction).
class ManagedInitFunction : public InitFunction {
 public:
  InitFunction *function() noexcept { return this; }
  virtual bool managed_run(SessionRef &session) = 0;

 private:
  void run(SessionRef &session) final { detail::check(managed_run(session)); }
};

// WorkerSessionCreator's readiness test written in C#: managed_ready calls set_ready(true) when ready.
class ManagedReadyFunction : public ReadyFunction {
 public:
  ReadyFunction *function() noexcept { return this; }
  void set_ready(bool ready) noexcept { ready_ = ready; }
  virtual bool managed_ready(SessionRef &session) = 0;

 private:
  bool ready(SessionRef &session) final {
    ready_ = false;
    detail::check(managed_ready(session));
    return ready_;
  }

  bool ready_ = false;
};

// LoggingTensorHook's formatter written in C#: managed_format calls set_text with the line.
class ManagedLogFormatter : public LogFormatter {
 public:
  LogFormatter *formatter() noexcept { return this; }
  void set_text(const std::string &text) { text_ = text; }
  virtual bool managed_format(const std::vector<Tensor> &values) = 0;

 private:
  std::string format(const std::vector<Tensor> &values) final {
    text_.clear();
    detail::check(managed_format(values));
    return std::move(text_);
  }

  std::string text_;
};

// FeedFnHook's feed_fn written in C#: managed_feeds calls add_feed for each feed of the run.
class ManagedFeedFunction : public FeedFunction {
 public:
  FeedFunction *function() noexcept { return this; }
  void add_feed(const Tensor &feed) { feeds_.push_back(feed); }
  virtual bool managed_feeds() = 0;

 private:
  std::vector<Tensor> feeds() final {
    feeds_.clear();
    detail::check(managed_feeds());
    return std::move(feeds_);
  }

  std::vector<Tensor> feeds_;
};

// GlobalStepWaiterHook's reader of the shared global step written in C#: managed_global_step calls
// set_global_step with what it read.
class ManagedGlobalStepFunction : public GlobalStepFunction {
 public:
  GlobalStepFunction *function() noexcept { return this; }
  void set_global_step(int64_t step) noexcept { step_ = step; }
  virtual bool managed_global_step(SessionRef &session) = 0;

 private:
  int64_t global_step(SessionRef &session) final {
    step_ = 0;
    detail::check(managed_global_step(session));
    return step_;
  }

  int64_t step_ = 0;
};

// The log sink written in C#: it cannot fail (C# drops what it throws).
class ManagedLogSink : public LogSink {
 public:
  virtual void managed_write(int level, const std::string &message) = 0;

 private:
  void write(int level, const std::string &message) final { managed_write(level, message); }
};

inline void set_managed_log_sink(ManagedLogSink *sink) { set_log_sink(sink); }

}  // namespace csharp
}  // namespace trainwatch

#endif  // TRAINWATCH_CSHARP_MANAGED_CALLBACKS_HPP
