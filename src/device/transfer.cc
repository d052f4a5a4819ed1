#include "device/transfer.h"

#include <map>
#include <string>
#include <utility>

namespace tw {
namespace device {
namespace {

constexpr size_t kNamedTensors = 3;  // a message names this many tensors of a group, then counts the rest

// "'a'", "'a', 'b', 'c' and 4 more"
template <typename NameOf>
std::string Names(size_t count, const NameOf &name_of) {
  std::string text;
  for (size_t i = 0; i < count && i < kNamedTensors; ++i) {
    if (i > 0) text += ", ";
    text += "'" + std::string(name_of(i)) + "'";
  }
  if (count > kNamedTensors) text += " and " + std::to_string(count - kNamedTensors) + " more";
  return text;
}

std::string Where(const Table &table, int32_t id, const char *operation, const std::string &names) {
  return std::string("device ") + table.name() + ":" + std::to_string(id) + ", " + operation + " of " + names + ": ";
}

// The indices of a list per (device type, id), in first-seen order.
template <typename Key>
std::vector<std::vector<size_t>> Group(size_t count, const Key &key) {
  std::map<std::pair<int32_t, int32_t>, size_t> index;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < count; ++i) {
    auto inserted = index.emplace(key(i), groups.size());
    if (inserted.second) groups.emplace_back();
    groups[inserted.first->second].push_back(i);
  }
  return groups;
}

// Events recorded after enqueued work, waited for and released together.
class Pending {
 public:
  Pending() = default;
  Pending(const Pending &) = delete;
  Pending &operator=(const Pending &) = delete;
  ~Pending() { (void)WaitAll(); }

  Status Record(const std::shared_ptr<const Table> &table, int32_t id, const std::string &where) {
    tw_device_event *event = nullptr;
    TW_RETURN_IF_ERROR(
        CallUserCallback(where + "record: ", [&] { return table->fns().record(table->user_data(), id, &event); }));
    if (event == nullptr) return Status(TW_INTERNAL, where + "record returned TW_OK without an event");
    items_.push_back({table, event, where});
    return Status();
  }

  // Waits for every event (all of them, also after a failure), releases them; the first failure.
  Status WaitAll() {
    Status first;
    for (Item &item : items_) {
      const tw_device &fns = item.table->fns();
      Status status =
          CallUserCallback(item.where + "wait: ", [&] { return fns.wait(item.table->user_data(), item.event); });
      fns.release(item.table->user_data(), item.event);
      if (first.ok() && !status.ok()) first = status;
    }
    items_.clear();
    return first;
  }

 private:
  struct Item {
    std::shared_ptr<const Table> table;
    tw_device_event *event;
    std::string where;
  };
  std::vector<Item> items_;
};

// A pinned buffer borrowed from a table's scratch (device/registry.h), given back on destruction.
class ScratchLease {
 public:
  ScratchLease() = default;
  ScratchLease(const ScratchLease &) = delete;
  ScratchLease &operator=(const ScratchLease &) = delete;
  ~ScratchLease() {
    if (data_ != nullptr) table_->GiveBackScratch(data_, capacity_);
  }

  Status Acquire(std::shared_ptr<const Table> table, size_t size, const std::string &where) {
    table_ = std::move(table);
    data_ = table_->TakeScratch(size, &capacity_);
    if (data_ != nullptr) return Status();
    void *pointer = nullptr;
    TW_RETURN_IF_ERROR(CallUserCallback(where + "alloc_pinned of " + std::to_string(size) + " bytes: ", [&] {
      return table_->fns().alloc_pinned(table_->user_data(), size, &pointer);
    }));
    if (pointer == nullptr) return Status(TW_INTERNAL, where + "alloc_pinned returned TW_OK without memory");
    data_ = pointer;
    capacity_ = size;
    return Status();
  }
  void *data() const { return data_; }
  // For work enqueued into it whose completion cannot be awaited: the buffer is never reused or freed.
  void Abandon() { data_ = nullptr; }

