// Frees a deleted file's storage off the caller's thread. Unlinking a checkpoint (or renaming a new
// one over it) frees its pages inside that system call when nothing else holds the file: ~50 000 pages
// of a 200 MiB checkpoint on tmpfs, tens of milliseconds of system time a save would wait for. Holding
// a descriptor across the unlink defers the freeing to its close, which CloseInBackground does on a
// short-lived thread. The name is gone at once; only the space comes back a little later (and at
// process exit at the latest). Unmapping a large file mapping is the same kind of work: a restore
// from tmpfs maps every page of the checkpoint one by one (~20 000 per 100 MiB), and tearing that
// down (~3 ms per 100 MiB) would come after the variables are written.
#ifndef TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H
#define TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H

#include <cstddef>

namespace tw {
namespace checkpoint {

// Closes `fd` on a detached thread, or here when no thread can be started. Negative fds are ignored.
void CloseInBackground(int fd);
// Unmaps [addr, addr + size) (a whole mapping) on a detached thread when it is large, else here.
void UnmapInBackground(void *addr, size_t size);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H
