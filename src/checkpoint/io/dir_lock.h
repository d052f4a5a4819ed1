// The advisory lock that keeps two writers out of one checkpoint directory. Two savers interleaving
// state-file updates make latest_checkpoint go backwards and orphan checkpoints, so whoever writes a
// directory (a chief session, a CheckpointSaverHook's saver, a standalone Saver) holds
// "<dir>/.trainwatch.lock" with flock(LOCK_EX | LOCK_NB) for as long as it may write there. flock
// locks belong to an open file description, so a second session in the same process is refused just
// like a second process, and the kernel releases the lock when its holder dies (a crash leaves no
// stale lock). The file holds the holder's pid and what it is ("<pid>\n<holder>\n", C24), for the
// message a second writer gets. Readers (restore only, a session that only restores, listing,
// trainwatch-ckpt) never take it.
#ifndef TRAINWATCH_CHECKPOINT_DIR_LOCK_H
#define TRAINWATCH_CHECKPOINT_DIR_LOCK_H

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace tw {
namespace checkpoint {

constexpr char kLockFileName[] = ".trainwatch.lock";

class DirectoryLock {
 public:
  // Takes `dir`'s lock. *out stays NULL (OK) when `dir` does not exist yet (nothing to protect) or
  // is not writable by this process (read-only file system, no write permission: a WARNING; nothing
  // can be saved there either, and a restore from it goes on). The lock file is opened read-write
  // without following a link, without blocking and without truncating; the pid is written only once the
  // lock is held, with `holder` ("a Saver", "a session with a CheckpointSaverHook"), which a refused
  // writer's message names. Errors: TW_FAILED_PRECONDITION ("checkpoint directory <dir> is in use: <the
  // holder> of this process (or: of another process, pid N) holds <dir>/.trainwatch.lock"), TW_PERMISSION_DENIED (the
  // directory is writable but the lock file cannot be opened read-write, e.g. another user's 0644 file: running
  // unlocked would let a second writer in), TW_INVALID_ARGUMENT (the lock file is a symbolic link, not a regular file,
  // or has more than one link), TW_IO.
  static Status Acquire(const std::string &dir, const std::string &holder, std::unique_ptr<DirectoryLock> *out);
  // Deletes the directory's spares (spare_files.h: the holder's evicted checkpoints' files, or a crashed
  // holder's; on tmpfs they hold memory), then releases the lock (the file stays: removing it would
  // race with a new holder).
  ~DirectoryLock();

  DirectoryLock(const DirectoryLock &) = delete;
  DirectoryLock &operator=(const DirectoryLock &) = delete;

  // True when `dir` is the locked directory (same device and inode, however it is spelled).
  bool Covers(const std::string &dir) const;

 private:
  DirectoryLock(std::string dir, int fd, dev_t dev, ino_t ino) : dir_(std::move(dir)), fd_(fd), dev_(dev), ino_(ino) {}

  std::string dir_;  // as Acquire was given it ("." for "")
  int fd_;
  dev_t dev_;
  ino_t ino_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_DIR_LOCK_H
