#include "distributed/vote.h"

#include <vector>

namespace tw {
namespace {

// The slots of the vote vector; the last two only at creation and rollback.
constexpr size_t kStop = 0, kPreempt = 1, kRollback = 2, kRecoverable = 3, kFailure = 4, kSave = 5, kStep = 6,
                 kNegStep = 7;
constexpr size_t kSlots = 6, kSlotsWithStep = 8;

int64_t Event(int32_t rank, int32_t world_size, tw_status code) {
  return (static_cast<int64_t>(world_size - rank) << 32) | static_cast<int64_t>(static_cast<uint32_t>(code));
}
int32_t EventRank(int64_t value, int32_t world_size) { return world_size - static_cast<int32_t>(value >> 32); }
tw_status EventCode(int64_t value) { return static_cast<tw_status>(static_cast<uint32_t>(value & 0xFFFFFFFF)); }

std::string RankPrefix(int32_t rank, int32_t world_size) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(world_size) + ": ";
}

// The message of the rank that reported `value`, to every rank (one broadcast, only on this path).
Status ShareMessage(const Collective &collective, double timeout_secs, int64_t value, const std::string &mine,
                    const std::string &what, std::string *out) {
  const int32_t origin = EventRank(value, collective.world_size());
  std::string text = collective.rank() == origin ? mine : std::string();
  TW_RETURN_IF_ERROR(collective.BroadcastString(&text, origin, timeout_secs,
                                                what + ", sharing rank " + std::to_string(origin) + "'s message"));
  *out = RankPrefix(origin, collective.world_size()) + text;
  return Status();
}

}  // namespace

namespace vote_internal {

void Fill(const Collective &collective, const Ballot &ballot, std::vector<int64_t> *out) {
  const int32_t rank = collective.rank();
  const int32_t world = collective.world_size();
  std::vector<int64_t> &votes = *out;
  votes.assign(ballot.with_step ? kSlotsWithStep : kSlots, 0);
  votes[kStop] = ballot.stop ? 1 : 0;
  votes[kPreempt] = ballot.preempt ? 1 : 0;
  votes[kSave] = ballot.save ? 1 : 0;
  votes[kRollback] = ballot.rollback ? Event(rank, world, TW_OK) : 0;
  if (!ballot.failure.ok()) {
    votes[ballot.recoverable ? kRecoverable : kFailure] = Event(rank, world, ballot.failure.code());
  }
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
  const int32_t world = collective.world_size();
  Verdict verdict;
  verdict.stop = votes[kStop] != 0;
  verdict.preempt = votes[kPreempt] != 0;
  verdict.save = votes[kSave] != 0;
  const int64_t failed = votes[kFailure] != 0 ? votes[kFailure] : votes[kRecoverable];
  if (failed != 0) {
    std::string message;
    TW_RETURN_IF_ERROR(ShareMessage(collective, timeout_secs, failed, ballot.failure.message(), what, &message));
    verdict.status = Status(EventCode(failed), message);
    verdict.recoverable = votes[kFailure] == 0;
  } else if (votes[kRollback] != 0) {
    verdict.rollback_rank = EventRank(votes[kRollback], world);
    TW_RETURN_IF_ERROR(ShareMessage(collective, timeout_secs, votes[kRollback], ballot.rollback_reason, what,
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
