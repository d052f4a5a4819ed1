#include "session/session.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/log.h"
#include "base/progress.h"
#include "base/saturating.h"
#include "base/timer.h"
#include "checkpoint/async_saver.h"
#include "checkpoint/io/path.h"
#include "checkpoint/saver.h"
#include "numerics/check_numerics.h"
#include "session/checkpoint_restorer.h"

using tw::Errorf;
using tw::Status;

namespace {

// Sets a flag for the life of a scope, even when an exception unwinds it.
class ScopedFlag {
 public:
  explicit ScopedFlag(bool &flag) : flag_(flag) { flag_ = true; }
  ~ScopedFlag() { flag_ = false; }
  ScopedFlag(const ScopedFlag &) = delete;
  ScopedFlag &operator=(const ScopedFlag &) = delete;

 private:
  bool &flag_;
};

// A hook, or a hook it wraps, that writes for the whole job (D14); in a sharded job a checkpoint saver
// runs on every rank (D17).
bool ChiefOnlyInAJob(const tw::Hook *hook, bool sharded_job) {
  for (const tw::Hook *link = hook; link != nullptr; link = link->inner()) {
    if (link->chief_only_in_a_job() && !(sharded_job && link->writes_a_part_in_a_sharded_job())) return true;
  }
  return false;
}

bool IsCleanEnd(const Status &status) { return status.code() == TW_OUT_OF_RANGE || status.code() == TW_STOP_ITERATION; }

// Runs `call`; in a traced run also reports its start and end to the tracer. With kTraced false this
// is `return call();` — the untraced run loop reads no clock and tests no flag.
template <bool kTraced, typename Call>
Status Timed(tw::RunTracer *tracer, tw::TracePhase phase, const tw::Hook *hook, Call call) {
  if constexpr (!kTraced) {
    (void)tracer, (void)phase, (void)hook;
    return call();
  } else {
    const double start = tw::MonotonicSeconds();
    Status status = call();
    tracer->Record(phase, hook, start, tw::MonotonicSeconds());
    return status;
  }
}

}  // namespace

// "One thread at a time", checked: the first thread to enter a run, close or creation owns the session
// until that call returns. The owner may enter again from its callbacks (run_without_hooks inside a
// step, W25); another thread is refused, so that a misuse gives a status instead of corrupted state.
class tw_session::Entry {
 public:
  explicit Entry(tw_session &session) : session_(session) {
    const std::thread::id self = std::this_thread::get_id();
    std::thread::id owner;
    owns_ = session_.user_.compare_exchange_strong(owner, self, std::memory_order_acquire);
    refused_ = !owns_ && owner != self;
  }
  ~Entry() {
    if (owns_) session_.user_.store(std::thread::id(), std::memory_order_release);
  }
  Entry(const Entry &) = delete;
  Entry &operator=(const Entry &) = delete;

  // Another thread is inside the session.
  Status Refused(const char *call) const {
    return refused_ ? Errorf(TW_FAILED_PRECONDITION,
                             "%s: another thread is inside this session; a session is used by one thread at a "
                             "time (only tw_session_request_stop and tw_session_should_stop may come from others)",
                             call)
                    : Status();
  }

 private:
  tw_session &session_;
  bool owns_ = false;
  bool refused_ = false;
};

tw_session::tw_session(const tw::Options &options, bool recoverable)
    : variables_(options.variables),
      recoverable_statuses_(options.recoverable),
      recoverable_(recoverable),
      is_chief_(tw::IsChief(options)),
      auto_increment_(options.Int64(TW_OPT_AUTO_INCREMENT_GLOBAL_STEP) != 0),
      check_numerics_(options.Int64(TW_OPT_CHECK_NUMERICS) != 0),
      max_recovery_attempts_(options.Int64(TW_OPT_MAX_RECOVERY_ATTEMPTS)),
      backoff_secs_(options.Double(TW_OPT_RECOVERY_BACKOFF_SECS)),
      backoff_max_secs_(options.Double(TW_OPT_RECOVERY_BACKOFF_MAX_SECS)),
      agreement_(*this, options),
      global_step_(options.Int64(TW_OPT_INITIAL_GLOBAL_STEP)) {
  if (const std::string *dir = options.String(TW_OPT_CHECKPOINT_DIR)) checkpoint_dir_ = *dir;
  if (agreement_.collective() != nullptr && (!is_chief_ || !agreement_.restore_via_broadcast())) {
    // Initializes when the chief did (D2); every rank restores by the vote (D16).
    creator_ = tw::NewChiefSessionCreator(options, nullptr);
  } else if (!is_chief_) {
    creator_ = tw::NewWorkerSessionCreator(options);
  } else {
    creator_ = tw::NewChiefSessionCreator(
        options, checkpoint_dir_.empty() ? nullptr : tw::NewCheckpointRestorer(checkpoint_dir_));
  }
  tw_tensor view = TW_TENSOR_INIT;
  view.dtype = TW_INT64;
  view.data = &global_step_at_start_;
  global_step_view_.Assign(view, "global_step");
}

