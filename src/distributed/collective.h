// The job's collective (trainwatch/distributed.h) as the session layer uses it: the caller's table,
// copied to this library's size, behind calls that check the engine's answers and name the operation,
// this rank and the world size in every failure.
#ifndef TRAINWATCH_DISTRIBUTED_COLLECTIVE_H
#define TRAINWATCH_DISTRIBUTED_COLLECTIVE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "trainwatch/distributed.h"

namespace tw {

class Collective {
 public:
  // Checks and copies `table` (at most its struct_size; slots past it stay NULL). On success the
  // Collective owns user_data: table->destroy runs in the destructor.
  static Status Create(const tw_collective *table, void *user_data, std::unique_ptr<Collective> *out);
  ~Collective();
  Collective(const Collective &) = delete;
  Collective &operator=(const Collective &) = delete;

  int32_t rank() const { return table_.rank; }
  int32_t world_size() const { return table_.world_size; }

  // `what` says where the session is ("at the end of run 12"); it prefixes a failure's message.
  // timeout_secs < 0: no limit.
  Status Allreduce(std::vector<int64_t> *values, tw_reduce_op op, double timeout_secs, const std::string &what) const;
  // The same with `what` a callable returning it, called only on failure: the per-run vote builds no text.
  template <typename What>
  Status AllreduceLazily(std::vector<int64_t> *values, tw_reduce_op op, double timeout_secs, const What &what) const {
    return CallUserCallback(
        [&] { return Where("allreduce", what()); },
        [&] { return table_.allreduce_int64(user_data_, values->data(), values->size(), op, timeout_secs); });
  }
  Status Broadcast(void *data, size_t size, int32_t root, double timeout_secs, const std::string &what) const;
  Status Barrier(double timeout_secs, const std::string &what) const;
  // A byte string of any length from `root`: its length, then its bytes (two broadcasts).
  Status BroadcastString(std::string *bytes, int32_t root, double timeout_secs, const std::string &what) const;

 private:
  Collective(const tw_collective &table, void *user_data) : table_(table), user_data_(user_data) {}
  std::string Where(const char *operation, const std::string &what) const;

  tw_collective table_;
  void *user_data_;
};

}  // namespace tw

#endif  // TRAINWATCH_DISTRIBUTED_COLLECTIVE_H
