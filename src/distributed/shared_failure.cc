#include "distributed/shared_failure.h"

namespace tw {

int64_t RankSlot(const Collective &collective, tw_status code) {
  return (static_cast<int64_t>(collective.world_size() - collective.rank()) << 32) |
         static_cast<int64_t>(static_cast<uint32_t>(code));
}

int64_t FailureSlot(const Collective &collective, const Status &status) {
  return status.ok() ? 0 : RankSlot(collective, status.code());
}

int32_t SlotRank(const Collective &collective, int64_t slot) {
  return collective.world_size() - static_cast<int32_t>(slot >> 32);
}

tw_status SlotCode(int64_t slot) { return static_cast<tw_status>(static_cast<uint32_t>(slot & 0xFFFFFFFF)); }

Status ShareRankMessage(const Collective &collective, double timeout_secs, int64_t slot, const std::string &mine,
                        const std::string &what, std::string *out) {
  const int32_t origin = SlotRank(collective, slot);
  std::string text = collective.rank() == origin ? mine : std::string();
  TW_RETURN_IF_ERROR(collective.BroadcastString(&text, origin, timeout_secs,
                                                what + ", sharing rank " + std::to_string(origin) + "'s message"));
  *out = "rank " + std::to_string(origin) + " of " + std::to_string(collective.world_size()) + ": " + text;
  return Status();
}

Status ShareFailure(const Collective &collective, double timeout_secs, int64_t reduced, const std::string &mine,
                    const std::string &what, Status *failure) {
  *failure = Status();
  if (reduced == 0) return Status();
  std::string message;
  TW_RETURN_IF_ERROR(ShareRankMessage(collective, timeout_secs, reduced, mine, what, &message));
  *failure = Status(SlotCode(reduced), message);
  return Status();
}

}  // namespace tw