tw_session::~tw_session() {
  DetachWriters();
  ReleaseHooks();
}

// The saver covers the variables and the session's own global_step, which checkpoints carry as the
// int64 scalar "global_step" (as TF's do).
Status tw_session::CreateSaver(const tw::Options &options) {
  std::vector<tw::TensorRef> saved = variables_;
  tw_tensor step = TW_TENSOR_INIT;
  step.dtype = TW_INT64;
  step.data = &global_step_;
  saved.emplace_back(step, "global_step");
  tw::checkpoint::SaverOptions saver_options = tw::SaverOptionsOf(options);
  // The session's own handle: a failed operation of a save ends every collective call of the session (D9).
  saver_options.collective = agreement_.collective();
  TW_RETURN_IF_ERROR(tw::checkpoint::Saver::Create(std::move(saved), std::move(saver_options), &saver_));
  return Status();
}

tw::checkpoint::Saver &tw_session::IdleSaver() {
  for (tw::checkpoint::AsyncSaver *writer : writers_) writer->Wait();
  return *saver_;
}

void tw_session::AttachWriter(tw::checkpoint::AsyncSaver *writer) {
  if (std::find(writers_.begin(), writers_.end(), writer) == writers_.end()) writers_.push_back(writer);
}

// No write may outlive the saver, whatever becomes of the hooks that own the writers.
void tw_session::DetachWriters() {
  for (tw::checkpoint::AsyncSaver *writer : writers_) writer->Wait();
  writers_.clear();
}

Status tw_session::SaveCheckpoint(const char *prefix, int64_t global_step) {
  const Entry entry(*this);
  TW_RETURN_IF_ERROR(entry.Refused("tw_session_save_checkpoint"));
  if (closed_) return Status(TW_FAILED_PRECONDITION, "Session is closed.");
  // The sink runs inside a save or restore of this saver, maybe on its background writer's thread.
  if (tw::InsideProgressSink()) {
    return Status(TW_FAILED_PRECONDITION,
                  "tw_session_save_checkpoint called from a progress sink, which runs inside a save or restore: "
                  "save from a hook callback or between runs");
  }
  const std::vector<std::string> dirs = SavingDirectories();
  if (dirs.empty()) {
    return Status(TW_INVALID_ARGUMENT,
                  "the session has no checkpoint directory (TW_OPT_CHECKPOINT_DIR, or a CheckpointSaverHook's) to "
                  "save into: use a tw_saver");
  }
  if (!is_chief_) return Status(TW_FAILED_PRECONDITION, "only a chief session saves checkpoints; this one is a worker");
  if (agreement_.sharded_job()) {
    return Status(TW_FAILED_PRECONDITION,
                  "a sharded job's checkpoint is written by every rank together (D17): save with the "
                  "CheckpointSaverHook, or with a tw_saver of the job's collective on every rank");
  }
  std::string dir = tw::checkpoint::Dirname(prefix);
  if (dir.empty()) dir = ".";
  if (!tw::checkpoint::IsDirectory(dir)) {
    return Status(TW_NOT_FOUND, std::string("Parent directory of ") + prefix + " doesn't exist, can't save.");
  }
  const auto same = [&dir](const std::string &candidate) { return tw::checkpoint::SameDirectory(dir, candidate); };
  if (std::none_of(dirs.begin(), dirs.end(), same)) {
    std::string listed = dirs.front();
    for (size_t i = 1; i < dirs.size(); ++i) listed += ", " + dirs[i];
    return Errorf(TW_INVALID_ARGUMENT,
                  "prefix '%s' is not in the session's checkpoint directory (%s): the session saves only there "
                  "(its lock, state file and retention); save elsewhere with a tw_saver of its own",
                  prefix, listed.c_str());
  }
  tw::checkpoint::Saver &saver = IdleSaver();  // a background write of a saver hook ends first
  if (!writes_checkpoints_ && !saver_seeded_) {
    // A session that only restores took no lock (C24): its first save locks the directory until close
    // and, as TF's restore does for its saver, carries on the kept list of the state file.
    saver.set_lock_holder("a session saving through its own saver (tw_session_save_checkpoint, a Scaffold's saver)");
    TW_RETURN_IF_ERROR(saver.RecoverLastCheckpoints(checkpoint_dir_));
    saver_seeded_ = true;
  }
  std::string path;
  TW_RETURN_IF_ERROR(saver.Save(prefix, global_step, &path));
  saved_checkpoint_ = std::move(path);
  return Status();
}

