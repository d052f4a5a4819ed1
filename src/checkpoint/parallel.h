// Runs independent jobs (compressing or decoding chunks) on a few threads.
#ifndef TRAINWATCH_CHECKPOINT_PARALLEL_H
#define TRAINWATCH_CHECKPOINT_PARALLEL_H

#include <cstddef>
#include <functional>

#include "base/status.h"

namespace tw {
namespace checkpoint {

// Threads to use when the caller passes 0: one per core.
int DefaultThreadCount();

// Calls job(index, worker) for every index in [0, count) on min(threads, count) threads, the calling
// thread being worker 0; `worker` < threads lets a job use per-thread scratch without locking. Jobs are
// handed out in index order. After a job fails no new job starts; the failure with the lowest index is
// returned, so messages do not depend on scheduling.
Status ParallelFor(size_t count, int threads, const std::function<Status(size_t index, int worker)> &job);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_PARALLEL_H
