// The C++ facade (bindings/cpp/trainwatch.hpp): RAII handles, virtual callbacks, and exceptions thrown
// by callbacks coming out of the C call that ran them — what every SWIG binding relies on.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "scratch_dir.h"
#include "trainwatch.hpp"

namespace tw = trainwatch;

namespace {

struct Thrown {  // a user exception type that is not a std::exception
  int id;
};

class RecordingHook : public tw::Hook {
 public:
  explicit RecordingHook(std::vector<std::string> *log) : tw::Hook("recording"), log_(log) {}
  void begin(tw::SessionRef &) override { log_->push_back("begin"); }
  void after_create_session(tw::SessionRef &) override { log_->push_back("after_create_session"); }
  void before_run(tw::RunContext &ctx) override {
    log_->push_back("before_run");
    ctx.request_fetch("loss");
  }
  void after_run(tw::RunContext &ctx) override {
    log_->push_back("after_run");
    loss = *static_cast<float *>(ctx.result("loss").data());
  }
  void end(tw::SessionRef &) override { log_->push_back("end"); }
  void on_error(tw::SessionRef &, int error) override { log_->push_back("on_error " + tw::status_name(error)); }
  float loss = 0;

 private:
  std::vector<std::string> *log_;
};

float g_loss = 0.25f;

void publish_loss(tw::StepContext &ctx) { ctx.publish(tw::Tensor("loss", &g_loss, TW_FLOAT32, {})); }

void lifecycle_in_order_with_fetches(void **) {  // H6, H9, H12
  std::vector<std::string> log;
  RecordingHook hook(&log);
  {
    tw::Session session(tw::Session::monitored, nullptr, {&hook});
    session.run(publish_loss);
    session.close();
  }
  const std::vector<std::string> expected = {"begin", "after_create_session", "before_run", "after_run", "end"};
  assert_true(log == expected);
  assert_true(hook.loss == 0.25f);
}

class ThrowingHook : public tw::Hook {
 public:
  ThrowingHook() : tw::Hook("throwing") {}
  void after_run(tw::RunContext &) override { throw Thrown{42}; }
};

void callback_exception_comes_out_of_run_unchanged(void **) {  // H14
  ThrowingHook hook;
  tw::Session session(tw::Session::monitored, nullptr, {&hook});
  int caught = 0;
  try {
    session.run(publish_loss);
  } catch (const Thrown &e) {
    caught = e.id;
  }
  assert_int_equal(caught, 42);
  // The session is failed now: later runs are refused with the library's status.
  try {
    session.run(publish_loss);
    fail();
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_FAILED_PRECONDITION);
  }
}

void aborted_error_from_the_step_triggers_recovery(void **) {  // W25
  tw::Options options;
  options.set_double(TW_OPT_RECOVERY_BACKOFF_SECS, 0.0);
  tw::Session session(tw::Session::monitored, &options, {});
  int calls = 0;
  session.run([&](tw::StepContext &) {
    if (++calls == 1) throw tw::Error(TW_ABORTED, "preempted");
  });
  assert_int_equal(calls, 2);
  assert_int_equal(session.creation_count(), 2);
}

void out_of_range_from_the_step_is_rethrown_as_itself(void **) {
  tw::Session session(tw::Session::singular, nullptr, {});
  try {
    session.run([](tw::StepContext &) { throw tw::Error(TW_OUT_OF_RANGE, "end of input"); });
    fail();
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_OUT_OF_RANGE);
    assert_string_equal(e.what(), "end of input");
  }
}

void request_stop_in_the_step_is_stop_iteration(void **) {  // W21, W23
  tw::Session session(tw::Session::monitored, nullptr, {});
  try {
    session.run([](tw::StepContext &ctx) { ctx.request_stop(); });
    fail();
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_STOP_ITERATION);
  }
  assert_false(session.should_stop());
}

