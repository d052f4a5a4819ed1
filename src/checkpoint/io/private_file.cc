#include "checkpoint/io/private_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <new>
#include <utility>

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

// Anonymous memory for `size` bytes, mapped (MAP_NORESERVE: only the pages a read loads are used),
// huge pages asked for: 2 MiB pages fault 512× less often. NULL when no address space is left
// (RLIMIT_AS).
uint8_t *NewBuffer(uint64_t size) {
  if (size > SIZE_MAX - kHugePage) return nullptr;
  void *buffer = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (buffer == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  if (size >= 2 * kHugePage) ::madvise(buffer, static_cast<size_t>(size), MADV_HUGEPAGE);
#endif
  return static_cast<uint8_t *>(buffer);
}

void DeleteBuffer(uint8_t *buffer, uint64_t size) { ::munmap(buffer, static_cast<size_t>(size)); }

// One buffer of at most kSpareBytes kept for the process's next read, as KeptPlanes keeps its slabs:
// fresh memory every restore costs a page fault, a zeroed page and a cgroup charge per page, as much as
// the copy. Kept MADV_FREE: the kernel may take its pages back under memory pressure; if it does not,
// a repeated restore reads into it without a fault. Freed when the library is unloaded.
constexpr uint64_t kSpareBytes = 256u << 20;

class SpareBuffer {
 public:
  ~SpareBuffer() {
    if (data_ != nullptr) DeleteBuffer(data_, capacity_);
  }
  // The spare when it holds `size` bytes (*capacity: its size), else NULL.
  uint8_t *Take(uint64_t size, uint64_t *capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (data_ == nullptr || capacity_ < size) return nullptr;
    uint8_t *data = data_;
    *capacity = capacity_;
    data_ = nullptr;
    return data;
  }
  // Keeps `data` (capacity bytes) as the spare if it is larger than the one kept; frees the other.
  void Give(uint8_t *data, uint64_t capacity) {
    if (capacity <= kSpareBytes) {
#ifdef MADV_FREE
      ::madvise(data, static_cast<size_t>(capacity), MADV_FREE);
#endif
      std::lock_guard<std::mutex> lock(mutex_);
      if (data_ == nullptr || capacity_ < capacity) {
        std::swap(data, data_);
        std::swap(capacity, capacity_);
      }
    }
    if (data != nullptr) DeleteBuffer(data, capacity);
  }

 private:
  std::mutex mutex_;
  uint8_t *data_ = nullptr;
  uint64_t capacity_ = 0;
};

SpareBuffer &Spare() {
  static SpareBuffer spare;
  return spare;
}

}  // namespace

Status PrivateFile::Open(const std::string &path, std::unique_ptr<PrivateFile> *out) {
  int fd = -1;
  uint64_t size = 0;
  TW_RETURN_IF_ERROR(OpenRegularFile(path, "checkpoint", true, &fd, &size));
  // The object first, so that whatever fails later (an allocation throwing included) is undone by its
  // destructor.
  std::unique_ptr<PrivateFile> file;
  try {
    file.reset(new PrivateFile(fd, path, nullptr, 0, 0));
  } catch (const std::bad_alloc &) {
    ::close(fd);
    throw;
  }
  TW_RETURN_IF_ERROR(LockAgainstRecycling(path, fd, &size));
  file->size_ = file->capacity_ = size;
  if (size > 0 && (file->data_ = Spare().Take(size, &file->capacity_)) == nullptr &&
      (file->data_ = NewBuffer(size)) == nullptr) {
    return Status(TW_RESOURCE_EXHAUSTED,
                  "out of memory for the " + std::to_string(size) + " bytes of checkpoint " + path);
  }
  *out = std::move(file);
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
  if (data_ != nullptr) Spare().Give(data_, capacity_);
}

}  // namespace checkpoint
}  // namespace tw
