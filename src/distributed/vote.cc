#include "distributed/vote.h"

#include <vector>

#include "distributed/shared_failure.h"

namespace tw {
namespace {

// The slots of the vote vector; the last two only at creation and rollback.
constexpr size_t kStop = 0, kPreempt = 1, kRollback = 2, kRecoverable = 3, kFailure = 4, kSave = 5, kStep = 6,
                 kNegStep = 7;
constexpr size_t kSlots = 6, kSlotsWithStep = 8;

}  // namespace

namespace vote_internal {

void Fill(const Collective &collective, const Ballot &ballot, std::vector<int64_t> *out) {
  std::vector<int64_t> &votes = *out;
  votes.assign(ballot.with_step ? kSlotsWithStep : kSlots, 0);
  votes[kStop] = ballot.stop ? 1 : 0;
  votes[kPreempt] = ballot.preempt ? 1 : 0;
  votes[kSave] = ballot.save ? 1 : 0;
  votes[kRollback] = ballot.rollback ? RankSlot(collective, TW_OK) : 0;
  votes[ballot.recoverable ? kRecoverable : kFailure] = FailureSlot(collective, ballot.failure);
  if (ballot.with_step) {
    votes[kStep] = ballot.step;
    votes[kNegStep] = ballot.step == INT64_MIN ? INT64_MAX : -ballot.step;
  }
}

bool NeedsMessage(const std::vector<int64_t> &votes) {
  return votes[kFailure] != 0 || votes[kRecoverable] != 0 || votes[kRollback] != 0;
}

Status Read(const Collective &collective, double timeout_secs, const Ballot &ballot, const std::vector<int64_t> &votes,
            const std::string &what, Verdict *out) {
  Verdict verdict;
  verdict.stop = votes[kStop] != 0;
  verdict.preempt = votes[kPreempt] != 0;
  verdict.save = votes[kSave] != 0;
  const int64_t failed = votes[kFailure] != 0 ? votes[kFailure] : votes[kRecoverable];
  if (failed != 0) {
    TW_RETURN_IF_ERROR(ShareFailure(collective, timeout_secs, failed, ballot.failure.message(), what, &verdict.status));
    verdict.recoverable = votes[kFailure] == 0;
  } else if (votes[kRollback] != 0) {
    verdict.rollback_rank = SlotRank(collective, votes[kRollback]);
    TW_RETURN_IF_ERROR(ShareRankMessage(collective, timeout_secs, votes[kRollback], ballot.rollback_reason, what,
                                        &verdict.rollback_reason));
  }
  if (ballot.with_step) {
    verdict.max_step = votes[kStep];
    verdict.min_step = votes[kNegStep] == INT64_MAX ? INT64_MIN : -votes[kNegStep];
  }
  *out = std::move(verdict);
  return Status();
}

}  // namespace vote_internal

Status CastVote(const Collective &collective, double timeout_secs, const Ballot &ballot, const std::string &what,
                Verdict *out) {
  std::vector<int64_t> votes;
  return CastVote(
      collective, timeout_secs, ballot, [&] { return what; }, &votes, out);
}

Verdict LocalVerdict(const Ballot &ballot) {
  Verdict verdict;
  verdict.stop = ballot.stop;
  verdict.preempt = ballot.preempt;
  verdict.save = ballot.save;
  verdict.status = ballot.failure;
  verdict.recoverable = ballot.recoverable;
  if (ballot.rollback) {
    verdict.rollback_rank = 0;
    verdict.rollback_reason = ballot.rollback_reason;
  }
  verdict.min_step = verdict.max_step = ballot.step;
  return verdict;
}

}  // namespace tw
