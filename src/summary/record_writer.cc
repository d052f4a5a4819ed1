#include "summary/record_writer.h"

#include <unistd.h>

#include <cerrno>

#include "base/file_io.h"
#include "summary/crc32c.h"

namespace tw {
namespace summary {

static void AppendLittleEndian(std::string *out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void AppendRecord(const void *data, size_t size, std::string *out) {
  const size_t header_start = out->size();
  AppendLittleEndian(out, size, 8);
  AppendLittleEndian(out, MaskCrc32c(Crc32c(out->data() + header_start, 8)), 4);
  out->append(static_cast<const char *>(data), size);
  AppendLittleEndian(out, MaskCrc32c(Crc32c(data, size)), 4);
}

RecordWriter::~RecordWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status RecordWriter::Flush() {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status(TW_FAILED_PRECONDITION, "'" + path_ + "' is closed");
  if (buffer_.empty()) return Status();
  error_ = WriteAll(fd_, buffer_.data(), buffer_.size(), path_);
  buffer_.clear();
  if (error_.ok() && ::fdatasync(fd_) != 0) error_ = ErrnoStatus(errno, "cannot sync '" + path_ + "'");
  return error_;
}

Status RecordWriter::Close() {
  if (fd_ < 0) return error_;
  Flush();  // a failure is kept in error_
  if (::close(fd_) != 0 && error_.ok()) error_ = ErrnoStatus(errno, "cannot close '" + path_ + "'");
  fd_ = -1;
  return error_;
}

}  // namespace summary
}  // namespace tw