void a_hook_destroyed_before_its_session_fails_cleanly(void **) {
  std::vector<std::string> log;
  auto hook = std::make_unique<RecordingHook>(&log);
  tw::Session session(tw::Session::monitored, nullptr, {hook.get()});
  hook.reset();  // the session still holds the C hook
  try {
    session.run(publish_loss);
    fail();
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_FAILED_PRECONDITION);
  }
}

void built_in_hooks_and_options(void **) {  // B11, B14
  tw::StopAtStepHook stop(tw::detail::unset, 3);
  tw::Session session(tw::Session::monitored, nullptr, {&stop});
  int runs = 0;
  while (!session.should_stop()) session.run([&](tw::StepContext &) { ++runs; });
  assert_int_equal(runs, 3);
  assert_int_equal(session.global_step(), 3);
  try {
    tw::StopAtStepHook neither(tw::detail::unset, tw::detail::unset);
    fail();
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_INVALID_ARGUMENT);
  }
  tw::Options options;
  try {
    options.set_double(TW_OPT_IS_CHIEF, 1.0);  // an int64 option
    fail();
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_INVALID_ARGUMENT);
  }
}

void numerics_and_check_numerics(void **) {
  std::vector<float> values = {1.0f, NAN, INFINITY, 2.0f};
  const tw::Tensor t("values", values.data(), TW_FLOAT32, {4});
  const tw::ScanResult r = tw::scan(t);
  assert_int_equal(r.nan_count, 1);
  assert_int_equal(r.pos_inf_count, 1);
  assert_int_equal(r.first_nonfinite_index, 1);
  const tw::TensorStats stats = tw::tensor_stats(t);
  assert_int_equal(stats.element_count, 4);
  assert_int_equal(stats.finite_count, 2);
  assert_int_equal(stats.nan_count, 1);
  assert_true(stats.min == 1.0 && stats.max == 2.0 && stats.mean == 1.5);
  try {
    tw::check_numerics(t, "grads");
    fail();
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_INVALID_ARGUMENT);
    assert_string_equal(e.what(), "grads : Tensor had Inf and NaN values");
  }
}

// SessionLog events and serialized Summary bytes written through the facade read back as events.
void summary_writer_session_logs_and_serialized_summaries(void **) {
  const ScratchDir scratch;
  const char *dir = scratch.path();
  assert_true(dir[0] != '\0');
  std::string path;
  {
    tw::SummaryWriter writer(dir);
    writer.add_session_log(3, TW_SESSION_LOG_CHECKPOINT, "/ckpt/model-3", "saved");
    // Summary{value{tag: "x", simple_value: 2.0f}}
    const std::string summary("\x0a\x08\x0a\x01x\x15\x00\x00\x00\x40", 10);
    writer.add_summary(4, summary);
    try {
      writer.add_summary(5, std::string("\x0a\x05", 2));  // a length past the end
      fail();
    } catch (const tw::Error &e) {
      assert_int_equal(e.code(), TW_DATA_LOSS);
    }
    path = writer.path();
    writer.close();
  }
  tw::EventReader reader(path);
  tw::Event e;
  assert_true(reader.next(e));  // file_version
  assert_true(reader.next(e));
  assert_int_equal(e.step, 3);
  assert_int_equal(e.session_log_status, TW_SESSION_LOG_CHECKPOINT);
  assert_string_equal(e.checkpoint_path.c_str(), "/ckpt/model-3");
  assert_string_equal(e.message.c_str(), "saved");
  assert_true(reader.next(e));
  assert_int_equal(e.step, 4);
  assert_int_equal(e.tags.size(), 1);
  assert_string_equal(e.tags[0].c_str(), "x");
  assert_true(e.scalars[0] == 2.0);
  assert_false(reader.next(e));
}