// C27: the session's checkpoint directory, then those of its hooks that save elsewhere with its saver.
std::vector<std::string> tw_session::SavingDirectories() const {
  std::vector<std::string> dirs;
  if (!checkpoint_dir_.empty()) dirs.push_back(checkpoint_dir_);
  for (tw::Hook *hook : hooks_) {
    for (tw::Hook *link = hook; link != nullptr; link = link->inner()) {
      if (const std::string *dir = link->checkpoint_directory()) dirs.push_back(*dir);
    }
  }
  return dirs;
}

Status tw_session::DiscardDivergedCheckpoints() {
  tw::checkpoint::Saver &saver = IdleSaver();  // a background write of that run ends first
  for (tw::checkpoint::AsyncSaver *writer : writers_) {
    for (const std::string &path : writer->started()) {
      tw::Log(TW_LOG_WARNING, "Discarding checkpoint %s: it was saved in the run that saw NaN", path.c_str());
      TW_RETURN_IF_ERROR(saver.Discard(path));
    }
    writer->ForgetStarted();
  }
  return Status();
}

Status tw_session::Create(const tw::Options &options, tw::Hook *const *hooks, size_t hook_count, bool recoverable,
                          tw_session **out) {
  std::unique_ptr<tw_session> session(new tw_session(options, recoverable));
  const Entry entry(*session);  // hooks and init/ready functions see the session: no destroy from them
  // What fails on this rank alone before the job's first collective round — a failed registration of
  // the variables (sticky on the options), the saver, the hooks — goes into that round (D1), so that no
  // other rank is left waiting for this one.
  Status begun = options.registration;
  if (begun.ok()) begun = session->CreateSaver(options);
  if (begun.ok()) begun = session->ClaimHooks(hooks, hook_count);
  if (begun.ok()) session->NoteCheckpointWriter();
  if (begun.ok()) begun = session->agreement_.WatchSignals();
  if (begun.ok() && session->agreement_.restore_via_broadcast() && tw::IsShardedJob(options)) {
    begun = Status(TW_INVALID_ARGUMENT,
                   "TW_OPT_RESTORE_VIA_BROADCAST cannot restore sharded variables (each rank holds other rows of "
                   "them): every rank of a sharded job reads its own rows (D16)");
  }

  // H6: begin on every hook before the session exists. In a job every rank learns whether any rank's
  // begin failed (the chief's directory lock, for one), so none is left waiting for it (D1).
  size_t begun_hooks = 0;
  while (begun.ok() && begun_hooks < session->hooks_.size()) begun = session->hooks_[begun_hooks++]->Begin(*session);
  if (session->agreement_.collective() != nullptr) {
    const Status agreed = session->agreement_.FindChief(begun);
    if (!agreed.ok()) begun = agreed;
  }
  if (!begun.ok()) {
    for (size_t j = 0; j < begun_hooks; ++j) session->hooks_[j]->OnError(*session, begun);
    return begun;
  }
  const Status status = session->WithRecovery([] { return Status(); });
  if (!status.ok()) {
    for (tw::Hook *hook : session->hooks_) hook->OnError(*session, status);
    return status;
  }
  *out = session.release();
  return Status();
}

