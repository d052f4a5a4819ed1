#include "checkpoint/mapped_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/regular_file.h"
#include "checkpoint/background_close.h"

namespace tw {
namespace checkpoint {

namespace {

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

}  // namespace

Status MappedFile::Open(const std::string &path, std::unique_ptr<MappedFile> *out) {
  int fd = -1;
  uint64_t size = 0;
  TW_RETURN_IF_ERROR(OpenRegularFile(path, "checkpoint", true, &fd, &size));
  const Status locked = LockAgainstRecycling(path, fd, &size);
  if (!locked.ok()) {
    ::close(fd);
    return locked;
  }
  const uint8_t *data = nullptr;
  if (size > 0) {
    void *map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "mmap " + path);
    }
    data = static_cast<const uint8_t *>(map);
  }
  out->reset(new MappedFile(fd, data, size));
  return Status();
}

void MappedFile::Prefault(uint64_t offset, uint64_t size) const {
#ifdef MADV_POPULATE_READ
  if (size == 0 || offset >= size_) return;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;
  const uint64_t end = std::min(offset + size, size_);
  ::madvise(const_cast<uint8_t *>(data_) + begin, static_cast<size_t>(end - begin), MADV_POPULATE_READ);
#else
  (void)offset;
  (void)size;
#endif
}

MappedFile::~MappedFile() {
  // Closed first: a deleted file's storage is then freed by the unmapping, in the background.
  ::close(fd_);
  if (data_ != nullptr) UnmapInBackground(const_cast<uint8_t *>(data_), size_);
}

}  // namespace checkpoint
}  // namespace tw
