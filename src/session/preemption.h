// TW_OPT_CATCH_PREEMPTION_SIGNALS: SIGTERM and SIGUSR1 (a batch scheduler's "about to be preempted")
// are only counted, in an async-signal-safe lock-free counter; a session compares the count with the one
// it saw at creation at the end of each run. Handlers are installed while at least one session wants
// them, and the handlers found before are put back when the last such session lets go.
#ifndef TRAINWATCH_CORE_PREEMPTION_H
#define TRAINWATCH_CORE_PREEMPTION_H

#include <cstdint>

#include "base/status.h"

namespace tw {

class PreemptionSignals {
 public:
  // Installs the handlers (or shares those installed); TW_INTERNAL naming the signal when sigaction fails.
  static Status Acquire(PreemptionSignals *out);
  PreemptionSignals() = default;
  ~PreemptionSignals();
  PreemptionSignals(const PreemptionSignals &) = delete;
  PreemptionSignals &operator=(const PreemptionSignals &) = delete;

  // Whether a signal arrived since Acquire.
  bool Arrived() const;
  // Gives the handlers back (the last holder restores the previous ones); idempotent.
  void Release();

 private:
  bool held_ = false;
  uint64_t seen_ = 0;
};

}  // namespace tw

#endif  // TRAINWATCH_CORE_PREEMPTION_H
