// The process's device tables (trainwatch/device.h): one registered tw_device per device type, found
// by the views that live on it. The only holder of the tables; src/device/transfer.h is the only
// caller of their slots.
//
// A Table is shared: whoever works with it (a transfer in progress, a pinned buffer, a session's
// staging) keeps a shared_ptr, so a table replaced or removed by tw_set_device / tw_unset_device stays
// usable for them, and its destroy(user_data) runs once the last of them is gone.
#ifndef TRAINWATCH_DEVICE_REGISTRY_H
#define TRAINWATCH_DEVICE_REGISTRY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "trainwatch.h"

namespace tw {
namespace device {

class Table {
 public:
  Table(const tw_device &fns, void *user_data) : fns_(fns), user_data_(user_data) {}
  ~Table();  // frees the scratch buffers, then runs destroy(user_data)
  Table(const Table &) = delete;
  Table &operator=(const Table &) = delete;

  const tw_device &fns() const { return fns_; }
  void *user_data() const { return user_data_; }
  const char *name() const { return fns_.name; }
  int32_t type() const { return fns_.device_type; }

  // Small pinned buffers (count results, host copies of logged values) reused from call to call, so a
  // hook's check allocates nothing once warm. TakeScratch hands out a buffer of at least `size` bytes
  // (*out NULL and OK when none is free: the caller allocates one); GiveBackScratch keeps it for the
  // next caller, or frees it when enough are kept.
  void *TakeScratch(size_t size, size_t *capacity) const;
  void GiveBackScratch(void *pointer, size_t capacity) const;

 private:
  struct Scratch {
    void *pointer;
    size_t capacity;
  };
  const tw_device fns_;
  void *const user_data_;
  mutable std::mutex scratch_mutex_;
  mutable std::vector<Scratch> scratch_;
};

// tw_set_device: checks and copies `table`, replacing the registration of its device type.
Status Register(const tw_device *table, void *user_data);
// tw_unset_device: removes the registration of `device_type` (none: OK).
Status Unregister(int32_t device_type);
// The table serving `type`, or TW_FAILED_PRECONDITION naming `what` (the view) and the type, and what
// to install.
Status Find(int32_t type, const std::string &what, std::shared_ptr<const Table> *out);

// "cuda", "ext", or "device type 7": how messages name a device type.
std::string TypeName(int32_t type);

}  // namespace device
}  // namespace tw

#endif  // TRAINWATCH_DEVICE_REGISTRY_H
