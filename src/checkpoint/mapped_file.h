// A read-only memory map of a whole file: the reader verifies and decodes chunks straight from the
// page cache, without copying them into buffers first. Checkpoint files are never modified after their
// rename, so the mapping cannot shrink underneath a reader (truncating a mapped file in place from
// another process would raise SIGBUS, as with any mmap reader).
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
  // Errors: TW_NOT_FOUND (no such file), TW_INVALID_ARGUMENT (not a regular file: a directory, FIFO,
  // device..., refused without blocking; see base/regular_file.h), TW_IO.
  static Status Open(const std::string &path, std::unique_ptr<MappedFile> *out);
  ~MappedFile();

  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  MappedFile(const uint8_t *data, uint64_t size) : data_(data), size_(size) {}

  const uint8_t *data_;
  uint64_t size_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_MAPPED_FILE_H
