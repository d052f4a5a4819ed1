// TFRecord framing, the container of TensorBoard event files. Each record is
//   uint64 length | uint32 masked_crc32c(length) | data[length] | uint32 masked_crc32c(data)
// with integers little-endian.
#ifndef TRAINWATCH_SUMMARY_RECORD_WRITER_H
#define TRAINWATCH_SUMMARY_RECORD_WRITER_H

#include <cstddef>
#include <string>

#include "base/status.h"

namespace tw {
namespace summary {

constexpr size_t kRecordHeaderSize = 12;  // length + its CRC
constexpr size_t kRecordFooterSize = 4;   // the data's CRC

// Appends one framed record holding data[0, size) to *out.
void AppendRecord(const void *data, size_t size, std::string *out);

// Buffers framed records in memory and writes them to a file on Flush. Not thread-safe.
class RecordWriter {
 public:
  // Takes ownership of `fd`, an open, writable file; `path` names it in messages.
  RecordWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~RecordWriter();  // closes the file; buffered records not flushed are lost
  RecordWriter(const RecordWriter &) = delete;
  RecordWriter &operator=(const RecordWriter &) = delete;

  void Append(const void *data, size_t size) { AppendRecord(data, size, &buffer_); }
  void Append(const std::string &data) { Append(data.data(), data.size()); }

  // Writes the buffered records and syncs them to disk (as TF's EventsWriter::Flush). A failed write
  // leaves the file in an unknown state, so the error sticks: every later Flush returns it.
  Status Flush();

  // Flush, then close the file. Idempotent: a second Close returns the first one's status.
  Status Close();

  size_t buffered_bytes() const { return buffer_.size(); }
  const std::string &path() const { return path_; }

 private:
  int fd_;
  std::string path_;
  std::string buffer_;
  Status error_;  // sticky
};

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_RECORD_WRITER_H
