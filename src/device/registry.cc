#include "device/registry.h"

#include <map>

#include "base/versioned.h"

namespace tw {
namespace device {
namespace {

// The most scratch buffers a table keeps for reuse: one per thread that checks or logs at a time.
constexpr size_t kKeptScratch = 8;

struct Registry {
  std::mutex mutex;
  std::map<int32_t, std::shared_ptr<const Table>> tables;
};

// Never destroyed: a table's destroy must not run from a static destructor at process exit, when
// the binding that made it (a Python interpreter) may already be gone.
Registry &TheRegistry() {
  static Registry *registry = new Registry;
  return *registry;
}

Status CheckSlots(const tw_device &t) {
  struct Slot {
    const char *name;
    bool present;
  };
  const Slot slots[] = {
      {"copy_to_host", t.copy_to_host != nullptr},
      {"copy_to_device", t.copy_to_device != nullptr},
      {"count_nonfinite", t.count_nonfinite != nullptr},
      {"record", t.record != nullptr},
      {"wait", t.wait != nullptr},
      {"query", t.query != nullptr},
      {"release", t.release != nullptr},
      {"alloc_pinned", t.alloc_pinned != nullptr},
      {"free_pinned", t.free_pinned != nullptr},
  };
  for (const Slot &slot : slots) {
    if (!slot.present)
      return Errorf(TW_INVALID_ARGUMENT, "device->%s is NULL (every slot but destroy is required)", slot.name);
  }
  return Status();
}

Status CheckType(int32_t type) {
  if (type < 0 || !IsDeviceType(type)) {
    return Errorf(TW_INVALID_ARGUMENT,
                  "device_type %d is not a device: 0 (TW_DEVICE_HOST), TW_DEVICE_CPU and TW_DEVICE_CUDA_HOST are "
                  "host memory and negative types do not exist",
                  type);
  }
  return Status();
}

}  // namespace

Table::~Table() {
  for (const Scratch &s : scratch_) fns_.free_pinned(user_data_, s.pointer);
  if (fns_.destroy != nullptr) fns_.destroy(user_data_);
}

void *Table::TakeScratch(size_t size, size_t *capacity) const {
  std::lock_guard<std::mutex> lock(scratch_mutex_);
  for (size_t i = 0; i < scratch_.size(); ++i) {
    if (scratch_[i].capacity >= size) {
      const Scratch found = scratch_[i];
      scratch_.erase(scratch_.begin() + static_cast<std::ptrdiff_t>(i));
      *capacity = found.capacity;
      return found.pointer;
    }
  }
  return nullptr;
}

void Table::GiveBackScratch(void *pointer, size_t capacity) const {
  {
    std::lock_guard<std::mutex> lock(scratch_mutex_);
    if (scratch_.size() < kKeptScratch) {
      scratch_.push_back({pointer, capacity});
      return;
    }
  }
  fns_.free_pinned(user_data_, pointer);
}

Status Register(const tw_device *table, void *user_data) {
  tw_device copy = TW_DEVICE_INIT;
  TW_RETURN_IF_ERROR(ReadVersioned(table, "device", &copy));
  TW_RETURN_IF_ERROR(CheckType(copy.device_type));
  if (copy.name == nullptr) return Status(TW_INVALID_ARGUMENT, "device->name is NULL");
  TW_RETURN_IF_ERROR(CheckSlots(copy));
  auto created = std::make_shared<const Table>(copy, user_data);
  std::shared_ptr<const Table> replaced;  // released after the lock: its destroy may take time
  Registry &registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::shared_ptr<const Table> &slot = registry.tables[copy.device_type];
  replaced = std::move(slot);
  slot = std::move(created);
  return Status();
}

Status Unregister(int32_t device_type) {
  TW_RETURN_IF_ERROR(CheckType(device_type));
  std::shared_ptr<const Table> removed;
  Registry &registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.tables.find(device_type);
  if (it != registry.tables.end()) {
    removed = std::move(it->second);
    registry.tables.erase(it);
  }
  return Status();
}

Status Find(int32_t type, const std::string &what, std::shared_ptr<const Table> *out) {
  {
    Registry &registry = TheRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto it = registry.tables.find(type);
    if (it != registry.tables.end()) {
      *out = it->second;
      return Status();
    }
  }
  const std::string install =
      type == TW_DEVICE_CUDA ? "load libtrainwatch_cuda (trainwatch/cuda.h) and pass its table to tw_set_device, or in "
                               "Python import trainwatch with torch.cuda available"
                             : "register a tw_device for it with tw_set_device";
  return Errorf(TW_FAILED_PRECONDITION, "%s lives on %s memory but no device is registered for %s (%s)", what.c_str(),
                TypeName(type).c_str(), TypeName(type).c_str(), install.c_str());
}

std::string TypeName(int32_t type) {
  switch (type) {
    case TW_DEVICE_CUDA: return "cuda";
    case TW_DEVICE_EXT: return "ext";
    default: return "device type " + std::to_string(type);
  }
}

}  // namespace device
}  // namespace tw