 private:
  std::shared_ptr<const Table> table_;
  void *data_ = nullptr;
  size_t capacity_ = 0;
};

enum class Direction { kToHost, kToDevice };

Status Transfer(const std::vector<Copy> &all, Direction direction, bool *unfinished) {
  if (unfinished != nullptr) *unfinished = false;
  std::vector<size_t> nonempty;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].size > 0) nonempty.push_back(i);
  }
  if (nonempty.empty()) return Status();
  const char *operation = direction == Direction::kToHost ? "copy_to_host" : "copy_to_device";
  Pending pending;
  const auto groups = Group(nonempty.size(), [&](size_t i) {
    const Copy &c = all[nonempty[i]];
    return std::make_pair(c.type, c.id);
  });
  for (const std::vector<size_t> &group : groups) {
    const Copy &head = all[nonempty[group[0]]];
    std::shared_ptr<const Table> table;
    TW_RETURN_IF_ERROR(Find(head.type, "tensor '" + std::string(head.name) + "'", &table));
    std::vector<std::string> names;
    std::vector<tw_device_copy> copies;
    names.reserve(group.size());
    copies.reserve(group.size());
    for (size_t g : group) {
      const Copy &c = all[nonempty[g]];
      names.emplace_back(c.name);
      copies.push_back({c.dst, c.src, c.size, names.back().c_str()});
    }
    const std::string where =
        Where(*table, head.id, operation, Names(names.size(), [&](size_t i) { return names[i]; }));
    const tw_device &fns = table->fns();
    auto slot = direction == Direction::kToHost ? fns.copy_to_host : fns.copy_to_device;
    TW_RETURN_IF_ERROR(
        CallUserCallback(where, [&] { return slot(table->user_data(), head.id, copies.data(), copies.size()); }));
    const Status recorded = pending.Record(table, head.id, where);
    if (!recorded.ok()) {  // enqueued, but nothing can tell when it is done
      if (unfinished != nullptr) *unfinished = true;
      return recorded;
    }
  }
  return pending.WaitAll();
}

// A result count_nonfinite could have written for a tensor of `count` elements.
bool Plausible(const tw_device_scan &r, int64_t count) {
  if (r.nan_count < 0 || r.pos_inf_count < 0 || r.neg_inf_count < 0) return false;
  if (r.nan_count > count || r.pos_inf_count > count || r.neg_inf_count > count) return false;
  if (r.nan_count + r.pos_inf_count + r.neg_inf_count > count) return false;
  const bool any = r.nan_count + r.pos_inf_count + r.neg_inf_count > 0;
  if (any != (r.first_nonfinite_index >= 0) || (r.nan_count > 0) != (r.first_nan_index >= 0)) return false;
  if (r.first_nonfinite_index < -1 || r.first_nonfinite_index >= count) return false;
  if (r.first_nan_index < -1 || r.first_nan_index >= count) return false;
  return r.first_nan_index < 0 || r.first_nonfinite_index <= r.first_nan_index;
}

}  // namespace

