// The vote that ends a run (or a session creation) on every rank of a job: one allreduce (MAX) of a
// few int64, then — only when a rank failed, must recover or asks for a rollback — one broadcast of
// that rank's message. Each event slot holds (world_size - rank) << 32 | status code
// (distributed/shared_failure.h), so that MAX picks the lowest rank that reported it, and every rank
// reads the same verdict.
#ifndef TRAINWATCH_DISTRIBUTED_VOTE_H
#define TRAINWATCH_DISTRIBUTED_VOTE_H

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "distributed/collective.h"

namespace tw {

// One rank's view of how its run ended.
struct Ballot {
  bool stop = false;      // a stop request, a clean end of input, the Coordinator's request_stop
  bool preempt = false;   // a preemption signal or tw_session_notify_preemption
  bool rollback = false;  // NanTensorHook asks every rank to roll back
  bool save = false;      // the chief's time-triggered checkpoint is due (D17)
  std::string rollback_reason;
  Status failure;  // this rank's failure (OK when none); `recoverable` says which kind
  bool recoverable = false;
  bool with_step = false;  // at session creation: also compare the global step of every rank
  int64_t step = 0;
};

// What every rank learnt from the vote: the same on every rank.
struct Verdict {
  bool stop = false;
  bool preempt = false;
  bool save = false;
  int32_t rollback_rank = -1;   // the lowest rank asking for a rollback, -1 for none
  std::string rollback_reason;  // that rank's reason, prefixed with its rank
  // The lowest failing rank's status, its message prefixed "rank R of N: " (a failure wins over a
  // recoverable error); OK when no rank failed.
  Status status;
  bool recoverable = false;            // status is a recoverable error of some rank and no rank failed for good
  int64_t min_step = 0, max_step = 0;  // with_step only
};

// Casts `ballot` on every rank. A non-OK return is the collective's own failure (a timeout, a dead
// rank): the verdict is then unknown and the caller fails with it. `what` names the occasion ("at the
// end of run 12").
// `what` is a callable returning the occasion's text, called only when it is needed (a failure); votes
// is the caller's reusable buffer.
template <typename What>
Status CastVote(const Collective &collective, double timeout_secs, const Ballot &ballot, const What &what,
                std::vector<int64_t> *votes, Verdict *out);
Status CastVote(const Collective &collective, double timeout_secs, const Ballot &ballot, const std::string &what,
                Verdict *out);

namespace vote_internal {
// Fills `votes` from the ballot (MAX-reducible); reads the reduced vector into a verdict, sharing the
// message of the rank that failed or asks for a rollback (only then a broadcast).
void Fill(const Collective &collective, const Ballot &ballot, std::vector<int64_t> *votes);
Status Read(const Collective &collective, double timeout_secs, const Ballot &ballot, const std::vector<int64_t> &votes,
            const std::string &what, Verdict *out);
bool NeedsMessage(const std::vector<int64_t> &votes);
}  // namespace vote_internal

template <typename What>
Status CastVote(const Collective &collective, double timeout_secs, const Ballot &ballot, const What &what,
                std::vector<int64_t> *votes, Verdict *out) {
  vote_internal::Fill(collective, ballot, votes);
  TW_RETURN_IF_ERROR(collective.AllreduceLazily(votes, TW_REDUCE_MAX, timeout_secs, what));
  return vote_internal::Read(collective, timeout_secs, ballot, *votes,
                             vote_internal::NeedsMessage(*votes) ? std::string(what()) : std::string(), out);
}

// The verdict of a single process: the ballot itself.
Verdict LocalVerdict(const Ballot &ballot);

}  // namespace tw

#endif  // TRAINWATCH_DISTRIBUTED_VOTE_H
