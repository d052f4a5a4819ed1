// One rank's failure, told to every rank of a job: a slot of an allreduce (MAX) that picks the lowest
// failing rank, then — only when some rank failed — one string broadcast of that rank's message. Every
// rank then fails alike with that rank's status and "rank R of N: <its message>". Session creation
// (D1), the vote (D4–D10), a standalone saver's creation and a sharded save's preparation (D17) share it.
#ifndef TRAINWATCH_DISTRIBUTED_SHARED_FAILURE_H
#define TRAINWATCH_DISTRIBUTED_SHARED_FAILURE_H

#include <cstdint>
#include <string>

#include "base/status.h"
#include "distributed/collective.h"

namespace tw {

// A slot naming this rank with `code`: (world_size - rank) << 32 | code, never 0, so that MAX picks the
// lowest rank that sets one.
int64_t RankSlot(const Collective &collective, tw_status code);
// This rank's failure slot: RankSlot of the status's code, 0 when `status` is OK.
int64_t FailureSlot(const Collective &collective, const Status &status);
// The rank and the code a non-zero slot holds.
int32_t SlotRank(const Collective &collective, int64_t slot);
tw_status SlotCode(int64_t slot);

// The message of the rank a non-zero reduced `slot` names, to every rank (a string from that rank,
// `mine` on it): *out = "rank R of N: <message>". `what` names the occasion in a failure of the
// broadcast, which is returned.
Status ShareRankMessage(const Collective &collective, double timeout_secs, int64_t slot, const std::string &mine,
                        const std::string &what, std::string *out);

// After a MAX allreduce of every rank's FailureSlot into `reduced`: 0 (no rank failed) sets *failure OK
// and makes no call; else *failure is the failing rank's status with ShareRankMessage's text. A non-OK
// return is the collective's own failure.
Status ShareFailure(const Collective &collective, double timeout_secs, int64_t reduced, const std::string &mine,
                    const std::string &what, Status *failure);

}  // namespace tw

#endif  // TRAINWATCH_DISTRIBUTED_SHARED_FAILURE_H
