// The job agreement (job_agreement.h): the start agreement, the vote at the end of a run and what it
// decides, the preemption save. Its restore vote (D16) is in restore_vote.cc.
#include "session/job_agreement.h"

#include <vector>

#include "base/log.h"
#include "checkpoint/async_saver.h"
#include "checkpoint/io/path.h"
#include "checkpoint/saver.h"
#include "distributed/shared_failure.h"
#include "distributed/vote.h"
#include "session/session.h"

namespace tw {
namespace {

// The prefix of a preemption checkpoint: CheckpointSaverHook's default basename, so retention and the
// state file treat it as one of the hook's.
constexpr const char kPreemptionBasename[] = "model.ckpt";

Status StepMismatch(const Verdict &verdict, const std::string &what) {
  return Errorf(TW_FAILED_PRECONDITION,
                "the ranks hold different global steps %s (lowest %lld, highest %lld): they did not restore the "
                "same checkpoint",
                what.c_str(), static_cast<long long>(verdict.min_step), static_cast<long long>(verdict.max_step));
}

}  // namespace

JobAgreement::JobAgreement(tw_session &session, const Options &options)
    : session_(session),
      collective_(options.collective != nullptr ? options.collective->Fork() : nullptr),
      watch_preemption_(options.Int64(TW_OPT_CATCH_PREEMPTION_SIGNALS) != 0) {
  if (collective_ != nullptr) {
    timeout_secs_ = options.Double(TW_OPT_COLLECTIVE_TIMEOUT_SECS);
    vote_every_n_runs_ = options.Int64(TW_OPT_VOTE_EVERY_N_RUNS);
    restore_via_broadcast_ = options.Int64(TW_OPT_RESTORE_VIA_BROADCAST) != 0;
    sharded_job_ = IsShardedJob(options);
  }
}

Status JobAgreement::WatchSignals() {
  return watch_preemption_ ? PreemptionSignals::Acquire(&preemption_signals_) : Status();
}

Status JobAgreement::Close(bool meet) {
  Status met;
  if (meet && collective_ != nullptr && !Broken()) met = collective_->Barrier(timeout_secs_, "at close");
  preemption_signals_.Release();
  return met;
}

std::string JobAgreement::RunLabel() const { return "at the end of run " + std::to_string(run_count_); }

void JobAgreement::RequestRollback(std::string reason) {
  if (rollback_requested_) return;  // the first divergence of the run speaks for it
  rollback_requested_ = true;
  rollback_reason_ = std::move(reason);
}

// D1: exactly one chief, found once per session (TW_OPT_IS_CHIEF may name any rank), in the same
// allreduce as any rank's failure before it — a failed registration of its variables, a failed begin —
// in a failure slot (distributed/shared_failure.h): the lowest failing rank's message reaches every rank.
// A failure comes first: a rank that failed may declare anything (no shard, when its shard's
// registration is what failed).
Status JobAgreement::FindChief(const Status &begun) {
  const int64_t rank = collective_->rank();
  // Whether this rank declares sharded variables, as x and -x: every rank or none must (D17), or the
  // ranks would make different collective calls at every save.
  const int64_t sharded = sharded_job_ ? 1 : 0;
  std::vector<int64_t> chiefs = {session_.is_chief() ? rank : -1, session_.is_chief() ? -rank : -INT64_MAX,
                                 tw::FailureSlot(*collective_, begun), sharded, -sharded};
  const std::string what = "at session creation, finding the chief";
  TW_RETURN_IF_ERROR(collective_->Allreduce(&chiefs, TW_REDUCE_MAX, timeout_secs_, what));
  Status failure;
  TW_RETURN_IF_ERROR(tw::ShareFailure(*collective_, timeout_secs_, chiefs[2], begun.message(), what, &failure));
  TW_RETURN_IF_ERROR(failure);
  const int64_t highest = chiefs[0];
  const int64_t lowest = -chiefs[1];
  if (highest < 0) {
    return Errorf(TW_INVALID_ARGUMENT, "none of the %d ranks is chief (TW_OPT_IS_CHIEF): exactly one must be",
                  collective_->world_size());
  }
  if (lowest != highest) {
    return Errorf(TW_INVALID_ARGUMENT, "ranks %lld and %lld are both chief (TW_OPT_IS_CHIEF): exactly one must be",
                  static_cast<long long>(lowest), static_cast<long long>(highest));
  }
  if (chiefs[3] != -chiefs[4]) {
    return Errorf(TW_INVALID_ARGUMENT,
                  "rank %lld declares %s (tw_options_add_shard) and other ranks %s: every rank of a sharded job "
                  "registers its box of every sharded variable (an empty one when it holds none of its rows)",
                  static_cast<long long>(rank), sharded != 0 ? "sharded variables" : "no sharded variable",
                  sharded != 0 ? "none" : "some");
  }
  chief_rank_ = static_cast<int32_t>(highest);
  return Status();
}

// D1–D3, D16: every rank restores the newest checkpoint all can read (or the chief alone, to broadcast
// it: D13), or all initialize; after_create_session on every hook, then a vote that also compares the
// global steps.
Status JobAgreement::CreateAgreed() {
  const std::string what = "at session creation " + std::to_string(session_.creation_count());
  Status outcome;
  std::string path;
  if (restore_via_broadcast_) {
    if (session_.is_chief()) outcome = session_.creator_->CreateSession(session_, &path);
  } else {
    Status agreed;
    TW_RETURN_IF_ERROR(RestoreByVote(what, &path, &outcome, &agreed));
    if (!agreed.ok()) return agreed;
    if (session_.is_chief() && outcome.ok()) {
      if (!path.empty()) {
        tw::Log(TW_LOG_INFO, "Restored parameters from %s (global step %lld)", path.c_str(),
                static_cast<long long>(session_.global_step()));
      }
      // The kept list and retention clock from the state file; stale temporary files and parts go.
      if (!session_.checkpoint_dir().empty() && session_.writes_checkpoints())
        outcome = session_.IdleSaver().RecoverLastCheckpoints(session_.checkpoint_dir());
      std::string ignored;  // the chief's creator only initializes here
      if (outcome.ok() && path.empty()) outcome = session_.creator_->CreateSession(session_, &ignored);
    }
  }
  Status local;
  TW_RETURN_IF_ERROR(ShareChiefState(outcome, path, /*initialize_if_none=*/true, what, &local));
  if (local.ok()) {
    local = session_.AfterCreateSession();
    session_.created_ = false;  // until the vote says every rank is created
  }
  tw::Ballot ballot;
  ballot.failure = local;
  ballot.recoverable = session_.recoverable_ && session_.IsRecoverable(local);
  ballot.with_step = true;
  ballot.step = session_.global_step();
  tw::Verdict verdict;
  TW_RETURN_IF_ERROR(tw::CastVote(*collective_, timeout_secs_, ballot, what, &verdict));
  if (!verdict.status.ok()) return verdict.status;
  if (verdict.min_step != verdict.max_step) return StepMismatch(verdict, what);
  session_.created_ = true;
  return Status();
}

// D2: barrier, the chief's outcome, step and path to every rank; every other rank then checks it
// restored the chief's step (it restored with the chief by the vote, D16: by name, in its own
// TW_OPT_CHECKPOINT_DIR when it has one, so ranks may mount the directory at different places),
// initializes as the chief did, or receives the bytes (D13). A collective failure is returned; what
// went wrong on this rank goes to *local, for the vote.
Status JobAgreement::ShareChiefState(const Status &outcome, const std::string &path, bool initialize_if_none,
                                     const std::string &what, Status *local) {
  const double timeout = timeout_secs_;
  *local = outcome;
  TW_RETURN_IF_ERROR(collective_->Barrier(
      timeout, what + (session_.is_chief() ? ", after the chief's restore" : ", waiting for the chief's restore")));
  int64_t record[3] = {static_cast<int64_t>(outcome.code()), session_.global_step(), path.empty() ? 0 : 1};
  TW_RETURN_IF_ERROR(collective_->Broadcast(record, sizeof record, chief_rank_, timeout, what + ", the chief's step"));
  std::string text = outcome.ok() ? path : outcome.message();
  TW_RETURN_IF_ERROR(collective_->BroadcastString(&text, chief_rank_, timeout, what + ", the chief's checkpoint"));
  if (record[0] != TW_OK) return Status();  // the chief's own ballot carries its failure
  const int64_t chief_step = record[1];
  const bool restored = record[2] != 0;
  if (!session_.is_chief() && local->ok()) {
    std::string ignored;
    if (restored && !restore_via_broadcast_) {
      const std::string mine =
          session_.checkpoint_dir().empty()
              ? text
              : tw::checkpoint::JoinPath(session_.checkpoint_dir(), tw::checkpoint::Basename(text));
      if (session_.global_step() != chief_step) {
        *local = Errorf(TW_FAILED_PRECONDITION,
                        "restored global step %lld from %s, but the chief restored global step %lld from %s: the "
                        "ranks do not see the same checkpoint",
                        static_cast<long long>(session_.global_step()), mine.c_str(),
                        static_cast<long long>(chief_step), text.c_str());
      } else {
        tw::Log(TW_LOG_INFO, "Restored parameters from %s (global step %lld), the chief's checkpoint", mine.c_str(),
                static_cast<long long>(session_.global_step()));
      }
    } else if (!restored && initialize_if_none) {
      *local = session_.creator_->CreateSession(session_, &ignored);
    }
  }
  if (restore_via_broadcast_) {
    TW_RETURN_IF_ERROR(BroadcastVariables(what, local));
    if (!session_.is_chief() && local->ok()) session_.set_global_step(chief_step);
  }
  return Status();
}

// D13: TW_OPT_RESTORE_VIA_BROADCAST — the chief's list of variables (name and size), then one broadcast
// per variable. A rank whose variables do not match still takes part (into scratch memory), so that no
// rank is left waiting, and reports the mismatch in its ballot.
//
// Device variables travel as host bytes through the saver's staging buffers (checkpoint/device_variables.h):
// the chief copies them to the host first; the others receive into the buffers and copy them to the device
// at the end. A device failure fails this rank's ballot, and the rank still takes part (from or into scratch).
Status JobAgreement::BroadcastVariables(const std::string &what, Status *local) {
  tw::checkpoint::DeviceVariables &device = session_.IdleSaver().device_variables();
  const bool staged = !device.empty() && local->ok();
  if (staged) {
    const Status ready = session_.is_chief() ? device.Stage() : device.Reserve();
    if (!ready.ok()) *local = ready.WithPrefix("TW_OPT_RESTORE_VIA_BROADCAST: ");
  }
  std::vector<size_t> to_unstage;
  std::string layout;
  if (session_.is_chief()) {
    for (const tw::TensorRef &variable : session_.variables()) {
      layout += variable.name() + '\t' + std::to_string(variable.byte_size()) + '\n';
    }
  }
  TW_RETURN_IF_ERROR(
      collective_->BroadcastString(&layout, chief_rank_, timeout_secs_, what + ", the chief's variables"));
  size_t received = 0;
  std::vector<unsigned char> scratch;
  for (size_t begin = 0; begin < layout.size();) {
    const size_t tab = layout.find('\t', begin);
    const size_t end = layout.find('\n', begin);
    if (tab == std::string::npos || end == std::string::npos || tab > end) {
      return Status(TW_DATA_LOSS, "collective broadcast " + what + ": the chief's variable list is malformed");
    }
    const std::string name = layout.substr(begin, tab - begin);
    const size_t bytes = static_cast<size_t>(std::stoull(layout.substr(tab + 1, end - tab - 1)));
    begin = end + 1;
    if (bytes == 0) continue;
    const tw::TensorRef *variable = session_.FindVariable(name);
    void *into = nullptr;
    const long on_device = variable != nullptr ? device.IndexOf(name) : -1;
    if (variable != nullptr && variable->byte_size() == bytes && (on_device < 0 || (staged && local->ok()))) {
      into = on_device < 0 ? variable->data() : device.Staged(static_cast<size_t>(on_device)).data();
      if (on_device >= 0) to_unstage.push_back(static_cast<size_t>(on_device));
      ++received;
    } else if (variable != nullptr && variable->byte_size() == bytes) {  // on a device that failed above
      scratch.resize(bytes);
      into = scratch.data();
      ++received;
    } else {
      scratch.resize(bytes);
      into = scratch.data();
      if (local->ok()) {
        *local = variable == nullptr ? Errorf(TW_INVALID_ARGUMENT,
                                              "TW_OPT_RESTORE_VIA_BROADCAST: the chief's variable '%s' is not "
                                              "registered on this rank",
                                              name.c_str())
                                     : Errorf(TW_INVALID_ARGUMENT,
                                              "TW_OPT_RESTORE_VIA_BROADCAST: the chief's variable '%s' has %zu "
                                              "bytes, %zu here",
                                              name.c_str(), bytes, variable->byte_size());
      }
    }
    TW_RETURN_IF_ERROR(
        collective_->Broadcast(into, bytes, chief_rank_, timeout_secs_, what + ", variable '" + name + "'"));
  }
  if (!session_.is_chief() && local->ok()) {
    const Status unstaged = device.Unstage(to_unstage);
    if (!unstaged.ok()) *local = unstaged.WithPrefix("TW_OPT_RESTORE_VIA_BROADCAST: ");
  }
  size_t nonempty = 0;
  for (const tw::TensorRef &variable : session_.variables()) nonempty += variable.byte_size() > 0 ? 1 : 0;
  if (!session_.is_chief() && local->ok() && received != nonempty) {
    *local = Errorf(TW_INVALID_ARGUMENT,
                    "TW_OPT_RESTORE_VIA_BROADCAST: this rank registers %zu variables the chief does not have",
                    nonempty - received);
  }
  return Status();
}

// D4–D10: one vote (when due), then the same action on every rank. A single process with a preemption
// watch takes its ballot as the verdict.
Status JobAgreement::EndOfRun(Status status) {
  const bool clean_end = status.code() == TW_OUT_OF_RANGE || status.code() == TW_STOP_ITERATION;
  // D9: a collective operation of this run failed (a sharded save's): no vote follows. The other ranks
  // are inside that same operation and fail in it; the run fails with the error that names it.
  if (Broken()) return status.ok() || clean_end ? collective_->failure() : status;
  tw::Ballot ballot;
  ballot.stop = stop_pending_ || session_.stop_latched_ || session_.stop_requested_ || clean_end;
  ballot.preempt = PreemptionNoted();
  ballot.rollback = rollback_requested_;
  ballot.rollback_reason = rollback_reason_;
  ballot.save = save_due_;
  if (!status.ok() && !clean_end) {
    ballot.failure = status;
    ballot.recoverable = session_.recoverable_ && session_.IsRecoverable(status);
  }
  tw::Verdict verdict;
  if (collective_ == nullptr) {
    verdict = tw::LocalVerdict(ballot);
  } else {
    // D6: between votes a stop waits (the rank must not leave its loop alone); an ended run votes now.
    if (++runs_since_vote_ < vote_every_n_runs_ && status.ok()) {
      stop_pending_ = ballot.stop;
      session_.stop_latched_ = false;
      session_.stop_requested_ = false;
      return status;
    }
    runs_since_vote_ = 0;
    TW_RETURN_IF_ERROR(tw::CastVote(
        *collective_, timeout_secs_, ballot, [this] { return RunLabel(); }, &vote_buffer_, &verdict));
    stop_pending_ = false;
    session_.stop_requested_ = false;
    save_due_ = false;
    agreed_save_ = verdict.save;  // D17: every rank's hook saves in its next after_run
  }
  rollback_requested_ = false;
  rollback_reason_.clear();
  if (!verdict.status.ok()) return verdict.status;  // D7, D8, D9: every rank fails or recovers alike
  if (verdict.rollback_rank >= 0) TW_RETURN_IF_ERROR(RollBackAgreed(verdict.rollback_reason, RunLabel()));
  if (verdict.preempt && !preempted_) {
    preempted_ = true;
    TW_RETURN_IF_ERROR(SaveForPreemption());
  }
  if (verdict.stop || verdict.preempt) session_.stop_latched_ = true;
  return status;
}

// D7: every rank back to the checkpoint the chief chose (D2's exchange, without initializing).
Status JobAgreement::RollBackAgreed(const std::string &reason, const std::string &what) {
  const std::string rolling = what + ", rolling back";
  Status outcome;
  std::string path;
  const std::string not_rolled_back = "NaN loss during training. " + reason + "; not rolled back: ";
  const std::string no_dir = "the chief has no TW_OPT_CHECKPOINT_DIR";
  // B48: the chief's saves of the run that diverged go first, so that no rank's target is one of them.
  Status discarded;
  if (session_.is_chief()) {
    discarded = session_.DiscardDivergedCheckpoints();
    if (!discarded.ok()) discarded = Status(TW_NAN_LOSS, not_rolled_back + discarded.message());
  }
  if (restore_via_broadcast_) {
    if (session_.is_chief()) {
      if (!discarded.ok()) {
        outcome = discarded;
      } else {
        const Status restored =
            session_.checkpoint_dir().empty()
                ? Status(TW_NOT_FOUND, no_dir)
                : session_.IdleSaver().RestoreNewestGood(session_.checkpoint_dir(), &path, {"global_step"});
        if (!restored.ok()) outcome = Status(TW_NAN_LOSS, not_rolled_back + restored.message());
      }
    }
  } else {
    Status agreed;
    TW_RETURN_IF_ERROR(RestoreByVote(rolling, &path, &outcome, &agreed, discarded));
    if (!agreed.ok()) return agreed;
    if (session_.is_chief() && outcome.ok() && path.empty()) {
      const std::string state_file =
          tw::checkpoint::JoinPath(session_.checkpoint_dir(), session_.IdleSaver().options().latest_filename);
      outcome =
          Status(TW_NAN_LOSS, not_rolled_back + (session_.checkpoint_dir().empty()
                                                     ? no_dir
                                                     : "no checkpoint that every rank can read is listed in " +
                                                           state_file + " or found in " + session_.checkpoint_dir()));
    }
  }
  Status local;
  TW_RETURN_IF_ERROR(ShareChiefState(outcome, path, /*initialize_if_none=*/false, rolling, &local));
  tw::Ballot ballot;
  ballot.failure = local;
  ballot.with_step = true;
  ballot.step = session_.global_step();
  tw::Verdict verdict;
  TW_RETURN_IF_ERROR(tw::CastVote(*collective_, timeout_secs_, ballot, rolling, &verdict));
  if (!verdict.status.ok()) return verdict.status;
  if (verdict.min_step != verdict.max_step) return StepMismatch(verdict, rolling);
  tw::Log(TW_LOG_WARNING, "Model diverged with loss = NaN. %s; every rank rolled back to global step %lld",
          reason.c_str(), static_cast<long long>(session_.global_step()));
  return Status();
}

// D10: the chief saves at the step every rank stopped at (replicated variables: the others hold the
// same values and write nothing); a checkpoint already saved at this step is not written twice. In a
// sharded job (D17) every rank writes its part of that save: the chief's decision and prefix reach
// every rank by one broadcast, so all take part in the save's collective calls or none does.
Status JobAgreement::SaveForPreemption() {
  const bool sharded = sharded_job_;
  tw::Log(TW_LOG_WARNING, "Preemption noted: stopping at global step %lld%s",
          static_cast<long long>(session_.global_step()),
          (session_.is_chief() || sharded) && !session_.checkpoint_dir().empty() ? " after saving a checkpoint" : "");
  if (!sharded && (!session_.is_chief() || session_.checkpoint_dir().empty())) return Status();
  tw::checkpoint::Saver &saver = session_.IdleSaver();
  std::string prefix;  // "" : no save
  if (session_.is_chief() && !session_.checkpoint_dir().empty()) {
    // A single process that only restored (C24) learns the directory's kept list now, as a writer did at
    // creation, so that the state file keeps listing the checkpoints it restored from.
    if (!session_.writes_checkpoints()) TW_RETURN_IF_ERROR(saver.RecoverLastCheckpoints(session_.checkpoint_dir()));
    prefix = tw::checkpoint::JoinPath(session_.checkpoint_dir(), kPreemptionBasename);
    const std::vector<std::string> kept = saver.last_checkpoints();
    if (!kept.empty() && kept.back() == tw::checkpoint::CheckpointPath(prefix, session_.global_step(),
                                                                       saver.options().pad_step_number)) {
      prefix.clear();
    }
  }
  if (sharded) {
    TW_RETURN_IF_ERROR(collective_->BroadcastString(&prefix, chief_rank_, timeout_secs_,
                                                    RunLabel() + ", the chief's preemption checkpoint"));
    // A rank with its own TW_OPT_CHECKPOINT_DIR writes there (ranks may mount it at different places).
    if (!session_.is_chief() && !prefix.empty() && !session_.checkpoint_dir().empty()) {
      prefix = tw::checkpoint::JoinPath(session_.checkpoint_dir(), kPreemptionBasename);
    }
  }
  if (prefix.empty()) return Status();
  std::string written;
  const Status saved = saver.Save(prefix, session_.global_step(), &written);
  return saved.ok() ? saved : saved.WithPrefix("saving the preemption checkpoint: ");
}

// D17: one MAX allreduce of (world_size - rank) for a set flag: the lowest such rank wins.
Status JobAgreement::LowestRankWith(bool flag, const std::string &what, int32_t *rank) {
  const int32_t world = collective_->world_size();
  std::vector<int64_t> value = {flag ? world - collective_->rank() : 0};
  TW_RETURN_IF_ERROR(collective_->Allreduce(&value, TW_REDUCE_MAX, timeout_secs_, what + ", " + RunLabel()));
  *rank = value[0] == 0 ? -1 : world - static_cast<int32_t>(value[0]);
  return Status();
}

}  // namespace tw
