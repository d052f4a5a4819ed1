// One checkpoint write in the background: the training thread pays only for Saver::Capture (a copy of
// the variables into reused buffers, for device variables the copies to the host into pinned staging
// buffers); compression, checksums and the durable write run on a worker thread, from host memory. At
// most one write is in flight. The result stays pending until the owner takes it, so that whoever
// must use the Saver in between (a restore) can wait for the write without consuming its outcome.
//
// Thread rules: every method is called from one thread (the session's); the worker thread touches the
// Saver only between Start and the end of its write.
#ifndef TRAINWATCH_CHECKPOINT_ASYNC_SAVER_H
#define TRAINWATCH_CHECKPOINT_ASYNC_SAVER_H

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/saver.h"
#include "checkpoint/snapshot.h"

namespace tw {
namespace checkpoint {

struct SaveResult {
  Status status;
  int64_t global_step = 0;
  std::string path;  // the checkpoint written, when status is OK
};

class AsyncSaver {
 public:
  explicit AsyncSaver(Saver &saver) : saver_(saver) {}
  ~AsyncSaver() { Wait(); }
  AsyncSaver(const AsyncSaver &) = delete;
  AsyncSaver &operator=(const AsyncSaver &) = delete;

  // Captures the variables now (device variables copied into the saver's staging buffers, waited for)
  // and starts writing them as <prefix>-<global_step>. A capture that fails starts nothing: its result
  // is pending at once, with the device's status. Precondition: !pending() (take the previous result first).
  void Start(const std::string &prefix, int64_t global_step);
  // The same write on the calling thread, from the variables themselves (a synchronous save: a sharded
  // one calls the job's collective, which only the session's thread may), its result left pending as
  // Start's. Precondition: !pending().
  void Run(const std::string &prefix, int64_t global_step);

  // A write was started and its result has not been taken.
  bool pending() const { return pending_; }
  // pending() and the write has finished: Take() will not block.
  bool finished() const { return pending_ && done_.load(std::memory_order_acquire); }

  // Blocks until no write is running; a pending result stays pending.
  void Wait();
  // Waits for the pending write and hands over its result. Precondition: pending().
  SaveResult Take();

  // The checkpoints Start and Run began writing since the last ForgetStarted, as the saver names them:
  // what a NaN rollback discards when they were begun in the run that diverged (B48).
  const std::vector<std::string> &started() const { return started_; }
  void ForgetStarted() { started_.clear(); }

  // The saver, once no write is running: the only way the owner's thread may use it.
  Saver &Idle() {
    Wait();
    return saver_;
  }

 private:
  void Note(const std::string &prefix, int64_t global_step);

  Saver &saver_;
  Snapshot snapshot_;  // reused from save to save
  std::thread worker_;
  std::atomic<bool> done_{false};
  bool pending_ = false;
  SaveResult result_;
  std::vector<std::string> started_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_ASYNC_SAVER_H
