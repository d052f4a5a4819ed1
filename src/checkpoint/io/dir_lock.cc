#include "checkpoint/io/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "base/regular_file.h"
#include "checkpoint/io/path.h"
#include "checkpoint/io/spare_files.h"

namespace tw {
namespace checkpoint {
namespace {

// What the current holder wrote into the lock file ("<pid>\n<holder>\n"): its pid (0 when unknown) and
// what it is ("" when unknown, as in a lock file of a version that wrote the pid alone).
struct Holder {
  long pid = 0;
  std::string what;
};

Holder ReadHolder(int fd) {
  char text[256] = {0};
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  Holder holder;
  if (n <= 0) return holder;
  char *end = nullptr;
  holder.pid = std::strtol(text, &end, 10);
  if (*end == '\n') {
    const char *what = end + 1;
    holder.what.assign(what, std::strcspn(what, "\n"));
  }
  return holder;
}

// "a Saver of this process", "a session with a CheckpointSaverHook of another process (pid 12)".
std::string Describe(const Holder &holder) {
  if (holder.pid == static_cast<long>(::getpid())) {
    return (holder.what.empty() ? std::string("another session or saver") : holder.what) + " of this process";
  }
  std::string who = holder.what.empty() ? std::string("another process") : holder.what + " of another process";
  if (holder.pid > 0) who += " (pid " + std::to_string(holder.pid) + ")";
  return who;
}

}  // namespace

Status DirectoryLock::Acquire(const std::string &dir, const std::string &holder, std::unique_ptr<DirectoryLock> *out) {
  out->reset();
  const std::string where = dir.empty() ? "." : dir;
  const std::string path = JoinPath(where, kLockFileName);
  struct stat dir_stat;
  if (::stat(where.c_str(), &dir_stat) != 0) {
    if (errno == ENOENT) return Status();
    return ErrnoStatus(errno, "stat checkpoint directory " + where);
  }
  // O_NOFOLLOW | O_NONBLOCK: a symbolic link or FIFO planted as the lock file neither redirects the
  // write of our pid nor blocks the open. No O_TRUNC: nothing is written before the checks below and
  // the lock hold (a planted hard link's target is never touched).
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return Status(TW_INVALID_ARGUMENT, "lock file " + path + " is a symbolic link");
    if (err != EACCES && err != EROFS && err != EPERM) return ErrnoStatus(err, "open lock file " + path);
    // Nothing can be written into a directory this process cannot write: reading goes on unlocked.
    if (err == EROFS || ::faccessat(AT_FDCWD, where.c_str(), W_OK, AT_EACCESS) != 0) {
      Log(TW_LOG_WARNING, "Cannot create %s (%s): checkpoint directory %s is not writable and is used unlocked",
          path.c_str(), std::strerror(err), where.c_str());
      return Status();
    }
    // A writable directory whose lock file this process cannot open (another user's): going on unlocked
    // would let a second writer in unnoticed.
    return Status(TW_PERMISSION_DENIED, "lock file " + path + " cannot be opened for writing (" + std::strerror(err) +
                                            "): without it another writer of checkpoint directory " + where +
                                            " would go unnoticed (remove the file, or use another directory)");
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus(err, "stat lock file " + path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(TW_INVALID_ARGUMENT,
                  "lock file " + path + " is " + FileTypeName(st.st_mode) + ", not a regular file");
  }
  if (st.st_nlink != 1) {
    ::close(fd);
    return Status(TW_INVALID_ARGUMENT, "lock file " + path + " has " + std::to_string(st.st_nlink) +
                                           " links: it is another file's name too, which writing the "
                                           "holder's pid would change (remove it)");
  }
  int locked;
  do {
    locked = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (locked != 0 && errno == EINTR);
  if (locked != 0) {
    const int err = errno;
    const Holder current = ReadHolder(fd);
    ::close(fd);
    if (err != EWOULDBLOCK) return ErrnoStatus(err, "lock " + path);
    return Status(TW_FAILED_PRECONDITION,
                  "checkpoint directory " + where + " is in use: " + Describe(current) +
                      " is saving checkpoints there and holds " + path +
                      "; two writers in one directory would overwrite each other's checkpoints and "
                      "state file (close that writer first, or use another directory)");
  }
  const std::string record = std::to_string(::getpid()) + "\n" + holder + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, record.data(), record.size(), 0) != static_cast<ssize_t>(record.size())) {
    Log(TW_LOG_WARNING, "Cannot write the holder's pid into %s: %s", path.c_str(), std::strerror(errno));
  }
  out->reset(new DirectoryLock(where, fd, dir_stat.st_dev, dir_stat.st_ino));
  return Status();
}

DirectoryLock::~DirectoryLock() {
  // The holder's spares go while the lock still keeps other writers out: never one another saver made.
  DropSpares(dir_);
  ::close(fd_);
}

bool DirectoryLock::Covers(const std::string &dir) const {
  struct stat st;
  return ::stat(dir.empty() ? "." : dir.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

}  // namespace checkpoint
}  // namespace tw
