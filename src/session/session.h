// The session stack of tf.train's MonitoredSession, flattened into one object with one method per
// layer: the recoverable layer (WithRecovery: re-create and retry on a recoverable status), the
// coordinated layer (the stop latch and session state) and the hooked layer (HookedRun: before_run →
// step → after_run). A SingularMonitoredSession is the same object with recovery off.
#ifndef TRAINWATCH_SESSION_SESSION_H
#define TRAINWATCH_SESSION_SESSION_H

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "session/hook.h"
#include "session/options.h"
#include "session/preemption.h"
#include "session/run_context.h"
#include "session/run_tracer.h"
#include "session/session_creator.h"

namespace tw {
namespace checkpoint {
class AsyncSaver;
class Saver;
}  // namespace checkpoint
}  // namespace tw

struct tw_session {
  // Validates the hook list, runs begin on every hook, creates the inner session (with recovery when
  // `recoverable`) and runs after_create_session on every hook.
  static tw::Status Create(const tw::Options &options, tw::Hook *const *hooks, size_t hook_count, bool recoverable,
                           tw_session **out);
  ~tw_session();

  tw::Status Run(const tw_tensor *feeds, size_t feed_count, tw_step_fn step, void *user_data, bool with_hooks);
  // ShouldStop and RequestStop may be called from any thread (TF's Coordinator); everything else
  // from the one thread inside the session (see Entry).
  // With a collective a rank's own request_stop waits for the next vote (D5): the rank must not leave
  // its loop alone.
  bool ShouldStop() const {
    return closed_ || failed_ || !created_ || stop_latched_ || (stop_requested_ && collective_ == nullptr);
  }
  tw::Status RequestStop();
  tw::Status Close();
  // Deletes the session unless a thread is inside it: from one of its own callbacks (this thread) or
  // from another thread, it is refused with TW_FAILED_PRECONDITION and the session stays valid.
  static tw::Status Destroy(tw_session *session);

  int64_t global_step() const { return global_step_; }
  // The global step the current (or last) run started at: what a "global_step" fetch holds.
  int64_t run_global_step() const { return global_step_at_start_; }
  void set_global_step(int64_t value) { global_step_ = value; }
  tw::Status SetGlobalStep(int64_t value);
  bool closed() const { return closed_; }
  bool is_chief() const { return is_chief_; }
  // A job with a collective and sharded variables: every rank writes its part of each save (D17).
  bool sharded_job() const { return sharded_job_; }
  // The job's collective (trainwatch/distributed.h), nullptr for a single process.
  const tw::Collective *collective() const { return collective_.get(); }
  // NanTensorHook with TW_NAN_ACTION_ROLLBACK in a job: the rollback is carried by the vote and made
  // by every rank together (D7), instead of by this rank alone.
  void RequestAgreedRollback(std::string reason);
  // B48: before a NaN rollback restores, the checkpoints this session began saving in the run that
  // diverged (since the last vote, in a job) — the state after that run — are waited for, taken off
  // their state file and deleted, so that neither the rollback nor a later restart lands on them.
  tw::Status DiscardDivergedCheckpoints();
  // A sharded job's saves, decided alike on every rank (D17). LowestRankWith: one allreduce every rank
  // makes at the same point; *rank is the lowest rank whose `flag` is set, -1 for none.
  tw::Status LowestRankWith(bool flag, const std::string &what, int32_t *rank);
  // The chief's clock says a time-triggered save is due: the next vote carries it to every rank, whose
  // hooks then save in their next after_run (TakeAgreedSave).
  void NoteSaveDue() { save_due_ = true; }
  bool TakeAgreedSave() {
    const bool due = agreed_save_;
    agreed_save_ = false;
    return due;
  }
  // tw_session_notify_preemption: noted now, acted on at the end of the run in progress (D10); any thread.
  void NotifyPreemption() { preemption_noted_.store(true, std::memory_order_relaxed); }
  // The session stopped because of a preemption (a signal or NotifyPreemption) and saved (D10).
  bool preempted() const { return preempted_; }
  int64_t creation_count() const { return creation_count_; }
  tw::Hook *hook(size_t index) const { return hooks_[index]; }
  size_t hook_count() const { return hooks_.size(); }
  const std::vector<tw::TensorRef> &variables() const { return variables_; }
  const tw::TensorRef *FindVariable(const std::string &name) const;
  // An output the step published in the current run, readable in after_run only (views borrow the
  // step's memory, which is gone between runs).
  tw::Status GetOutput(const char *name, tw_tensor *out) const;