// A wrapper (tw_hook_wrap) is claimed with the hooks it wraps: none of them may run elsewhere.
Status tw_session::ClaimHooks(tw::Hook *const *hooks, size_t hook_count) {
  if (hook_count > 0 && hooks == nullptr) {
    return Errorf(TW_INVALID_ARGUMENT, "hooks is NULL but n_hooks is %zu", hook_count);
  }
  for (size_t i = 0; i < hook_count; ++i) {
    if (hooks[i] == nullptr) return Errorf(TW_INVALID_ARGUMENT, "hooks[%zu] is NULL", i);
    for (size_t j = 0; j < i; ++j) {
      if (hooks[j] == hooks[i]) {
        return Errorf(TW_INVALID_ARGUMENT, "hooks[%zu] is hook '%s' again (already hooks[%zu])", i,
                      hooks[i]->name().c_str(), j);
      }
    }
    TW_RETURN_IF_ERROR(tw::CheckHookChainFree(hooks, i));
  }
  hooks_.reserve(hook_count);
  for (size_t i = 0; i < hook_count; ++i) {
    if (agreement_.collective() != nullptr && !is_chief_ && ChiefOnlyInAJob(hooks[i], agreement_.sharded_job())) {
      continue;  // D14
    }
    hooks[i]->Ref();
    for (tw::Hook *link = hooks[i]; link != nullptr; link = link->inner()) link->owner = this;
    hooks_.push_back(hooks[i]);
  }
  return Status();
}

void tw_session::NoteCheckpointWriter() {
  std::string holder;
  for (tw::Hook *hook : hooks_) {
    for (tw::Hook *link = hook; link != nullptr && holder.empty(); link = link->inner()) {
      if (const char *writer = link->checkpoint_writer()) holder = std::string("a session with ") + writer;
    }
  }
  // D10: the chief saves on a preemption caught by signals, or noted by any rank of a job.
  if (holder.empty() && (agreement_.watches_preemption() || agreement_.collective() != nullptr))
    holder = "a session saving on preemption";
  writes_checkpoints_ = !holder.empty();
  // One told of a preemption by tw_session_notify_preemption all the same locks when it saves.
  saver_->set_lock_holder(holder.empty() ? "a session saving on preemption" : holder);
}

void tw_session::ReleaseHooks() {
  for (tw::Hook *hook : hooks_) {
    for (tw::Hook *link = hook; link != nullptr; link = link->inner()) link->owner = nullptr;
    hook->Unref();
  }
  hooks_.clear();
}

bool tw_session::IsRecoverable(const Status &status) const { return recoverable_statuses_.count(status.code()) != 0; }

// The recoverable layer (W7–W10): create the inner session when there is none, run the body, and on
// a recoverable status drop the inner session and go again — bounded, with back-off, unlike TF.
template <typename Body>
Status tw_session::WithRecovery(Body body) {
  int64_t attempts = 0;
  double backoff = backoff_secs_;
  for (;;) {
    Status status = created_ ? Status() : CreateInner();
    if (status.ok()) status = body();
    if (status.ok() || !recoverable_ || !IsRecoverable(status) || agreement_.Broken()) return status;
    if (max_recovery_attempts_ >= 0 && attempts >= max_recovery_attempts_) {
      return Errorf(status.code(), "gave up after %lld recoveries (TW_OPT_MAX_RECOVERY_ATTEMPTS); last error: %s",
                    static_cast<long long>(attempts), status.message().c_str());
    }
    tw::Log(TW_LOG_INFO,
            "An error was raised. This may be due to a preemption in a connected worker or parameter server. "
            "The current session will be closed and a new session will be created. Error: %s",
            status.message().c_str());
    created_ = false;
    if (backoff > 0) std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
    backoff = std::min(backoff * 2, backoff_max_secs_);
    ++attempts;
  }
}

// One (re-)creation: fresh hooked layer (H30), restore-or-init / wait-for-ready, after_create_session
// on every hook (H8, W10).
Status tw_session::CreateInner() {
  ++creation_count_;
  stop_latched_ = false;
  stop_requested_ = false;
  if (agreement_.collective() != nullptr) return agreement_.CreateAgreed();
  std::string restored_path;
  TW_RETURN_IF_ERROR(creator_->CreateSession(*this, &restored_path));
  return AfterCreateSession();
}

