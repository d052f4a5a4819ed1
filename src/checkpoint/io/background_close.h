// Frees a deleted file's storage off the caller's thread. Unlinking a checkpoint (or renaming a new
// one over it) frees its pages inside that system call when nothing else holds the file: ~50 000 pages
// of a 200 MiB checkpoint on tmpfs, tens of milliseconds of system time a save would wait for. Holding
// a descriptor across the unlink defers the freeing to its close, which CloseInBackground hands to the
// process's background worker. The name is gone at once; only the space comes back a little later (and
// at process exit at the latest). Unmapping a large file mapping is the same kind of work: a restore
// from tmpfs maps every page of the checkpoint one by one (~20 000 per 100 MiB), and tearing that
// down (~3 ms per 100 MiB) would come after the variables are written.
//
// The worker is one thread per process, started on first use, asleep when there is nothing to free;
// it does the jobs in the order they came. At dlclose of the library or at exit it finishes the job in
// hand and is joined, and what is still queued is done then (inline from there on). A child of fork
// has no worker until its first job; it closes and unmaps its copies of the parent's queued jobs right
// after the fork (a long-lived child would otherwise hold a deleted checkpoint's storage).
#ifndef TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H
#define TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H

#include <cstddef>

namespace tw {
namespace checkpoint {

// Closes `fd` on the background worker, or here when it cannot take the job (no thread or memory, the
// library unloading). Negative fds are ignored.
void CloseInBackground(int fd);
// Unmaps [addr, addr + size) (a whole mapping) on the background worker when it is 16 MiB or more and
// the worker takes it, else here.
void UnmapInBackground(void *addr, size_t size);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H
