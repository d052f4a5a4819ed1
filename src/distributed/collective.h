// The job's collective (trainwatch/distributed.h) as the session layer uses it: the caller's table,
// copied to this library's size, behind calls that check the engine's answers and name the operation,
// this rank and the world size in every failure.
//
// Each user of the collective — a session, a standalone saver — calls it through a handle of its own
// (Fork) with a latch: once one operation of the handle failed, the ranks no longer make the same
// calls, so the handle makes no further call to the table and every later operation fails at once with
// that first failure (D9). Only the options' own handle, which is never called, outlives its users.
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
  // Collective owns user_data: table->destroy runs once this handle and every fork of it are gone.
  static Status Create(const tw_collective *table, void *user_data, std::unique_ptr<Collective> *out);
  Collective(const Collective &) = delete;
  Collective &operator=(const Collective &) = delete;

  // A handle on the same table with a latch of its own, not failed.
  std::shared_ptr<const Collective> Fork() const;

  int32_t rank() const { return engine_->table.rank; }
  int32_t world_size() const { return engine_->table.world_size; }
  // The first failed operation of this handle (its status and message); OK while none failed.
  const Status &failure() const { return failure_; }

  // `what` says where the session is ("at the end of run 12"); it prefixes a failure's message.
  // timeout_secs < 0: no limit. After a failure of this handle each returns failure() at once.
  Status Allreduce(std::vector<int64_t> *values, tw_reduce_op op, double timeout_secs, const std::string &what) const;
  // The same with `what` a callable returning it, called only on failure: the per-run vote builds no text.
  template <typename What>
  Status AllreduceLazily(std::vector<int64_t> *values, tw_reduce_op op, double timeout_secs, const What &what) const {
    return Call([&] { return Where("allreduce", what()); },
                [&] {
                  return engine_->table.allreduce_int64(engine_->user_data, values->data(), values->size(), op,
                                                        timeout_secs);
                });
  }
  Status Broadcast(void *data, size_t size, int32_t root, double timeout_secs, const std::string &what) const;
  Status Barrier(double timeout_secs, const std::string &what) const;
  // A byte string of any length from `root`: its length, then its bytes (two broadcasts).
  Status BroadcastString(std::string *bytes, int32_t root, double timeout_secs, const std::string &what) const;

 private:
  // The caller's table and user_data, shared by every handle; destroy runs with the last one.
  struct Engine {
    tw_collective table;
    void *user_data;
    ~Engine();
  };

  explicit Collective(std::shared_ptr<const Engine> engine) : engine_(std::move(engine)) {}
  std::string Where(const char *operation, const std::string &what) const;
  // Calls the table through CallUserCallback unless the latch is set; a failure sets it.
  template <typename WhereFn, typename CallFn>
  Status Call(const WhereFn &where, const CallFn &call) const {
    if (!failure_.ok()) return failure_;
    Status status = CallUserCallback(where, call);
    if (!status.ok()) failure_ = status;
    return status;
  }
  // A malformed answer of the engine: a failure of the operation like any other.
  Status Refuse(Status status) const {
    failure_ = status;
    return status;
  }

  std::shared_ptr<const Engine> engine_;
  // Set by the first failure. Mutable: operations are const for their callers, and a handle is used by
  // one thread at a time (its session's or saver's).
  mutable Status failure_;
};

}  // namespace tw

#endif  // TRAINWATCH_DISTRIBUTED_COLLECTIVE_H
