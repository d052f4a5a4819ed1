#include "checkpoint/async_saver.h"

namespace tw {
namespace checkpoint {

void AsyncSaver::Start(const std::string &prefix, int64_t global_step) {
  result_ = SaveResult();
  result_.global_step = global_step;
  if (!saver_.Capture(&snapshot_).ok()) {
    // A device variable could not be staged: nothing to write, and the result says why at once.
    result_.status = saver_.WriteSnapshot(snapshot_, prefix, global_step, &result_.path);
    done_.store(true, std::memory_order_release);
    pending_ = true;
    return;
  }
  Note(prefix, global_step);
  done_.store(false, std::memory_order_relaxed);
  worker_ = std::thread([this, prefix, global_step] {
    // One core: the training step this write overlaps keeps the others.
    result_.status = saver_.WriteSnapshot(snapshot_, prefix, global_step, &result_.path, 1);
    done_.store(true, std::memory_order_release);
  });
  pending_ = true;  // only once the thread runs: if it cannot start, nothing is pending
}

void AsyncSaver::Run(const std::string &prefix, int64_t global_step) {
  Wait();
  result_ = SaveResult();
  result_.global_step = global_step;
  Snapshot live;  // the variables themselves (device ones staged): the caller waits for the write
  // A failure stays in the snapshot, which WriteSnapshot refuses (a sharded one in its votes).
  if (saver_.Borrow(&live).ok()) Note(prefix, global_step);
  // One core, as Start's write (and as a synchronous save always wrote).
  result_.status = saver_.WriteSnapshot(live, prefix, global_step, &result_.path, 1);
  done_.store(true, std::memory_order_release);
  pending_ = true;
}

void AsyncSaver::Note(const std::string &prefix, int64_t global_step) {
  started_.push_back(CheckpointPath(prefix, global_step, saver_.options().pad_step_number));
}

void AsyncSaver::Wait() {
  if (worker_.joinable()) worker_.join();
}

SaveResult AsyncSaver::Take() {
  Wait();
  pending_ = false;
  return std::move(result_);
}

}  // namespace checkpoint
}  // namespace tw
