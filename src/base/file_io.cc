#include "base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace tw {

std::string JoinPath(const std::string &dir, const std::string &name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

Status MakeDirectories(const std::string &dir) {
  if (dir.empty()) return Status(TW_INVALID_ARGUMENT, "directory name is empty");
  // Create every prefix ending before a '/', then the whole path.
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string prefix = dir.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "cannot create directory '" + prefix + "'");
    }
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return ErrnoStatus(errno, "cannot stat '" + dir + "'");
  if (!S_ISDIR(st.st_mode)) {
    return Status(TW_FAILED_PRECONDITION, "'" + dir + "' exists and is not a directory");
  }
  return Status();
}

Status WriteAll(int fd, const void *data, size_t size, const std::string &path) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot write '" + path + "'");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status();
}

Status WriteFileAtomically(const std::string &path, const std::string &contents) {
  // Unique per process and call, so concurrent writers of the same path never share a temporary.
  static std::atomic<unsigned> counter{0};
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "cannot create '" + temp + "'");
  Status status = WriteAll(fd, contents.data(), contents.size(), temp);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoStatus(errno, "cannot sync '" + temp + "'");
  if (::close(fd) != 0 && status.ok()) status = ErrnoStatus(errno, "cannot close '" + temp + "'");
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus(errno, "cannot rename '" + temp + "' to '" + path + "'");
  }
  if (!status.ok()) ::unlink(temp.c_str());
  return status;
}

}  // namespace tw
