// The session stack of tf.train's MonitoredSession, flattened into one object with one method per
// layer: the recoverable layer (WithRecovery: re-create and retry on a recoverable status), the
// coordinated layer (the stop latch and session state) and the hooked layer (HookedRun: before_run →
// step → after_run). A SingularMonitoredSession is the same object with recovery off. In a job of many
// ranks its collaborator, the job agreement (job_agreement.h), makes the start agreement and the vote
// at the end of each run.
#ifndef TRAINWATCH_SESSION_SESSION_H
#define TRAINWATCH_SESSION_SESSION_H

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "session/hook.h"
#include "session/job_agreement.h"
#include "session/options.h"
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
    return closed_ || failed_ || !created_ || stop_latched_ || (stop_requested_ && agreement_.collective() == nullptr);
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
  // The job's agreement (trainwatch/distributed.h): its collective (nullptr for a single process),
  // agreed rollbacks and saves, the preemption watch.
  tw::JobAgreement &agreement() { return agreement_; }
  const tw::JobAgreement &agreement() const { return agreement_; }
  // B48: before a NaN rollback restores, the checkpoints this session began saving in the run that
  // diverged (since the last vote, in a job) — the state after that run — are waited for, taken off
  // their state file and deleted, so that neither the rollback nor a later restart lands on them.
  tw::Status DiscardDivergedCheckpoints();
  int64_t creation_count() const { return creation_count_; }
  tw::Hook *hook(size_t index) const { return hooks_[index]; }
  size_t hook_count() const { return hooks_.size(); }
  const std::vector<tw::TensorRef> &variables() const { return variables_; }
  const tw::TensorRef *FindVariable(const std::string &name) const;
  // An output the step published in the current run, readable in after_run only (views borrow the
  // step's memory, which is gone between runs).
  tw::Status GetOutput(const char *name, tw_tensor *out) const;

  // The session's saver (TF's scaffold.saver) over the variables and global_step; the restorer and
  // CheckpointSaverHook share it, so retention is tracked in one place. A hook that writes in the
  // background owns its writer (checkpoint::AsyncSaver over saver()) and attaches it while it serves
  // the session: IdleSaver() first waits for every attached write, and is the only way to use the saver
  // from the session's thread. Close and destruction wait for them and detach them.
  tw::checkpoint::Saver &saver() { return *saver_; }
  tw::checkpoint::Saver &IdleSaver();
  void AttachWriter(tw::checkpoint::AsyncSaver *writer);
  // C27: tw_session_save_checkpoint — TF's scaffold.saver.save(sess, prefix, global_step) inside the
  // session: the variables and global_step saved by saver() into checkpoint_dir() or a directory of
  // SavingDirectories() (its lock, state file and retention), nothing else (no listener, no NaN scan,
  // no event). On success saved_checkpoint() names the checkpoint until the next success.
  tw::Status SaveCheckpoint(const char *prefix, int64_t global_step);
  // checkpoint_dir() when set, then each hook's Hook::checkpoint_directory().
  std::vector<std::string> SavingDirectories() const;
  const std::string &saved_checkpoint() const { return saved_checkpoint_; }
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
  // The agreement acts through the session: its creator, its hooks' after_create_session, the stop
  // flags of the coordinated layer and which statuses recover.
  friend class tw::JobAgreement;
  tw_session(const tw::Options &options, bool recoverable);

  tw::Status CreateSaver(const tw::Options &options);
  tw::Status ClaimHooks(tw::Hook *const *hooks, size_t hook_count);
  // After ClaimHooks: whether the session writes checkpoints, and what the saver then names as the
  // directory's holder (dir_lock.h).
  void NoteCheckpointWriter();
  void ReleaseHooks();
  void DetachWriters();
  template <typename Body>
  tw::Status WithRecovery(Body body);
  tw::Status CreateInner();
  // after_create_session on every hook (H8), the inner session counting as created meanwhile; it stays
  // created only when every hook succeeded.
  tw::Status AfterCreateSession();
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
  std::vector<tw::checkpoint::AsyncSaver *> writers_;  // the hooks' (AttachWriter), waited for before saver_ goes
  std::string checkpoint_dir_;
  bool writes_checkpoints_ = false;  // NoteCheckpointWriter
  std::string saved_checkpoint_;     // SaveCheckpoint's last
  bool saver_seeded_ = false;        // SaveCheckpoint recovered the kept list of a session that only restores
  std::set<tw_status> recoverable_statuses_;
  bool recoverable_;
  bool is_chief_;
  bool auto_increment_;
  bool check_numerics_;
  int64_t max_recovery_attempts_;
  double backoff_secs_;
  double backoff_max_secs_;

  tw::JobAgreement agreement_;  // the job's collective (shared with the saver), votes, preemption

  int64_t global_step_;
  int64_t creation_count_ = 0;
  // Atomic because should_stop and request_stop may come from other threads.
  std::atomic<bool> created_{false};         // an inner session exists (false after close and during recovery)
  std::atomic<bool> stop_latched_{false};    // the hooked layer's latch; reset by every re-creation (H30)
  std::atomic<bool> stop_requested_{false};  // the Coordinator's request_stop: ends the loop, refuses no run
  std::atomic<bool> closed_{false};
  std::atomic<bool> failed_{false};      // a run failed: end is skipped, every hook heard on_error
  std::atomic<std::thread::id> user_{};  // the thread inside a run, close or creation (see Entry)
  bool in_run_ = false;                  // inside Run: no close, no nested run with hooks, no nested recovery
  tw::RunContext run_context_;
  tw::StepContext step_context_;
  tw::TensorRef global_step_view_;  // what a "global_step" fetch resolves to
  int64_t global_step_at_start_ = 0;
  tw::RunTracer *tracer_ = nullptr;  // armed for the next hooked run
};

#endif  // TRAINWATCH_SESSION_SESSION_H
