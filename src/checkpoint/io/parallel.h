// Runs independent jobs (compressing or decoding chunks) on a few threads.
#ifndef TRAINWATCH_CHECKPOINT_PARALLEL_H
#define TRAINWATCH_CHECKPOINT_PARALLEL_H

#include <cstddef>
#include <cstdint>
#include <functional>

#include "base/status.h"

namespace tw {
namespace checkpoint {

// Threads to use when the caller passes 0: one per core.
int DefaultThreadCount();

// Threads for one of `local_ranks` processes of a job sharing a machine of `machine_cores` cores, each
// free to run on `usable_cores` of them (its CPU affinity): its share of the machine, at most what it may
// use, at least one — 4 ranks on 2 cores run 4 threads, not 8 fighting for the cores, and ranks pinned
// to 2 cores each of 8 keep both. (Ranks confined together to fewer cores than the machine has, as in a
// container's cpuset, may still get more threads than their cores: under-using cores costs more.)
int ThreadsPerRank(int usable_cores, int machine_cores, int local_ranks);

// How many ranks of the job run on this machine as the launcher says (torchrun's LOCAL_WORLD_SIZE,
// Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS), or 0 when none says it.
int LocalRanksFromEnvironment();

// ThreadsPerRank for this process: its affinity, the machine's cores and `local_ranks` (0: unknown,
// then every core, as DefaultThreadCount).
int ThreadsForLocalRanks(int local_ranks);

// A number naming this machine (its host name and boot), alike in every process on it, so that the
// ranks of a job can count how many of them share a machine. 62 bits, never 0.
int64_t MachineId();

// Calls job(index, worker) for every index in [0, count) on min(threads, count) threads, the calling
// thread being worker 0; `worker` < threads lets a job use per-thread scratch without locking. Jobs are
// handed out in index order. After a job fails no new job starts; the failure with the lowest index is
// returned, so messages do not depend on scheduling. Once a job has started, a failed allocation only
// means fewer threads (a thread it cannot start leaves its jobs to the others), never a failure: jobs that
// allocate nothing cannot be stopped half-way by it. Pass a lambda as std::ref(job) for the
// std::function not to allocate.
Status ParallelFor(size_t count, int threads, const std::function<Status(size_t index, int worker)> &job);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_PARALLEL_H
