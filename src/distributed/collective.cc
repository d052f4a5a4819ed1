#include "distributed/collective.h"

#include <memory>

#include "base/versioned.h"

namespace tw {

Status Collective::Create(const tw_collective *table, void *user_data, std::unique_ptr<Collective> *out) {
  tw_collective copy = TW_COLLECTIVE_INIT;
  TW_RETURN_IF_ERROR(ReadVersioned(table, "collective", &copy));
  if (copy.world_size < 1)
    return Errorf(TW_INVALID_ARGUMENT, "collective->world_size must be >= 1, got %d", copy.world_size);
  if (copy.rank < 0 || copy.rank >= copy.world_size) {
    return Errorf(TW_INVALID_ARGUMENT, "collective->rank %d is outside [0, %d)", copy.rank, copy.world_size);
  }
  if (copy.allreduce_int64 == nullptr) return Status(TW_INVALID_ARGUMENT, "collective->allreduce_int64 is NULL");
  if (copy.broadcast == nullptr) return Status(TW_INVALID_ARGUMENT, "collective->broadcast is NULL");
  if (copy.barrier == nullptr) return Status(TW_INVALID_ARGUMENT, "collective->barrier is NULL");
  auto engine = std::make_shared<Engine>();
  engine->table = copy;
  engine->user_data = user_data;
  out->reset(new Collective(std::move(engine)));
  return Status();
}

Collective::Engine::~Engine() {
  if (table.destroy != nullptr) table.destroy(user_data);
}

std::shared_ptr<const Collective> Collective::Fork() const {
  return std::shared_ptr<const Collective>(new Collective(engine_));
}

std::string Collective::Where(const char *operation, const std::string &what) const {
  return std::string("collective ") + operation + (what.empty() ? "" : " " + what) + " (rank " +
         std::to_string(rank()) + " of " + std::to_string(world_size()) + "): ";
}

Status Collective::Allreduce(std::vector<int64_t> *values, tw_reduce_op op, double timeout_secs,
                             const std::string &what) const {
  return Call([&] { return Where("allreduce", what); },
              [&] {
                return engine_->table.allreduce_int64(engine_->user_data, values->data(), values->size(), op,
                                                      timeout_secs);
              });
}

Status Collective::Broadcast(void *data, size_t size, int32_t root, double timeout_secs,
                             const std::string &what) const {
  return Call([&] { return Where("broadcast", what); },
              [&] { return engine_->table.broadcast(engine_->user_data, data, size, root, timeout_secs); });
}

Status Collective::Barrier(double timeout_secs, const std::string &what) const {
  return Call([&] { return Where("barrier", what); },
              [&] { return engine_->table.barrier(engine_->user_data, timeout_secs); });
}

Status Collective::BroadcastString(std::string *bytes, int32_t root, double timeout_secs,
                                   const std::string &what) const {
  int64_t length = static_cast<int64_t>(bytes->size());
  TW_RETURN_IF_ERROR(Broadcast(&length, sizeof length, root, timeout_secs, what));
  if (length < 0) {
    return Refuse(Errorf(TW_DATA_LOSS, "%sa negative length %lld arrived", Where("broadcast", what).c_str(),
                         static_cast<long long>(length)));
  }
  if (rank() != root) bytes->resize(static_cast<size_t>(length));
  if (length == 0) return Status();
  return Broadcast(&(*bytes)[0], bytes->size(), root, timeout_secs, what);
}

}  // namespace tw