Status tw_session::AfterCreateSession() {
  created_ = true;
  for (tw::Hook *hook : hooks_) {
    const Status status = hook->AfterCreateSession(*this);
    if (!status.ok()) {
      created_ = false;
      return status;
    }
  }
  return Status();
}

Status tw_session::Run(const tw_tensor *feeds, size_t feed_count, tw_step_fn step, void *user_data, bool with_hooks) {
  if (step == nullptr) return Status(TW_INVALID_ARGUMENT, "step is NULL");
  const Entry entry(*this);
  TW_RETURN_IF_ERROR(entry.Refused(with_hooks ? "tw_session_run" : "tw_session_run_without_hooks"));
  if (closed_) return Status(TW_FAILED_PRECONDITION, "Session is closed.");
  TW_RETURN_IF_ERROR(tw::CheckFeeds(feeds, feed_count, "feeds", tw::Place::kHostOrDevice));  // V5

  if (in_run_) {
    // From inside a hook or step: TF's step_context.session.run — no hooks, and no recovery of its
    // own: a recoverable status travels up and the outer run recovers (W25).
    if (with_hooks) {
      return Status(TW_FAILED_PRECONDITION,
                    "tw_session_run called from inside a run of the same session; "
                    "use tw_session_run_without_hooks there");
    }
    tw::StepContext nested;
    nested.Reset(this, nullptr, feeds, feed_count, global_step_);
    return RunStep(nested, step, user_data);
  }
  if (failed_) return Status(TW_FAILED_PRECONDITION, "an earlier run of this session failed; close it");
  if (with_hooks && stop_latched_) {
    return Status(TW_FAILED_PRECONDITION, "Run called even after should_stop requested.");  // H29
  }

  if (!with_hooks && agreement_.collective() != nullptr) {
    // D15: work of this rank alone (an evaluation on the chief): no vote and no recovery, and a failure
    // leaves the session usable — each of those would need every rank.
    ScopedFlag running(in_run_);
    step_context_.Reset(this, nullptr, feeds, feed_count, global_step_);
    return RunStep(step_context_, step, user_data);
  }
  agreement_.CountRun();
  Status status = WithRecovery([&] {
    // B48: a rollback discards the saves begun since this run began (since the last vote, in a job) —
    // not a save of the session re-created by a recovery before it, which holds the restored state.
    if (agreement_.VotedLastRun()) {
      for (tw::checkpoint::AsyncSaver *writer : writers_) writer->ForgetStarted();
    }
    Status ran;
    if (!with_hooks) {
      ScopedFlag running(in_run_);
      step_context_.Reset(this, nullptr, feeds, feed_count, global_step_);
      ran = RunStep(step_context_, step, user_data);
    } else {
      ran = HookedRun(feeds, feed_count, step, user_data);
    }
    // A job's vote, or a preemption to act on (D4–D10); a single process without either pays one test.
    if (agreement_.WatchesRunEnd()) return agreement_.EndOfRun(std::move(ran));
    return ran;
  });
  run_context_.phase = tw::RunContext::Phase::kIdle;  // also when a hook failed: nothing of this run stays readable
  if (!status.ok() && !IsCleanEnd(status)) Fail(status);
  return status;
}

// The hooked layer (H9–H14, H22–H23, H28–H29). A run with a tracer armed is the same body, timed.
Status tw_session::HookedRun(const tw_tensor *feeds, size_t feed_count, tw_step_fn step, void *user_data) {
  if (tracer_ == nullptr) return HookedRunBody<false>(feeds, feed_count, step, user_data, nullptr);
  tw::RunTracer *tracer = tracer_;
  tracer_ = nullptr;  // one run only
  const double start = tw::MonotonicSeconds();
  const Status status = HookedRunBody<true>(feeds, feed_count, step, user_data, tracer);
  const Status finished = tracer->Finish(status, start, tw::MonotonicSeconds());
  return status.ok() ? finished : status;
}