PinnedBuffer &PinnedBuffer::operator=(PinnedBuffer &&other) noexcept {
  if (this != &other) {
    Free();
    table_ = std::move(other.table_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void PinnedBuffer::Free() {
  if (data_ != nullptr) table_->fns().free_pinned(table_->user_data(), data_);
  data_ = nullptr;
  size_ = 0;
  table_.reset();
}

Status PinnedBuffer::Allocate(std::shared_ptr<const Table> table, size_t size, PinnedBuffer *out,
                              std::string_view name) {
  *out = PinnedBuffer();
  void *pointer = nullptr;
  TW_RETURN_IF_ERROR(CallUserCallback(
      [&] {
        return std::string("device ") + table->name() + ", alloc_pinned of " + std::to_string(size) + " bytes" +
               (name.empty() ? "" : " for '" + std::string(name) + "'") + ": ";
      },
      [&] { return table->fns().alloc_pinned(table->user_data(), size, &pointer); }));
  if (pointer == nullptr) {
    return Errorf(TW_INTERNAL, "device %s, alloc_pinned of %zu bytes returned TW_OK without memory", table->name(),
                  size);
  }
  out->table_ = std::move(table);
  out->data_ = pointer;
  out->size_ = size;
  return Status();
}

Status CopyToHost(const std::vector<Copy> &copies, bool *unfinished) {
  return Transfer(copies, Direction::kToHost, unfinished);
}
Status CopyToDevice(const std::vector<Copy> &copies, bool *unfinished) {
  return Transfer(copies, Direction::kToDevice, unfinished);
}

void PinnedBuffer::Abandon() {
  data_ = nullptr;
  size_ = 0;
  table_.reset();
}

Status CountNonfinite(const std::vector<tw_tensor> &views, std::vector<tw_device_scan> *out) {
  out->assign(views.size(), tw_device_scan{0, 0, 0, -1, -1});
  if (views.empty()) return Status();
  const auto groups =
      Group(views.size(), [&](size_t i) { return std::make_pair(views[i].device_type, views[i].device_id); });
  std::vector<ScratchLease> results(groups.size());
  std::vector<std::string> wheres(groups.size());
  {
    Pending pending;  // waited for before `results` go back, also on failure
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::vector<size_t> &group = groups[g];
      const tw_tensor &head = views[group[0]];
      auto name_of = [&](size_t i) { return views[group[i]].name != nullptr ? views[group[i]].name : ""; };
      std::shared_ptr<const Table> table;
      TW_RETURN_IF_ERROR(Find(head.device_type, "tensor '" + std::string(name_of(0)) + "'", &table));
      wheres[g] = Where(*table, head.device_id, "count_nonfinite", Names(group.size(), name_of));
      std::vector<tw_tensor> tensors;
      tensors.reserve(group.size());
      for (size_t i : group) tensors.push_back(views[i]);
      TW_RETURN_IF_ERROR(results[g].Acquire(table, group.size() * sizeof(tw_device_scan), wheres[g]));
      auto *scans = static_cast<tw_device_scan *>(results[g].data());
      TW_RETURN_IF_ERROR(CallUserCallback(wheres[g], [&] {
        return table->fns().count_nonfinite(table->user_data(), head.device_id, tensors.data(), tensors.size(), scans);
      }));
      const Status recorded = pending.Record(table, head.device_id, wheres[g]);
      if (!recorded.ok()) {
        results[g].Abandon();  // the count may still write into it
        return recorded;
      }
    }
    TW_RETURN_IF_ERROR(pending.WaitAll());
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto *scans = static_cast<const tw_device_scan *>(results[g].data());
    for (size_t k = 0; k < groups[g].size(); ++k) {
      const size_t i = groups[g][k];
      const tw_device_scan &r = scans[k];
      if (!Plausible(r, ElementCount(views[i]))) {
        return Errorf(TW_INTERNAL,
                      "%sthe device wrote an impossible result for '%s' (nan %lld, +inf %lld, -inf %lld, first %lld, "
                      "first NaN %lld of %lld elements): results not written before the event completed?",
                      wheres[g].c_str(), views[i].name != nullptr ? views[i].name : "",
                      static_cast<long long>(r.nan_count), static_cast<long long>(r.pos_inf_count),
                      static_cast<long long>(r.neg_inf_count), static_cast<long long>(r.first_nonfinite_index),
                      static_cast<long long>(r.first_nan_index), static_cast<long long>(ElementCount(views[i])));
      }
      (*out)[i] = r;
    }
  }
  return Status();
}

struct HostCopy::State {
  PinnedBuffer buffer;
  TensorRef ref;
  tw_tensor view = TW_TENSOR_INIT;
};

HostCopy::HostCopy() = default;
HostCopy::~HostCopy() = default;
HostCopy::HostCopy(HostCopy &&) noexcept = default;
HostCopy &HostCopy::operator=(HostCopy &&) noexcept = default;

const tw_tensor &HostCopy::view() const {
  static const tw_tensor kEmpty = TW_TENSOR_INIT;
  return state_ != nullptr ? state_->view : kEmpty;
}

Status HostCopy::Make(const tw_tensor &device_view, HostCopy *out) {
  const char *name = device_view.name != nullptr ? device_view.name : "";
  // The buffer of *out is reused when it is from the same table and large enough: a hook that logs a
  // device value every N steps allocates pinned memory once.
  std::unique_ptr<State> state = out->state_ != nullptr ? std::move(out->state_) : std::make_unique<State>();
  const size_t bytes = static_cast<size_t>(ElementCount(device_view)) * DtypeSize(device_view.dtype);
  if (bytes > 0) {
    std::shared_ptr<const Table> table;
    TW_RETURN_IF_ERROR(Find(device_view.device_type, "tensor '" + std::string(name) + "'", &table));
    if (state->buffer.table() != table.get() || state->buffer.size() < bytes) {
      state->buffer = PinnedBuffer();
      TW_RETURN_IF_ERROR(PinnedBuffer::Allocate(std::move(table), bytes, &state->buffer, name));
    }
    bool unfinished = false;
    const Status copied = CopyToHost(
        {{state->buffer.data(), device_view.data, bytes, name, device_view.device_type, device_view.device_id}},
        &unfinished);
    if (unfinished) state->buffer.Abandon();
    TW_RETURN_IF_ERROR(copied);
  }
  tw_tensor host = device_view;
  host.data = bytes > 0 ? state->buffer.data() : nullptr;
  host.strides = nullptr;
  host.device_type = TW_DEVICE_HOST;
  host.device_id = 0;
  state->ref.Assign(host, name);
  state->view = TW_TENSOR_INIT;
  state->ref.FillView(&state->view);
  out->state_ = std::move(state);
  return Status();
}

Status Staging::Reserve(const std::vector<tw_tensor> &views) {
  buffers_.resize(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    const tw_tensor &v = views[i];
    const size_t bytes = IsOnDevice(v) ? static_cast<size_t>(ElementCount(v)) * DtypeSize(v.dtype) : 0;
    if (bytes == 0) {
      buffers_[i] = PinnedBuffer();
      continue;
    }
    const char *name = v.name != nullptr ? v.name : "";
    std::shared_ptr<const Table> table;
    TW_RETURN_IF_ERROR(Find(v.device_type, "tensor '" + std::string(name) + "'", &table));
    if (buffers_[i].size() == bytes && buffers_[i].table() == table.get()) continue;
    buffers_[i] = PinnedBuffer();  // the old one goes first: one copy of the state at most
    TW_RETURN_IF_ERROR(PinnedBuffer::Allocate(std::move(table), bytes, &buffers_[i], name));
  }
  return Status();
}

namespace {
std::vector<Copy> StagingCopies(const std::vector<tw_tensor> &views, const std::vector<PinnedBuffer> &buffers,
                                Direction direction) {
  std::vector<Copy> copies;
  for (size_t i = 0; i < views.size() && i < buffers.size(); ++i) {
    const tw_tensor &v = views[i];
    if (!IsOnDevice(v) || buffers[i].data() == nullptr) continue;
    const std::string_view name = v.name != nullptr ? v.name : "";
    if (direction == Direction::kToHost) {
      copies.push_back({buffers[i].data(), v.data, buffers[i].size(), name, v.device_type, v.device_id});
    } else {
      copies.push_back({v.data, buffers[i].data(), buffers[i].size(), name, v.device_type, v.device_id});
    }
  }
  return copies;
}
}  // namespace

Status Staging::Stage(const std::vector<tw_tensor> &views) {
  TW_RETURN_IF_ERROR(Reserve(views));
  bool unfinished = false;
  const Status copied = CopyToHost(StagingCopies(views, buffers_, Direction::kToHost), &unfinished);
  if (unfinished) AbandonAll();
  return copied;
}

Status Staging::Unstage(const std::vector<tw_tensor> &views) {
  if (views.size() != buffers_.size()) {
    return Errorf(TW_INTERNAL, "device staging holds %zu buffers, not the %zu views to unstage", buffers_.size(),
                  views.size());
  }
  bool unfinished = false;
  const Status copied = CopyToDevice(StagingCopies(views, buffers_, Direction::kToDevice), &unfinished);
  if (unfinished) AbandonAll();
  return copied;
}

void Staging::AbandonAll() {
  for (PinnedBuffer &buffer : buffers_) buffer.Abandon();
  buffers_.clear();
}

}  // namespace device
}  // namespace tw
