#include "checkpoint/io/parallel.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/format/xxhash64.h"

namespace tw {
namespace checkpoint {

int DefaultThreadCount() {
  // Read once: glibc reads /sys/devices/system/cpu/online on every call, three system calls per save.
  static const int threads = [] {
    const unsigned cores = std::thread::hardware_concurrency();
    return cores == 0 ? 1 : static_cast<int>(std::min(cores, 64u));
  }();
  return threads;
}

int ThreadsPerRank(int usable_cores, int machine_cores, int local_ranks) {
  usable_cores = std::max(usable_cores, 1);
  const int share = std::max(1, std::max(machine_cores, usable_cores) / std::max(local_ranks, 1));
  return std::min({usable_cores, share, 64});
}

int LocalRanksFromEnvironment() {
  for (const char *name : {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}) {
    const char *value = std::getenv(name);
    if (value == nullptr) continue;
    char *end = nullptr;
    const long n = std::strtol(value, &end, 10);
    if (end != value && *end == '\0' && n > 0 && n <= (1 << 20)) return static_cast<int>(n);
  }
  return 0;
}

int ThreadsForLocalRanks(int local_ranks) {
  if (local_ranks <= 0) return DefaultThreadCount();
  cpu_set_t set;
  CPU_ZERO(&set);
  const int usable = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : DefaultThreadCount();
  return ThreadsPerRank(usable, static_cast<int>(std::thread::hardware_concurrency()), local_ranks);
}

int64_t MachineId() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string text = host;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");  // containers of one machine share it
  std::string boot_id;
  if (boot >> boot_id) text += "/" + boot_id;
  const int64_t id = static_cast<int64_t>(Xxh64(text.data(), text.size()) >> 2);
  return id == 0 ? 1 : id;
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

  // No thread to spare (std::system_error) or no memory for one (std::bad_alloc): the started workers
  // and this thread still finish every job. Never an exception out of here once a job has run: a
  // writing pass would stop half-way (FillResources), and a joinable std::thread destroyed terminates.
  std::vector<std::thread> pool;
  try {
    pool.reserve(workers > 1 ? workers - 1 : 0);
    for (int w = 1; w < workers; ++w) pool.emplace_back(run, w);
  } catch (const std::exception &) {
  }
  run(0);
  for (std::thread &t : pool) t.join();
  return failure;
}

}  // namespace checkpoint
}  // namespace tw
