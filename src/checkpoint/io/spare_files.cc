#include "checkpoint/io/spare_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "checkpoint/io/background_close.h"
#include "checkpoint/io/path.h"

namespace tw {
namespace checkpoint {
namespace {

constexpr char kSparePrefix[] = ".tw-spare-";

// Only a regular file of this user that no other name links may be overwritten: another link is
// someone's copy of the checkpoint, another owner's file is not ours to reuse.
bool Recyclable(const struct stat &st) { return S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_uid == ::geteuid(); }

bool SameInode(const struct stat &a, const struct stat &b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The mode open(2) gives a file created with 0666 now. The umask is read from /proc/self/status:
// reading it with umask(2) sets it, for a moment, under every other thread of the process. A kernel
// that does not say (before Linux 4.7, no /proc) gets the strictest mode a umask could give, 0600.
mode_t NewFileMode() {
  constexpr mode_t kUnknownUmask = 077;
  mode_t mask = kUnknownUmask;
  if (std::FILE *status = std::fopen("/proc/self/status", "re")) {
    char line[256];
    while (std::fgets(line, sizeof(line), status) != nullptr) {
      unsigned value = 0;
      if (std::sscanf(line, "Umask: %o", &value) == 1) {
        mask = static_cast<mode_t>(value) & 0777;
        break;
      }
    }
    std::fclose(status);
  }
  return 0666 & ~mask;
}

}  // namespace

std::string SpareFileName(int slot) { return kSparePrefix + std::to_string(slot); }

bool IsSpareFileName(const std::string &name) {
  const size_t prefix = sizeof(kSparePrefix) - 1;
  if (name.size() <= prefix || name.compare(0, prefix, kSparePrefix) != 0) return false;
  for (size_t i = prefix; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  return true;
}

int RetireFile(int dir_fd, const std::string &name, int slot) {
  // Held across the unlink (or the rename), so that freeing its storage never happens here.
  const int held = ::openat(dir_fd, name.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW);
  struct stat st;
  if (slot >= 0 && held >= 0 && ::fstat(held, &st) == 0 && Recyclable(st) &&
      ::renameat2(dir_fd, name.c_str(), dir_fd, SpareFileName(slot).c_str(), RENAME_NOREPLACE) == 0) {
    ::close(held);  // still linked, as the spare: nothing is freed
    return 0;
  }
  // Not recyclable, the slot taken (EEXIST), or a file system without RENAME_NOREPLACE (EINVAL): deleted.
  const int err = ::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT ? 0 : errno;
  CloseInBackground(held);
  return err;
}

int TakeSpare(const std::string &dir, int slot, const std::string &temp_path, uint64_t *size) {
  const std::string spare = JoinPath(dir, SpareFileName(slot));
  struct stat found;
  // Anything else under the spare name (planted, or linked since) is left exactly where it is.
  if (::lstat(spare.c_str(), &found) != 0 || !Recyclable(found)) return -1;
  // Atomic: of two writers taking the same spare, the second finds it gone.
  if (::rename(spare.c_str(), temp_path.c_str()) != 0) return -1;
  // The name may have been swapped since the lstat: nothing is followed or opened blocking, and every
  // check holds for the descriptor itself.
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat opened;
  const bool examined = fd >= 0 && ::fstat(fd, &opened) == 0;
  if (examined && Recyclable(opened) && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    const int flags = ::fcntl(fd, F_GETFL);
    // The mode the file would have if this save created it, whatever umask the evicted one was made under.
    if (flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 && ::fchmod(fd, NewFileMode()) == 0) {
      *size = static_cast<uint64_t>(opened.st_size);
      return fd;
    }
  }
  // Given up (a reader still holds it, or it is not what was examined): our temp name goes when it
  // names the file this call moved there; a reader keeps its bytes through its own descriptor.
  struct stat now;
  if (::lstat(temp_path.c_str(), &now) == 0 && SameInode(now, examined ? opened : found)) {
    ::unlink(temp_path.c_str());
  }
  CloseInBackground(fd);
  return -1;
}

int DropSpares(const std::string &dir) {
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return 0;
  std::vector<std::string> spares;
  const int list_fd = ::dup(dir_fd);
  if (DIR *d = list_fd < 0 ? nullptr : ::fdopendir(list_fd)) {
    while (const struct dirent *entry = ::readdir(d)) {
      struct stat st;
      // Another user's file under a spare name was never one of ours: it stays.
      if (IsSpareFileName(entry->d_name) && ::fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISREG(st.st_mode) && st.st_uid == ::geteuid()) {
        spares.push_back(entry->d_name);
      }
    }
    ::closedir(d);
  } else if (list_fd >= 0) {
    ::close(list_fd);
  }
  int dropped = 0;
  for (const std::string &name : spares) dropped += RetireFile(dir_fd, name, kNoSpareSlot) == 0 ? 1 : 0;
  ::close(dir_fd);
  return dropped;
}

}  // namespace checkpoint
}  // namespace tw
