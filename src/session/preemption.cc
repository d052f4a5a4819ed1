#include "session/preemption.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace tw {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGUSR1};
constexpr size_t kSignalCount = sizeof kSignals / sizeof kSignals[0];

// Written from the handler: a lock-free atomic is async-signal-safe, a mutex or malloc would not be.
std::atomic<uint64_t> g_arrived{0};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the signal counter must be lock-free");

std::mutex g_mutex;  // guards the two below (never taken in the handler)
int g_holders = 0;
struct sigaction g_previous[kSignalCount];

extern "C" void NotePreemptionSignal(int) { g_arrived.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

Status PreemptionSignals::Acquire(PreemptionSignals *out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_holders == 0) {
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = NotePreemptionSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (size_t i = 0; i < kSignalCount; ++i) {
      if (sigaction(kSignals[i], &action, &g_previous[i]) != 0) {
        for (size_t j = 0; j < i; ++j) sigaction(kSignals[j], &g_previous[j], nullptr);
        return Errorf(TW_INTERNAL, "TW_OPT_CATCH_PREEMPTION_SIGNALS: cannot install a handler for signal %d: %s",
                      kSignals[i], std::strerror(errno));
      }
    }
  }
  ++g_holders;
  out->held_ = true;
  out->seen_ = g_arrived.load(std::memory_order_relaxed);
  return Status();
}

PreemptionSignals::~PreemptionSignals() { Release(); }

bool PreemptionSignals::Arrived() const { return held_ && g_arrived.load(std::memory_order_relaxed) != seen_; }

void PreemptionSignals::Release() {
  if (!held_) return;
  held_ = false;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (--g_holders == 0) {
    for (size_t i = 0; i < kSignalCount; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
  }
}

}  // namespace tw