template <bool kTraced>
Status tw_session::HookedRunBody(const tw_tensor *feeds, size_t feed_count, tw_step_fn step, void *user_data,
                                 tw::RunTracer *tracer) {
  using tw::TracePhase;
  ScopedFlag running(in_run_);
  tw::RunContext &ctx = run_context_;
  ctx.Reset(this, hooks_.size(), feeds, feed_count);
  global_step_at_start_ = global_step_;

  ctx.phase = tw::RunContext::Phase::kBeforeRun;
  for (size_t i = 0; i < hooks_.size(); ++i) {
    ctx.hook_index = i;
    TW_RETURN_IF_ERROR(
        Timed<kTraced>(tracer, TracePhase::kBeforeRun, hooks_[i], [&] { return hooks_[i]->BeforeRun(ctx); }));
    if (!ctx.feed_error.ok()) return ctx.feed_error.WithPrefix("hook '" + hooks_[i]->name() + "' before_run: ");
  }
  ctx.phase = tw::RunContext::Phase::kIdle;
  TW_RETURN_IF_ERROR(ctx.CheckUserFeedConflicts());

  step_context_.Reset(this, &ctx, feeds, feed_count, global_step_at_start_);
  TW_RETURN_IF_ERROR(
      Timed<kTraced>(tracer, TracePhase::kStep, nullptr, [&] { return RunStep(step_context_, step, user_data); }));
  if (check_numerics_) TW_RETURN_IF_ERROR(CheckOutputs());
  TW_RETURN_IF_ERROR(ResolveFetches());

  ctx.phase = tw::RunContext::Phase::kAfterRun;
  for (size_t i = 0; i < hooks_.size(); ++i) {
    ctx.hook_index = i;
    TW_RETURN_IF_ERROR(
        Timed<kTraced>(tracer, TracePhase::kAfterRun, hooks_[i], [&] { return hooks_[i]->AfterRun(ctx); }));
  }
  ctx.phase = tw::RunContext::Phase::kIdle;
  if (ctx.stop_requested) stop_latched_ = true;
  return Status();
}

// Calls the user's step; on success applies the global-step update of a hooked run.
Status tw_session::RunStep(tw::StepContext &ctx, tw_step_fn step, void *user_data) {
  // The step's own message passes through unprefixed, as TF propagates an op's error.
  TW_RETURN_IF_ERROR(tw::CallUserCallback([] { return std::string(); }, [&] { return step(user_data, &ctx); }));
  if (ctx.run != nullptr) {
    // INT64_MAX + 1 stays INT64_MAX (saturating.h).
    global_step_ = ctx.global_step_set ? ctx.new_global_step
                   : auto_increment_   ? tw::NextStep(ctx.global_step_at_start)
                                       : ctx.global_step_at_start;
  } else if (ctx.global_step_set) {
    global_step_ = ctx.new_global_step;
  }
  return Status();
}

// Routes each hook's requested names to values: published outputs, then variables, then global_step
// (its value at the start of the run). Patterns match outputs and variables and may match nothing.
Status tw_session::ResolveFetches() {
  for (size_t i = 0; i < hooks_.size(); ++i) {
    tw::RunContext::PerHook &hook = run_context_.hooks[i];
    for (const std::string &name : hook.fetches) {
      if (tw::IsPattern(name.c_str())) {
        for (const tw::TensorRef &output : step_context_.outputs) {
          if (tw::MatchesPattern(name, output.name())) hook.results.push_back(&output);
        }
        for (const tw::TensorRef &variable : variables_) {
          if (tw::MatchesPattern(name, variable.name())) hook.results.push_back(&variable);
        }
        continue;
      }
      const tw::TensorRef *value = step_context_.FindOutput(name);
      if (value == nullptr) value = FindVariable(name);
      if (value == nullptr && name == "global_step") value = &global_step_view_;
      if (value == nullptr) {
        return Errorf(TW_NOT_FOUND,
                      "hook '%s' requested '%s', which is neither an output the step published, a variable, "
                      "nor global_step",
                      hooks_[i]->name().c_str(), name.c_str());
      }
      hook.results.push_back(value);
    }
  }
  return Status();
}

// TW_OPT_CHECK_NUMERICS: TF's check_numerics on every published output, naming it and the step.
Status tw_session::CheckOutputs() const {
  for (const tw::TensorRef &output : step_context_.outputs) {
    tw_tensor view = TW_TENSOR_INIT;
    output.FillView(&view);
    TW_RETURN_IF_ERROR(tw::numerics::CheckNumerics(
        view, "output '" + output.name() + "' at step " + std::to_string(global_step_at_start_)));
  }
  return Status();
}