void saver_round_trip_in_place(void **) {
  const ScratchDir scratch;
  const char *dir = scratch.path();
  assert_true(dir[0] != '\0');
  std::vector<double> w = {1, 2, 3};
  tw::Saver saver({tw::Tensor("w", w.data(), TW_FLOAT64, {3})});
  const std::string path = saver.save(std::string(dir) + "/model.ckpt", 5);
  assert_true(tw::latest_checkpoint(dir) == path);
  w = {0, 0, 0};
  const double *address = w.data();
  saver.restore(path);
  assert_true(w.data() == address && w[0] == 1 && w[2] == 3);
  const std::vector<tw::Tensor> listed = tw::list_variables(path);
  assert_int_equal(listed.size(), 1);
  assert_string_equal(listed[0].name().c_str(), "w");
  assert_true(tw::latest_checkpoint(std::string(dir) + "/nothing").empty());
}

// C25: close() releases the directory at once (a second saver of it saves), the destructor releases an
// open saver, and a closed saver throws a clear Error instead of touching freed memory.
void saver_close_releases_the_directory_C25(void **) {
  char dir[] = "/tmp/tw_facade_close_XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string prefix = std::string(dir) + "/model.ckpt";
  std::vector<float> w = {1, 2};
  tw::Saver first({tw::Tensor("w", w.data(), TW_FLOAT32, {2})});
  first.save(prefix, 1);
  tw::Saver second({tw::Tensor("w", w.data(), TW_FLOAT32, {2})});
  try {
    second.save(prefix, 2);
    fail_msg("a second saver was let into a held directory");
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_FAILED_PRECONDITION);
    assert_non_null(std::strstr(e.what(), "is in use: a Saver of this process"));  // C24
  }
  first.close();
  assert_true(first.closed());
  assert_true(second.save(prefix, 2) == prefix + "-2");
  first.close();  // again: nothing
  try {
    first.save(prefix, 3);
    fail_msg("a closed saver saved");
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_FAILED_PRECONDITION);
    assert_non_null(std::strstr(e.what(), "this Saver is closed"));
  }
  second.close();
  {
    tw::Saver scoped({tw::Tensor("w", w.data(), TW_FLOAT32, {2})});
    scoped.save(prefix, 3);
  }  // RAII: released here
  tw::Saver third({tw::Tensor("w", w.data(), TW_FLOAT32, {2})});
  assert_true(third.save(prefix, 4) == prefix + "-4");
  const std::string command = std::string("rm -rf ") + dir;
  assert_int_equal(std::system(command.c_str()), 0);
}

// C27: a hook saves through the session's own saver beside the CheckpointSaverHook holding the directory
// (TF's scaffold.saver.save from a hook); elsewhere it is refused with an Error.
class SavingHook : public tw::Hook {
 public:
  explicit SavingHook(std::string prefix) : tw::Hook("saving"), prefix_(std::move(prefix)) {}
  void after_run(tw::RunContext &ctx) override {
    tw::SessionRef session = ctx.session();
    saved.push_back(session.save_checkpoint(prefix_, session.global_step()));
  }
  std::vector<std::string> saved;

 private:
  std::string prefix_;
};

void session_saves_a_checkpoint_on_request_C27(void **) {
  const ScratchDir scratch;
  const std::string dir = scratch.path();
  std::vector<float> w = {1, 2};
  tw::Options options;
  options.add_variable(tw::Tensor("w", w.data(), TW_FLOAT32, {2}));
  options.set_string(TW_OPT_CHECKPOINT_DIR, dir);
  tw::Options every_100;
  every_100.set_int64(TW_OPT_EVERY_N_STEPS, 100);
  tw::CheckpointSaverHook saver_hook(dir, &every_100, {});
  SavingHook hook(dir + "/model.ckpt");
  tw::Session session(tw::Session::monitored, &options, {&saver_hook, &hook});
  session.run([](tw::StepContext &) {});
  session.run([](tw::StepContext &) {});
  assert_true(hook.saved == std::vector<std::string>({dir + "/model.ckpt-1", dir + "/model.ckpt-2"}));
  assert_true(tw::latest_checkpoint(dir) == hook.saved.back());
  try {
    session.save_checkpoint(dir + "/elsewhere/model.ckpt");
    fail_msg("a save outside the session's directory was let through");
  } catch (const tw::Error &e) {
    assert_int_equal(e.code(), TW_NOT_FOUND);  // no such directory
  }
  session.close();
}

