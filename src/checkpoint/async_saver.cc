#include "checkpoint/async_saver.h"

namespace tw {
namespace checkpoint {

void AsyncSaver::Start(const std::string &prefix, int64_t global_step) {
  Note(prefix, global_step);
  saver_.Capture(&snapshot_);
  done_.store(false, std::memory_order_relaxed);
  result_ = SaveResult();
  result_.global_step = global_step;
  worker_ = std::thread([this, prefix, global_step] {
    // One core: the training step this write overlaps keeps the others.
    result_.status = saver_.WriteSnapshot(snapshot_, prefix, global_step, &result_.path, 1);
    done_.store(true, std::memory_order_release);
  });
  pending_ = true;  // only once the thread runs: if it cannot start, nothing is pending
}

void AsyncSaver::Run(const std::string &prefix, int64_t global_step) {
  Wait();
  Note(prefix, global_step);
  result_ = SaveResult();
  result_.global_step = global_step;
  Snapshot live;  // the variables themselves: the caller waits for the write
  live.Borrow(saver_.variables());
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
