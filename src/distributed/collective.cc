#include "distributed/collective.h"

#include <cstddef>
#include <cstring>
#include <memory>

namespace tw {
namespace {

// The first published table ends after destroy: a caller's struct_size may not be smaller.
constexpr size_t kSizeV1 = offsetof(tw_collective, destroy) + sizeof(tw_collective::destroy);
static_assert(kSizeV1 == sizeof(tw_collective), "tw_collective v1 is the whole table today");
static_assert(offsetof(tw_collective, rank) == 4 && offsetof(tw_collective, world_size) == 8,
              "tw_collective v1 layout is frozen");

bool AllZero(const unsigned char *bytes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

}  // namespace

Status Collective::Create(const tw_collective *table, void *user_data, std::unique_ptr<Collective> *out) {
  if (table == nullptr) return Status(TW_INVALID_ARGUMENT, "collective is NULL");
  const size_t size = table->struct_size;
  if (size < kSizeV1) {
    return Errorf(TW_INVALID_ARGUMENT, "collective->struct_size %zu is smaller than tw_collective's first version (%zu)",
                  size, kSizeV1);
  }
  if (size > sizeof(tw_collective) &&
      !AllZero(reinterpret_cast<const unsigned char *>(table) + sizeof(tw_collective), size - sizeof(tw_collective))) {
    return Errorf(TW_INVALID_ARGUMENT,
                  "collective->struct_size %zu is larger than this library's tw_collective (%zu) and the extra "
                  "slots are set: the program needs a newer trainwatch",
                  size, sizeof(tw_collective));
  }
  tw_collective copy;
  std::memset(&copy, 0, sizeof copy);
  std::memcpy(&copy, table, size < sizeof copy ? size : sizeof copy);
  copy.struct_size = sizeof copy;
  if (copy.world_size < 1) return Errorf(TW_INVALID_ARGUMENT, "collective->world_size must be >= 1, got %d", copy.world_size);
  if (copy.rank < 0 || copy.rank >= copy.world_size) {
    return Errorf(TW_INVALID_ARGUMENT, "collective->rank %d is outside [0, %d)", copy.rank, copy.world_size);
  }
  if (copy.allreduce_int64 == nullptr) return Status(TW_INVALID_ARGUMENT, "collective->allreduce_int64 is NULL");
  if (copy.broadcast == nullptr) return Status(TW_INVALID_ARGUMENT, "collective->broadcast is NULL");
  if (copy.barrier == nullptr) return Status(TW_INVALID_ARGUMENT, "collective->barrier is NULL");
  out->reset(new Collective(copy, user_data));
  return Status();
}

Collective::~Collective() {
  if (table_.destroy != nullptr) table_.destroy(user_data_);
}

std::string Collective::Where(const char *operation, const std::string &what) const {
  return std::string("collective ") + operation + (what.empty() ? "" : " " + what) + " (rank " +
         std::to_string(table_.rank) + " of " + std::to_string(table_.world_size) + "): ";
}

Status Collective::Allreduce(std::vector<int64_t> *values, tw_reduce_op op, double timeout_secs,
                             const std::string &what) const {
  return CallUserCallback([&] { return Where("allreduce", what); },
                          [&] { return table_.allreduce_int64(user_data_, values->data(), values->size(), op, timeout_secs); });
}

Status Collective::Broadcast(void *data, size_t size, int32_t root, double timeout_secs, const std::string &what) const {
  return CallUserCallback([&] { return Where("broadcast", what); },
                          [&] { return table_.broadcast(user_data_, data, size, root, timeout_secs); });
}

Status Collective::Barrier(double timeout_secs, const std::string &what) const {
  return CallUserCallback([&] { return Where("barrier", what); },
                          [&] { return table_.barrier(user_data_, timeout_secs); });
}

Status Collective::BroadcastString(std::string *bytes, int32_t root, double timeout_secs, const std::string &what) const {
  int64_t length = static_cast<int64_t>(bytes->size());
  TW_RETURN_IF_ERROR(Broadcast(&length, sizeof length, root, timeout_secs, what));
  if (length < 0) return Errorf(TW_DATA_LOSS, "%sa negative length %lld arrived", Where("broadcast", what).c_str(),
                                static_cast<long long>(length));
  if (table_.rank != root) bytes->resize(static_cast<size_t>(length));
  if (length == 0) return Status();
  return Broadcast(&(*bytes)[0], bytes->size(), root, timeout_secs, what);
}

}  // namespace tw