// Every list getter goes through detail::collect: each reads its whole list, in order.
class ListingHook : public tw::Hook {
 public:
  ListingHook() : tw::Hook("listing") {}
  void before_run(tw::RunContext &ctx) override {
    ctx.request_fetch("loss");
    ctx.request_fetch("w");
    requests = ctx.requests();
    original_feeds = names_of(ctx.original_feeds());
  }
  void after_run(tw::RunContext &ctx) override { results = names_of(ctx.results()); }
  static std::vector<std::string> names_of(const std::vector<tw::Tensor> &tensors) {
    std::vector<std::string> names;
    for (const tw::Tensor &t : tensors) names.push_back(t.name());
    return names;
  }
  std::vector<std::string> requests, original_feeds, results;
};

void list_getters_read_their_whole_lists(void **) {
  const ScratchDir scratch;
  const char *dir = scratch.path();
  assert_true(dir[0] != '\0');
  std::vector<float> w = {1, 2}, b = {3};
  tw::Options options;
  options.add_variable(tw::Tensor("w", w.data(), TW_FLOAT32, {2}));
  options.add_variable(tw::Tensor("b", b.data(), TW_FLOAT32, {1}));
  ListingHook hook;
  tw::Session session(tw::Session::monitored, &options, {&hook});
  float x = 1, y = 2;
  std::vector<std::string> feeds, requested;
  session.run(
      [&](tw::StepContext &ctx) {
        feeds = ListingHook::names_of(ctx.feeds());
        requested = ctx.requested();
        publish_loss(ctx);
      },
      {tw::Tensor("x", &x, TW_FLOAT32, {}), tw::Tensor("y", &y, TW_FLOAT32, {})});
  const std::vector<std::string> xy = {"x", "y"}, loss_w = {"loss", "w"}, w_b = {"w", "b"};
  assert_true(feeds == xy);
  assert_true(hook.original_feeds == xy);
  assert_true(requested == loss_w);
  assert_true(hook.requests == loss_w);
  assert_true(hook.results == loss_w);
  assert_true(ListingHook::names_of(session.variables()) == w_b);

  tw::Saver saver({tw::Tensor("w", w.data(), TW_FLOAT32, {2}), tw::Tensor("b", b.data(), TW_FLOAT32, {1})});
  const std::string first = saver.save(std::string(dir) + "/model.ckpt", 1);
  const std::string second = saver.save(std::string(dir) + "/model.ckpt", 2);
  assert_true(saver.last_checkpoints() == std::vector<std::string>({first, second}));
  assert_int_equal(tw::list_variables(second).size(), 2);
}

class StopAfterSave : public tw::CheckpointSaverListener {
 public:
  bool after_save(tw::SessionRef &, int64_t step) override { return step == 2; }
};

void listener_can_stop_training(void **) {  // B22
  const ScratchDir scratch;
  const char *dir = scratch.path();
  assert_true(dir[0] != '\0');
  std::vector<float> w = {1};
  tw::Options options;
  options.add_variable(tw::Tensor("w", w.data(), TW_FLOAT32, {1}));
  tw::Options hook_options;
  hook_options.set_int64(TW_OPT_EVERY_N_STEPS, 2);
  hook_options.set_int64(TW_OPT_ASYNC_CHECKPOINT, 0);
  StopAfterSave listener;
  tw::CheckpointSaverHook saver(dir, &hook_options, {&listener});
  tw::Session session(tw::Session::monitored, &options, {&saver});
  while (!session.should_stop()) session.run([](tw::StepContext &) {});
  assert_int_equal(session.global_step(), 2);
}

class CountingFeeds : public tw::FeedFunction {
 public:
  std::vector<tw::Tensor> feeds() override {
    value = static_cast<float>(++calls);
    return {tw::Tensor("x", &value, TW_FLOAT32, {})};
  }
  int calls = 0;
  float value = 0;
};

