#include "summary/record_reader.h"

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/regular_file.h"
#include "summary/crc32c.h"
#include "summary/record_writer.h"

namespace tw {
namespace summary {

static uint64_t LoadLittleEndian(const char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

Status RecordReader::Open(const std::string &path, std::unique_ptr<RecordReader> *out) {
  int fd = -1;
  uint64_t size = 0;
  TW_RETURN_IF_ERROR(OpenRegularFile(path, "event file", true, &fd, &size));
  std::FILE *file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus(err, "cannot open '" + path + "'");
  }
  out->reset(new RecordReader(file, path));
  return Status();
}

RecordReader::~RecordReader() { std::fclose(file_); }

Status RecordReader::Corrupt(const std::string &what) const {
  return Status(TW_DATA_LOSS, what + " in '" + path_ + "' at offset " + std::to_string(offset_));
}

size_t RecordReader::ReadUpTo(size_t size, std::string *out) {
  constexpr size_t kStep = size_t{1} << 20;
  out->clear();
  while (out->size() < size) {
    const size_t start = out->size();
    const size_t want = std::min(kStep, size - start);
    out->resize(start + want);
    const size_t got = std::fread(&(*out)[start], 1, want, file_);
    out->resize(start + got);
    if (got < want) break;
  }
  return out->size();
}

Status RecordReader::ReadRecord(std::string *record) {
  const off_t start = static_cast<off_t>(offset_);
  std::string header;
  const size_t header_bytes = ReadUpTo(kRecordHeaderSize, &header);
  // Whatever happens below, the next call starts again at this record.
  auto rewind = [&] {
    std::clearerr(file_);
    ::fseeko(file_, start, SEEK_SET);
  };
  if (std::ferror(file_)) {
    rewind();
    return ErrnoStatus(errno, "cannot read '" + path_ + "'");
  }
  if (header_bytes == 0) return Status(TW_OUT_OF_RANGE, "end of '" + path_ + "'");
  if (header_bytes < kRecordHeaderSize) {
    rewind();
    return Corrupt("truncated record header");
  }
  const uint64_t length = LoadLittleEndian(header.data(), 8);
  if (UnmaskCrc32c(static_cast<uint32_t>(LoadLittleEndian(header.data() + 8, 4))) != Crc32c(header.data(), 8)) {
    rewind();
    return Corrupt("record length CRC mismatch");
  }
  if (length > SIZE_MAX - kRecordFooterSize) {
    rewind();
    return Corrupt("record length too large");
  }
  std::string body;
  const size_t body_size = static_cast<size_t>(length) + kRecordFooterSize;
  if (ReadUpTo(body_size, &body) < body_size) {
    rewind();
    return Corrupt("truncated record (length " + std::to_string(length) + ")");
  }
  const uint32_t stored = static_cast<uint32_t>(LoadLittleEndian(body.data() + length, 4));
  if (UnmaskCrc32c(stored) != Crc32c(body.data(), static_cast<size_t>(length))) {
    rewind();
    return Corrupt("record data CRC mismatch");
  }
  body.resize(static_cast<size_t>(length));
  *record = std::move(body);
  offset_ += kRecordHeaderSize + body_size;
  return Status();
}

}  // namespace summary
}  // namespace tw
