#include "checkpoint/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tw {
namespace checkpoint {

Status MappedFile::Open(const std::string &path, std::unique_ptr<MappedFile> *out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status(TW_NOT_FOUND, "checkpoint " + path + " does not exist");
    return ErrnoStatus(err, "open " + path);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus(err, "stat " + path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(TW_INVALID_ARGUMENT, path + " is not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
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
  ::close(fd);  // the mapping keeps the file open
  out->reset(new MappedFile(data, size));
  return Status();
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t *>(data_), size_);
}

}  // namespace checkpoint
}  // namespace tw
