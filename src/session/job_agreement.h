// The agreement of a job's ranks (trainwatch/distributed.h, docs/tf-semantics.md D1–D17), one object a
// session owns: the start agreement (the chief, the restore vote, the chief's state), the vote at the
// end of a run and what it decides — stop, recover, roll back, fail, or save and stop on preemption —
// the same on every rank. The preemption watch of a single process (D10) goes through its EndOfRun
// too, with the ballot as its own verdict. It acts through the session it serves: its variables,
// global step, saver, creator and hooks.
#ifndef TRAINWATCH_SESSION_JOB_AGREEMENT_H
#define TRAINWATCH_SESSION_JOB_AGREEMENT_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "distributed/collective.h"
#include "session/options.h"
#include "session/preemption.h"

struct tw_session;

namespace tw {

class JobAgreement {
 public:
  // Reads the job's options (the collective, TW_OPT_COLLECTIVE_TIMEOUT_SECS, TW_OPT_VOTE_EVERY_N_RUNS,
  // TW_OPT_RESTORE_VIA_BROADCAST, TW_OPT_CATCH_PREEMPTION_SIGNALS) for `session`, which owns it.
  JobAgreement(tw_session &session, const Options &options);
  JobAgreement(const JobAgreement &) = delete;
  JobAgreement &operator=(const JobAgreement &) = delete;

  // The job's collective (the session's own handle, Collective::Fork, shared with its saver), nullptr
  // for a single process.
  const std::shared_ptr<const Collective> &collective() const { return collective_; }
  // A job with a collective and sharded variables: every rank writes its part of each save (D17).
  bool sharded_job() const { return sharded_job_; }
  bool restore_via_broadcast() const { return restore_via_broadcast_; }
  // TW_OPT_CATCH_PREEMPTION_SIGNALS: the chief saves when a signal arrives (D10).
  bool watches_preemption() const { return watch_preemption_; }
  // A collective operation of this session (its saver's included) failed: the ranks no longer agree,
  // so no further call is made — no vote, no recovery, no rollback, no barrier at close (D9).
  bool Broken() const { return collective_ != nullptr && !collective_->failure().ok(); }
  // Whether the end of a run needs EndOfRun: a job's vote, or a preemption to act on.
  bool WatchesRunEnd() const {
    return collective_ != nullptr || watch_preemption_ || preemption_noted_.load(std::memory_order_relaxed);
  }
  // No vote since the run before this one began (always, for a single process).
  bool VotedLastRun() const { return runs_since_vote_ == 0; }

  // TW_OPT_CATCH_PREEMPTION_SIGNALS: installs (or shares) the handlers; OK without the option.
  Status WatchSignals();
  // D1, in a job, after begin on every hook: finds the chief and shares any rank's failure so far
  // (`begun`: a failed registration, saver, hook claim or begin), before the other checks.
  Status FindChief(const Status &begun);
  // D1–D3, D16: every rank restores the newest checkpoint all can read (or the chief alone, to
  // broadcast it: D13), or all initialize; after_create_session on every hook, then a vote that also
  // compares the global steps.
  Status CreateAgreed();
  // One top-level run starts (for messages).
  void CountRun() { ++run_count_; }
  // D4–D10: one vote (when due), then the same action on every rank.
  Status EndOfRun(Status status);
  // D12: close meets every rank, unless the collective failed (D9); the signal handlers go back.
  Status Close(bool meet);

  // NanTensorHook with TW_NAN_ACTION_ROLLBACK in a job: the rollback is carried by the vote and made by
  // every rank together (D7), instead of by this rank alone.
  void RequestRollback(std::string reason);
  // A sharded job's saves, decided alike on every rank (D17). LowestRankWith: one allreduce every rank
  // makes at the same point; *rank is the lowest rank whose `flag` is set, -1 for none.
  Status LowestRankWith(bool flag, const std::string &what, int32_t *rank);
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

 private:
  // The chief's `outcome` of its restore (or `path` restored, "" for initialized) → every rank (D2);
  // a rank that restored by the vote (D16) checks it holds the chief's step. *local starts as this
  // rank's `outcome`.
  Status ShareChiefState(const Status &outcome, const std::string &path, bool initialize_if_none,
                         const std::string &what, Status *local);
  Status BroadcastVariables(const std::string &what, Status *local);
  // D16 (restore_vote.cc): every rank restores the newest of the chief's checkpoints that every rank
  // can read, or none. *path: this rank's path of it ("" when none); *outcome: this rank's failure (the
  // chief's listing, a write), for D2's exchange; *agreed: a failure every rank shares (a listed
  // checkpoint that does not fit some rank's variables). A collective failure is returned. A non-OK
  // `chief_failure` on the chief is its listing's outcome: every rank fails with it, restoring nothing.
  Status RestoreByVote(const std::string &what, std::string *path, Status *outcome, Status *agreed,
                       const Status &chief_failure = Status());
  Status RollBackAgreed(const std::string &reason, const std::string &what);
  Status SaveForPreemption();
  bool PreemptionNoted() const {
    return preemption_signals_.Arrived() || preemption_noted_.load(std::memory_order_relaxed);
  }
  std::string RunLabel() const;

  tw_session &session_;
  std::shared_ptr<const Collective> collective_;  // all below but the preemption watch unused when null
  double timeout_secs_ = -1;
  int64_t vote_every_n_runs_ = 1;
  bool restore_via_broadcast_ = false;
  bool sharded_job_ = false;  // IsShardedJob: every rank writes its part of each save (D17)
  int32_t chief_rank_ = 0;
  int64_t run_count_ = 0;  // top-level runs, for messages
  int64_t runs_since_vote_ = 0;
  bool stop_pending_ = false;  // a stop asked for since the last vote (TW_OPT_VOTE_EVERY_N_RUNS > 1)
  bool rollback_requested_ = false;
  std::string rollback_reason_;
  bool watch_preemption_ = false;  // TW_OPT_CATCH_PREEMPTION_SIGNALS
  PreemptionSignals preemption_signals_;
  std::atomic<bool> preemption_noted_{false};
  bool preempted_ = false;
  bool save_due_ = false;             // NoteSaveDue, for the next vote
  bool agreed_save_ = false;          // a vote carried a due save: every rank's hook saves next
  std::vector<int64_t> vote_buffer_;  // reused by every vote: a voted run allocates nothing
};

}  // namespace tw

#endif  // TRAINWATCH_SESSION_JOB_AGREEMENT_H
