#include "checkpoint/parallel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace tw {
namespace checkpoint {

int DefaultThreadCount() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(std::min(cores, 64u));
}

Status ParallelFor(size_t count, int threads, const std::function<Status(size_t, int)> &job) {
  if (threads <= 0) threads = DefaultThreadCount();
  const int workers = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), count));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  size_t failed_index = count;
  Status failure;

  auto run = [&](int worker) {
    // A worker thread must not let an exception escape (std::terminate); turn it into a Status.
    for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < count;) {
      Status status;
      try {
        status = job(i, worker);
      } catch (const std::bad_alloc &) {
        status = Status(TW_RESOURCE_EXHAUSTED, "out of memory");
      } catch (const std::exception &e) {
        status = Status(TW_INTERNAL, std::string("internal error: ") + e.what());
      }
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (i < failed_index) {
          failed_index = i;
          failure = status;
        }
        failed.store(true, std::memory_order_relaxed);
      }
    }
  };

  std::vector<std::thread> pool;
  pool.reserve(workers > 1 ? workers - 1 : 0);
  for (int w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(run, w);
    } catch (const std::system_error &) {
      break;  // no thread to spare: the started workers and this thread still finish every job
    }
  }
  run(0);
  for (std::thread &t : pool) t.join();
  return failure;
}

}  // namespace checkpoint
}  // namespace tw