  // The session's saver (TF's scaffold.saver) over the variables and global_step; the restorer and
  // CheckpointSaverHook share it, so retention is tracked in one place. Saves may run in the background
  // through async_saver(); IdleSaver() first waits for such a write, and is the only way to use the
  // saver from the session's thread.
  tw::checkpoint::Saver &IdleSaver();
  tw::checkpoint::AsyncSaver &async_saver() { return *async_saver_; }
  // TW_OPT_CHECKPOINT_DIR, "" when unset.
  const std::string &checkpoint_dir() const { return checkpoint_dir_; }
  // C24: the session writes checkpoints — a hook of its (wrapped or not) saves or rolls back
  // (Hook::checkpoint_writer), or it may save on preemption (TW_OPT_CATCH_PREEMPTION_SIGNALS, or any
  // session of a job, D10). Only then
  // does the chief take checkpoint_dir's lock at creation and tidy the directory; a session that only
  // restores leaves it to the program's own Saver.
  bool writes_checkpoints() const { return writes_checkpoints_; }

  // Traces the next hooked run only (the ProfilerHook's seam); nullptr disarms. The tracer must outlive
  // that run or be disarmed first.
  void ArmTracer(tw::RunTracer *tracer) { tracer_ = tracer; }

 private:
  class Entry;
  tw_session(const tw::Options &options, bool recoverable);

  tw::Status CreateSaver(const tw::Options &options);
  tw::Status ClaimHooks(tw::Hook *const *hooks, size_t hook_count);
  // After ClaimHooks: whether the session writes checkpoints, and what the saver then names as the
  // directory's holder (dir_lock.h).
  void NoteCheckpointWriter();
  void ReleaseHooks();
  template <typename Body>
  tw::Status WithRecovery(Body body);
  tw::Status CreateInner();
  // Session creation in a job (session_agreement.cc, D1–D3, D16): every rank restores by the vote, or
  // the chief initializes (or restores alone to broadcast, D13) and every rank takes its state; the
  // hooks' after_create_session, then a vote.
  tw::Status CreateAgreed();
  // D1, after begin on every hook: finds the chief and shares any rank's failure so far (`begun`: a failed
  // registration, saver, hook claim or begin), before the other checks.
  tw::Status FindChief(const tw::Status &begun);
  // The chief's `outcome` of its restore (or `path` restored, "" for initialized) → every rank (D2);
  // a rank that restored by the vote (D16) checks it holds the chief's step. *local starts as this
  // rank's `outcome`.
  tw::Status ShareChiefState(const tw::Status &outcome, const std::string &path, bool initialize_if_none,
                             const std::string &what, tw::Status *local);
  tw::Status BroadcastVariables(const std::string &what, tw::Status *local);
  // D16 (restore_vote.cc): every rank restores the newest of the chief's checkpoints that every rank
  // can read, or none. *path: this rank's path of it ("" when none); *outcome: this rank's failure (the
  // chief's listing, a write), for D2's exchange; *agreed: a failure every rank shares (a listed
  // checkpoint that does not fit some rank's variables). A collective failure is returned. A non-OK
  // `chief_failure` on the chief is its listing's outcome: every rank fails with it, restoring nothing.
  tw::Status RestoreByVote(const std::string &what, std::string *path, tw::Status *outcome, tw::Status *agreed,
                           const tw::Status &chief_failure = tw::Status());
  // The end of a run with a collective or preemption watch (D4–D10): the vote and what it decided.
  tw::Status EndOfRun(tw::Status status);
  tw::Status RollBackAgreed(const std::string &reason, const std::string &what);
  tw::Status SaveForPreemption();
  bool PreemptionNoted() const { return preemption_signals_.Arrived() || preemption_noted_.load(std::memory_order_relaxed); }
  std::string RunLabel() const;
  // A collective operation of this session (its saver's included) failed: the ranks no longer agree,
  // so no further call is made — no vote, no recovery, no rollback, no barrier at close (D9).
  bool CollectiveBroken() const { return collective_ != nullptr && !collective_->failure().ok(); }
  tw::Status HookedRun(const tw_tensor *feeds, size_t feed_count, tw_step_fn step, void *user_data);
  template <bool kTraced>
  tw::Status HookedRunBody(const tw_tensor *feeds, size_t feed_count, tw_step_fn step, void *user_data,
                           tw::RunTracer *tracer);
  tw::Status RunStep(tw::StepContext &ctx, tw_step_fn step, void *user_data);
  tw::Status ResolveFetches();
  tw::Status CheckOutputs() const;
  void Fail(const tw::Status &error);
  bool IsRecoverable(const tw::Status &status) const;