void feed_function_feeds_every_run_B44(void **) {
  CountingFeeds feeds;
  tw::FeedFnHook hook(&feeds);
  tw::Session session(tw::Session::monitored_training, nullptr, {&hook});
  std::vector<float> seen;
  for (int i = 0; i < 3; ++i) {
    session.run([&](tw::StepContext &ctx) { seen.push_back(*static_cast<float *>(ctx.feed("x").data())); });
  }
  assert_true(seen == std::vector<float>({1, 2, 3}));
}

class Formatter : public tw::LogFormatter {
 public:
  std::string format(const std::vector<tw::Tensor> &values) override {
    formatted.push_back(values.at(0).name());
    return "custom";
  }
  std::vector<std::string> formatted;
};

void log_formatter_sees_the_values_B9(void **) {
  Formatter formatter;
  tw::Options options;
  options.set_int64(TW_OPT_EVERY_N_STEPS, 1);
  tw::LoggingTensorHook hook({"loss"}, {}, &options, &formatter);
  tw::Session session(tw::Session::monitored, nullptr, {&hook});
  session.run(publish_loss);
  session.run(publish_loss);
  assert_int_equal(formatter.formatted.size(), 2);
  assert_string_equal(formatter.formatted[0].c_str(), "loss");
}

// TF's "class NanTensorHookCustom(tf.train.NanTensorHook)" through the facade: after_run overridden,
// super() optional (B33 kept or skipped); before_run's super returns the built-in's fetch (B31).
class NanTensorHookCustom : public tw::WrappedHook {
 public:
  NanTensorHookCustom(const tw::HookHandle &inner, bool call_super)
      : tw::WrappedHook(inner, overrides_before_run | overrides_after_run), call_super_(call_super) {}
  void before_run(tw::RunContext &ctx) override {
    tw::WrappedHook::before_run(ctx);  // super(): requests "loss"
    requests = ctx.requests();
  }
  void after_run(tw::RunContext &ctx) override {
    const float loss = *static_cast<float *>(ctx.result("loss").data());
    output_seen = *static_cast<float *>(ctx.session().output("loss").data());
    if (std::isnan(loss)) ++custom_actions;
    if (call_super_) tw::WrappedHook::after_run(ctx);
  }
  std::vector<std::string> requests;
  float output_seen = 0;
  int custom_actions = 0;

 private:
  bool call_super_;
};

float g_nan_loss = NAN;
void publish_nan_loss(tw::StepContext &ctx) { ctx.publish(tw::Tensor("loss", &g_nan_loss, TW_FLOAT32, {})); }

void wrapped_nan_hook_with_and_without_super_B31_B33(void **) {
  for (int call_super = 0; call_super < 2; ++call_super) {
    tw::NanTensorHook inner("loss", true);
    NanTensorHookCustom hook(inner, call_super != 0);
    assert_string_equal(hook.name().c_str(), "NanTensorHook");
    tw::Session session(tw::Session::monitored, nullptr, {&hook});
    session.run(publish_loss);
    assert_true(hook.requests == std::vector<std::string>{"loss"});
    assert_true(hook.output_seen == 0.25f);
    tw_status status = TW_OK;
    try {
      session.run(publish_nan_loss);
    } catch (const tw::Error &e) {
      status = e.code();
    }
    assert_int_equal(hook.custom_actions, 1);
    assert_int_equal(status, call_super ? TW_NAN_LOSS : TW_OK);
    // Outside after_run nothing is readable.
    int code = TW_OK;
    try {
      session.output("loss");
    } catch (const tw::Error &e) {
      code = e.code();
    }
    assert_int_equal(code, TW_FAILED_PRECONDITION);
  }
}

