#include "checkpoint/private_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "base/regular_file.h"

namespace tw {
namespace checkpoint {

namespace {

constexpr size_t kHugePage = 2u << 20;

// Takes the shared lock that keeps writers from recycling the open file `fd` (spare_files.h), then
// checks that `path` still names it: a save that took it as a spare (or recycled it and finished)
// between the open and the lock has overwritten or is overwriting it. *size receives its size under
// the lock.
Status LockAgainstRecycling(const std::string &path, int fd, uint64_t *size) {
  const Status deleted(TW_NOT_FOUND, "checkpoint " + path + " was deleted while being opened");
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    // A writer holds it: it is being recycled. Any other failure (a file system without flock) leaves
    // the file unprotected, as every file was before recycling.
    if (errno == EWOULDBLOCK) return deleted;
  }
  struct stat opened, named;
  if (::fstat(fd, &opened) != 0) return ErrnoStatus(errno, "stat checkpoint " + path);
  if (::stat(path.c_str(), &named) != 0 || named.st_dev != opened.st_dev || named.st_ino != opened.st_ino) {
    return deleted;
  }
  *size = static_cast<uint64_t>(opened.st_size);
  return Status();
}

// Anonymous memory for `size` bytes, from the C++ allocator (so that a failing allocation is one more
// std::bad_alloc point to the tests that inject them), aligned for huge pages: fresh pages every
// restore, and 2 MiB ones fault 512× less often.
uint8_t *NewBuffer(uint64_t size) {
  if (size > SIZE_MAX - kHugePage) return nullptr;
  void *buffer = ::operator new(static_cast<size_t>(size), std::align_val_t(kHugePage), std::nothrow);
#ifdef MADV_HUGEPAGE
  if (buffer != nullptr && size >= 2 * kHugePage) ::madvise(buffer, static_cast<size_t>(size), MADV_HUGEPAGE);
#endif
  return static_cast<uint8_t *>(buffer);
}

}  // namespace

Status PrivateFile::Open(const std::string &path, std::unique_ptr<PrivateFile> *out) {
  int fd = -1;
  uint64_t size = 0;
  TW_RETURN_IF_ERROR(OpenRegularFile(path, "checkpoint", true, &fd, &size));
  const Status locked = LockAgainstRecycling(path, fd, &size);
  if (!locked.ok()) {
    ::close(fd);
    return locked;
  }
  uint8_t *data = nullptr;
  if (size > 0 && (data = NewBuffer(size)) == nullptr) {
    ::close(fd);
    return Status(TW_RESOURCE_EXHAUSTED,
                  "out of memory for the " + std::to_string(size) + " bytes of checkpoint " + path);
  }
  out->reset(new (std::nothrow) PrivateFile(fd, path, data, size));
  if (*out == nullptr) {
    ::operator delete(data, std::align_val_t(kHugePage));
    ::close(fd);
    return Status(TW_RESOURCE_EXHAUSTED, "out of memory opening checkpoint " + path);
  }
  return Status();
}

Status PrivateFile::Load(uint64_t offset, uint64_t size) {
  if (offset > size_ || size > size_ - offset) {
    return Status(TW_INVALID_ARGUMENT, "bytes [" + std::to_string(offset) + ", +" + std::to_string(size) +
                                           ") are outside checkpoint " + path_);
  }
  while (size > 0) {
    const ssize_t n = ::pread(fd_, data_ + offset, static_cast<size_t>(size), static_cast<off_t>(offset));
    if (n == 0) return Status(TW_DATA_LOSS, "checkpoint " + path_ + " was truncated while being read");
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read checkpoint " + path_);
    }
    offset += static_cast<uint64_t>(n);
    size -= static_cast<uint64_t>(n);
  }
  return Status();
}

void PrivateFile::Release(uint64_t offset, uint64_t size) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = (offset + page - 1) / page * page;  // data_ is page-aligned
  const uint64_t end = (offset + size) / page * page;
  if (end > begin) ::madvise(data_ + begin, static_cast<size_t>(end - begin), MADV_DONTNEED);
}

PrivateFile::~PrivateFile() {
  ::close(fd_);
  if (data_ != nullptr) ::operator delete(data_, std::align_val_t(kHugePage));
}

}  // namespace checkpoint
}  // namespace tw
