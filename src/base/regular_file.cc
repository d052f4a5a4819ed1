#include "base/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tw {

const char *FileTypeName(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO (named pipe)";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "a special file";
  }
}

Status OpenRegularFile(const std::string &path, const char *what, bool follow_symlinks, int *fd, uint64_t *size) {
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one.
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_symlinks ? 0 : O_NOFOLLOW);
  const int opened = ::open(path.c_str(), flags);
  if (opened < 0) {
    const int err = errno;
    if (err == ENOENT) return Status(TW_NOT_FOUND, std::string(what) + " " + path + " does not exist");
    if (err == ELOOP && !follow_symlinks) {
      return Status(TW_INVALID_ARGUMENT, std::string(what) + " " + path + " is a symbolic link, not a regular file");
    }
    // No file can have this name: a component too long, one that is not a directory, a loop of links.
    if (err == ENAMETOOLONG || err == ENOTDIR || err == ELOOP) {
      return Status(TW_NOT_FOUND, std::string(what) + " " + path + " cannot exist: " + std::strerror(err));
    }
    if (err == ENXIO) {  // a socket, or a device without a driver
      return Status(TW_INVALID_ARGUMENT, std::string(what) + " " + path + " is not a regular file");
    }
    return ErrnoStatus(err, "open " + std::string(what) + " " + path);
  }
  struct stat st;
  if (::fstat(opened, &st) != 0) {
    const int err = errno;
    ::close(opened);
    return ErrnoStatus(err, "stat " + std::string(what) + " " + path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(opened);
    return Status(TW_INVALID_ARGUMENT,
                  std::string(what) + " " + path + " is " + FileTypeName(st.st_mode) + ", not a regular file");
  }
  const int status_flags = ::fcntl(opened, F_GETFL);
  if (status_flags >= 0) ::fcntl(opened, F_SETFL, status_flags & ~O_NONBLOCK);
  *fd = opened;
  *size = static_cast<uint64_t>(st.st_size);
  return Status();
}

Status ReadRegularFile(const std::string &path, const char *what, uint64_t max_bytes, std::string *out) {
  int fd = -1;
  uint64_t size = 0;
  TW_RETURN_IF_ERROR(OpenRegularFile(path, what, true, &fd, &size));
  const auto too_big = [&] {
    return Status(TW_INVALID_ARGUMENT,
                  std::string(what) + " " + path + " is larger than the " + std::to_string(max_bytes) + "-byte limit");
  };
  if (size > max_bytes) {
    ::close(fd);
    return too_big();
  }
  std::string text;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "read " + std::string(what) + " " + path);
    }
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return too_big();
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  *out = std::move(text);
  return Status();
}

}  // namespace tw