  std::vector<tw::Hook *> hooks_;  // one reference each, while not closed
  std::vector<tw::TensorRef> variables_;
  std::unique_ptr<tw::SessionCreator> creator_;
  std::unique_ptr<tw::checkpoint::Saver> saver_;
  std::unique_ptr<tw::checkpoint::AsyncSaver> async_saver_;  // after saver_: destroyed (joined) first
  std::string checkpoint_dir_;
  bool writes_checkpoints_ = false;  // NoteCheckpointWriter
  std::set<tw_status> recoverable_statuses_;
  bool recoverable_;
  bool is_chief_;
  bool auto_increment_;
  bool check_numerics_;
  int64_t max_recovery_attempts_;
  double backoff_secs_;
  double backoff_max_secs_;

  // A job of many ranks (trainwatch/distributed.h); all unused when collective_ is null. The session's
  // own handle (Collective::Fork), shared with its saver: its latch is the session's.
  std::shared_ptr<const tw::Collective> collective_;
  double collective_timeout_secs_ = -1;
  int64_t vote_every_n_runs_ = 1;
  bool restore_via_broadcast_ = false;
  bool sharded_job_ = false;  // tw::IsShardedJob: every rank writes its part of each save (D17)
  int32_t chief_rank_ = 0;
  int64_t run_count_ = 0;         // top-level runs, for messages
  int64_t runs_since_vote_ = 0;
  bool stop_pending_ = false;     // a stop asked for since the last vote (TW_OPT_VOTE_EVERY_N_RUNS > 1)
  bool rollback_requested_ = false;
  std::string rollback_reason_;
  bool watch_preemption_ = false;  // TW_OPT_CATCH_PREEMPTION_SIGNALS
  tw::PreemptionSignals preemption_signals_;
  std::atomic<bool> preemption_noted_{false};
  bool preempted_ = false;
  bool save_due_ = false;             // NoteSaveDue, for the next vote
  bool agreed_save_ = false;          // a vote carried a due save: every rank's hook saves next
  std::vector<int64_t> vote_buffer_;  // reused by every vote: a voted run allocates nothing

  int64_t global_step_;
  int64_t creation_count_ = 0;
  // Atomic because should_stop and request_stop may come from other threads.
  std::atomic<bool> created_{false};       // an inner session exists (false after close and during recovery)
  std::atomic<bool> stop_latched_{false};  // the hooked layer's latch; reset by every re-creation (H30)
  std::atomic<bool> stop_requested_{false};  // the Coordinator's request_stop: ends the loop, refuses no run
  std::atomic<bool> closed_{false};
  std::atomic<bool> failed_{false};        // a run failed: end is skipped, every hook heard on_error
  std::atomic<std::thread::id> user_{};    // the thread inside a run, close or creation (see Entry)
  bool in_run_ = false;        // inside Run: no close, no nested run with hooks, no nested recovery
  tw::RunContext run_context_;
  tw::StepContext step_context_;
  tw::TensorRef global_step_view_;  // what a "global_step" fetch resolves to
  int64_t global_step_at_start_ = 0;
  tw::RunTracer *tracer_ = nullptr;  // armed for the next hooked run
};

#endif  // TRAINWATCH_SESSION_SESSION_H