// A run failed for good: every hook hears on_error once, end is skipped (docs/ARCHITECTURE.md, decisions).
// The caller gets the error as the run's status; it is logged only at DEBUG, so that it is reported
// once (H34).
void tw_session::Fail(const Status &error) {
  failed_ = true;
  tw::Log(TW_LOG_DEBUG, "Run failed: %s: %s", tw::StatusName(error.code()), error.message().c_str());
  for (tw::Hook *hook : hooks_) hook->OnError(*this, error);
}

Status tw_session::RequestStop() {
  if (closed_) return Status(TW_FAILED_PRECONDITION, "Session is closed.");
  if (user_.load(std::memory_order_acquire) == std::this_thread::get_id() && in_run_) {
    run_context_.stop_requested = true;  // from a callback of this run: latched after after_run
  } else {
    stop_requested_ = true;  // between runs, or from another thread (the Coordinator's request_stop)
  }
  return Status();
}

Status tw_session::SetGlobalStep(int64_t value) {
  const Entry entry(*this);
  TW_RETURN_IF_ERROR(entry.Refused("tw_session_set_global_step"));
  if (closed_) return Status(TW_FAILED_PRECONDITION, "Session is closed.");
  global_step_ = value;
  return Status();
}

// W17/H17/H18: end on every hook unless a run failed; the first failing end stops the rest; the
// session is closed whatever happens.
Status tw_session::Close() {
  const Entry entry(*this);
  TW_RETURN_IF_ERROR(entry.Refused("tw_session_close"));
  if (closed_) return Status(TW_FAILED_PRECONDITION, "Session is already closed.");
  if (in_run_) return Status(TW_FAILED_PRECONDITION, "a session cannot be closed from inside its own run");
  Status status;
  if (!failed_) {
    ScopedFlag running(in_run_);
    for (tw::Hook *hook : hooks_) {
      status = hook->End(*this);
      if (!status.ok()) break;
    }
  }
  // D12: no rank tears down while another still needs it (the chief's final save). A failed session
  // skips it: the vote that failed it failed every rank, or a rank is gone; so does one whose
  // collective failed in end (the final save's, D9).
  const Status met = agreement_.Close(/*meet=*/!failed_);
  if (status.ok()) status = met;
  closed_ = true;
  created_ = false;
  tracer_ = nullptr;
  DetachWriters();
  ReleaseHooks();
  if (saver_ != nullptr) saver_->ReleaseDirectoryLocks();  // a closed session writes no more: others may
  return status;
}

Status tw_session::Destroy(tw_session *session) {
  std::thread::id nobody;
  // Claimed for good: no other thread can enter between this check and the delete.
  if (!session->user_.compare_exchange_strong(nobody, std::this_thread::get_id(), std::memory_order_acquire)) {
    return nobody == std::this_thread::get_id()
               ? Status(TW_FAILED_PRECONDITION,
                        "tw_session_destroy called from inside the session's own callback (a hook, the step, a "
                        "checkpoint listener, an init or ready function); the session stays valid: destroy it "
                        "after the call that runs the callback has returned")
               : Status(TW_FAILED_PRECONDITION,
                        "tw_session_destroy: another thread is inside this session; a session is used by one "
                        "thread at a time, and the session stays valid");
  }
  delete session;
  return Status();
}

const tw::TensorRef *tw_session::FindVariable(const std::string &name) const {
  for (const tw::TensorRef &variable : variables_) {
    if (variable.name() == name) return &variable;
  }
  return nullptr;
}

Status tw_session::GetOutput(const char *name, tw_tensor *out) const {
  if (name == nullptr) return Status(TW_INVALID_ARGUMENT, "name is NULL");
  TW_RETURN_IF_ERROR(tw::CheckOutTensor(out, "out"));
  if (run_context_.phase != tw::RunContext::Phase::kAfterRun) {
    return Errorf(TW_FAILED_PRECONDITION,
                  "output '%s' cannot be read now: outputs are readable in after_run, while the run that published "
                  "them is in progress",
                  name);
  }
  const tw::TensorRef *output = step_context_.FindOutput(name);
  if (output == nullptr) return Errorf(TW_NOT_FOUND, "the step published no output named '%s' in this run", name);
  return output->WriteTo(out);
}
