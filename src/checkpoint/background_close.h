// Frees a deleted file's storage off the caller's thread. Unlinking a checkpoint (or renaming a new
// one over it) frees its pages inside that system call when nothing else holds the file: ~50 000 pages
// of a 200 MiB checkpoint on tmpfs, tens of milliseconds of system time a save would wait for. Holding
// a descriptor across the unlink defers the freeing to its close, which CloseInBackground does on a
// short-lived thread. The name is gone at once; only the space comes back a little later (and at
// process exit at the latest).
#ifndef TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H
#define TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H

namespace tw {
namespace checkpoint {

// Closes `fd` on a detached thread, or here when no thread can be started. Negative fds are ignored.
void CloseInBackground(int fd);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_BACKGROUND_CLOSE_H