// Extension points as virtuals: log_tensors replaces the line (and may call the built-in);
// log_and_record and save likewise; save's true requests stop in that run (B24's after_save rule).
class CustomLogging : public tw::WrappedHook {
 public:
  explicit CustomLogging(const tw::HookHandle &inner) : tw::WrappedHook(inner) {}
  void log_tensors(const std::vector<tw::Tensor> &values) override {
    tags.push_back(values.at(0).name());
    if (tags.size() == 2) super_log_tensors(values);
  }
  std::vector<std::string> tags;
};

class CustomSaver : public tw::WrappedHook {
 public:
  explicit CustomSaver(const tw::HookHandle &inner) : tw::WrappedHook(inner, overrides_save) {}
  bool save(tw::SessionRef &session, int64_t step) override {
    steps.push_back(step);
    super_save(session, step);
    return step >= 2;
  }
  std::vector<int64_t> steps;
};

void wrapped_extension_points_B9_B24(void **) {
  tw::Options options;
  options.set_int64(TW_OPT_EVERY_N_STEPS, 2);
  tw::LoggingTensorHook logging({"loss"}, {}, &options);
  CustomLogging custom(logging);
  {
    tw::Session session(tw::Session::monitored, nullptr, {&custom});
    for (int i = 0; i < 3; ++i) session.run(publish_loss);
  }
  // The override never moved the timer on its first call (TF: the built-in does), so it fired on
  // runs 1 and 2; the built-in called on run 2 moved it, so run 3 did not fire.
  assert_int_equal(custom.tags.size(), 2);
  assert_string_equal(custom.tags[0].c_str(), "loss");

  const ScratchDir scratch;
  const char *dir = scratch.path();
  assert_true(dir[0] != '\0');
  tw::Options saver_options;
  saver_options.set_int64(TW_OPT_EVERY_N_STEPS, 1);
  saver_options.set_int64(TW_OPT_ASYNC_CHECKPOINT, 0);
  tw::CheckpointSaverHook saver(dir, &saver_options);
  CustomSaver custom_saver(saver);
  tw::Session session(tw::Session::monitored, nullptr, {&custom_saver});
  session.run(publish_loss);
  assert_false(session.should_stop());
  session.run(publish_loss);
  assert_true(session.should_stop());  // save(…, 2) returned true in that run
  assert_true((custom_saver.steps == std::vector<int64_t>{0, 1, 2}));
  session.close();

  tw::StopAtStepHook stop(10, TW_UNSET);
  int code = TW_OK;
  try {
    tw::WrappedHook wrong(stop, tw::WrappedHook::overrides_save);
  } catch (const tw::Error &e) {
    code = e.code();
  }
  assert_int_equal(code, TW_INVALID_ARGUMENT);  // StopAtStepHook has no _save
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lifecycle_in_order_with_fetches),
      cmocka_unit_test(callback_exception_comes_out_of_run_unchanged),
      cmocka_unit_test(aborted_error_from_the_step_triggers_recovery),
      cmocka_unit_test(out_of_range_from_the_step_is_rethrown_as_itself),
      cmocka_unit_test(request_stop_in_the_step_is_stop_iteration),
      cmocka_unit_test(a_hook_destroyed_before_its_session_fails_cleanly),
      cmocka_unit_test(built_in_hooks_and_options),
      cmocka_unit_test(numerics_and_check_numerics),
      cmocka_unit_test(summary_writer_session_logs_and_serialized_summaries),
      cmocka_unit_test(saver_round_trip_in_place),
      cmocka_unit_test(saver_close_releases_the_directory_C25),
      cmocka_unit_test(session_saves_a_checkpoint_on_request_C27),
      cmocka_unit_test(list_getters_read_their_whole_lists),
      cmocka_unit_test(listener_can_stop_training),
      cmocka_unit_test(feed_function_feeds_every_run_B44),
      cmocka_unit_test(log_formatter_sees_the_values_B9),
      cmocka_unit_test(wrapped_nan_hook_with_and_without_super_B31_B33),
      cmocka_unit_test(wrapped_extension_points_B9_B24),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
