// trainwatch/hooks.hpp — part of the C++ facade (bindings/cpp/trainwatch.hpp, whose comment gives its
// rules): the built-in hooks, and subclassing one with tw_hook_wrap (trainwatch/hooks.h).
#ifndef TRAINWATCH_HPP_HOOKS_HPP
#define TRAINWATCH_HPP_HOOKS_HPP

#include "session.hpp"
#include "summary.hpp"

namespace trainwatch {

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
          return guarded_on(u, [&](CheckpointSaverListener &l) {
            SessionRef r(s);
            l.before_save(r, step);
          });
        },
        [](void *u, tw_session *s, int64_t step, int *request_stop) {
          return guarded_on(u, [&](CheckpointSaverListener &l) {
            SessionRef r(s);
            *request_stop = l.after_save(r, step) ? 1 : 0;
          });
        },
        [](void *u, tw_session *s, int64_t step) {
          return guarded_on(u, [&](CheckpointSaverListener &l) {
            SessionRef r(s);
            l.end(r, step);
          });
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
      const NanEvent event{e->tensor_name != nullptr ? e->tensor_name : "",
                           e->global_step,
                           e->nan_count,
                           e->pos_inf_count,
                           e->neg_inf_count,
                           e->first_nonfinite_index};
      static_cast<NanFunction *>(user_data)->on_nan(ref, event);
    });
  }
};

// ------------------------------------------------------------------------------------------------
// The other tf.train hooks (LoggingTensor, StepCounter, SummarySaver, FeedFn, FinalOps, GlobalStepWaiter,
// Profiler). Steps are TW_UNSET and seconds negative when "not given". The C API reads every period from
// options (TW_OPT_EVERY_N_STEPS / _SECS); StepCounterHook and ProfilerHook keep TF's arguments here.
// ------------------------------------------------------------------------------------------------

namespace detail {
inline std::vector<const char *> c_strings(const std::vector<std::string> &strings) {
  std::vector<const char *> pointers;
  for (const std::string &s : strings) pointers.push_back(s.c_str());
  return pointers;
}
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
    create(
        [&](tw_hook **out) { return tw_step_counter_hook_create(out, options.handle(), detail::handle_of(writer)); });
  }
};

// SummarySaverHook(save_steps, save_secs, output_dir, summary_writer, summary_op) (B35–B40): the values
// named or matched by `summarize` (empty: every published value); TW_OPT_EVERY_N_STEPS / _SECS,
// TW_OPT_OUTPUT_DIR, TW_OPT_SUMMARY_HISTOGRAMS, TW_OPT_SUMMARY_HISTOGRAM_NAMES (B49) in opts.
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
  static tw_status log_tensors_trampoline(void *user_data, tw_hook *, const tw_tensor *const *values, size_t n_values) {
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
      if (target == nullptr)
        throw Error(TW_FAILED_PRECONDITION, "the callback object was destroyed while still in use");
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

}  // namespace trainwatch

#endif  // TRAINWATCH_HPP_HOOKS_HPP
