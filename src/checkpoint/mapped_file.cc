#include "checkpoint/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/regular_file.h"
#include "checkpoint/background_close.h"

namespace tw {
namespace checkpoint {

Status MappedFile::Open(const std::string &path, std::unique_ptr<MappedFile> *out) {
  int fd = -1;
  uint64_t size = 0;
  TW_RETURN_IF_ERROR(OpenRegularFile(path, "checkpoint", true, &fd, &size));
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
  if (data_ != nullptr) UnmapInBackground(const_cast<uint8_t *>(data_), size_);
}

}  // namespace checkpoint
}  // namespace tw
