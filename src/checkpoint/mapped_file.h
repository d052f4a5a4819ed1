// A read-only memory map of a whole file: the reader verifies and decodes chunks straight from the
// page cache, without copying them into buffers first. A checkpoint file is never modified under its
// name, but once evicted by a saver that recycles files (opt-in) a later save overwrites it in place
// (spare_files.h, C15), which a mapping would show. So the mapping holds flock(LOCK_SH) on the file for its whole life,
// and a writer recycles a file only with flock(LOCK_EX | LOCK_NB): a mapped file is never overwritten or truncated
// (truncating it in place from elsewhere would raise SIGBUS, as with any mmap reader). A file being recycled, or
// recycled between the open and the lock, is reported as deleted.
#ifndef TRAINWATCH_CHECKPOINT_MAPPED_FILE_H
#define TRAINWATCH_CHECKPOINT_MAPPED_FILE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace tw {
namespace checkpoint {

class MappedFile {
 public:
  // Errors: TW_NOT_FOUND (no such file; or "<path> was deleted while being opened": a save is
  // recycling it, or `path` names another file once the lock is held), TW_INVALID_ARGUMENT (not a
  // regular file: a directory, FIFO, device..., refused without blocking; see base/regular_file.h),
  // TW_IO.
  static Status Open(const std::string &path, std::unique_ptr<MappedFile> *out);
  ~MappedFile();  // releases the lock, and unmaps (large mappings in the background)

  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return data_; }
  // Maps the pages of [offset, offset + size) in one system call instead of a page fault every few
  // pages (~6000 per 200 MiB read); workers call it for the range they are about to read. A hint:
  // failure (an old kernel) only leaves the faults to happen.
  void Prefault(uint64_t offset, uint64_t size) const;
  uint64_t size() const { return size_; }

 private:
  MappedFile(int fd, const uint8_t *data, uint64_t size) : fd_(fd), data_(data), size_(size) {}

  int fd_;  // holds the shared lock
  const uint8_t *data_;
  uint64_t size_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_MAPPED_FILE_H
