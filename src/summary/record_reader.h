// Reads TFRecord files (see record_writer.h), checking both CRCs of every record.
#ifndef TRAINWATCH_SUMMARY_RECORD_READER_H
#define TRAINWATCH_SUMMARY_RECORD_READER_H

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "base/status.h"

namespace tw {
namespace summary {

class RecordReader {
 public:
  // Errors: TW_NOT_FOUND (no such file), TW_INVALID_ARGUMENT (not a regular file: a FIFO, directory,
  // device..., refused without blocking), TW_IO.
  static Status Open(const std::string &path, std::unique_ptr<RecordReader> *out);
  ~RecordReader();
  RecordReader(const RecordReader &) = delete;
  RecordReader &operator=(const RecordReader &) = delete;

  // Reads the next record's data into *record. TW_OUT_OF_RANGE at the end of the file (after the
  // last complete record); TW_DATA_LOSS for a CRC mismatch or a record cut short, with a message naming
  // the file and the record's offset. After TW_DATA_LOSS the reader stays at that record.
  Status ReadRecord(std::string *record);

  // Offset of the next record to read.
  uint64_t offset() const { return offset_; }
  const std::string &path() const { return path_; }

 private:
  RecordReader(std::FILE *file, std::string path) : file_(file), path_(std::move(path)) {}

  // Reads exactly `size` bytes (growing *out as data arrives, so a corrupt length cannot make it
  // allocate more than the file holds). Returns the number of bytes read.
  size_t ReadUpTo(size_t size, std::string *out);
  Status Corrupt(const std::string &what) const;

  std::FILE *file_;
  std::string path_;
  uint64_t offset_ = 0;
};

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_RECORD_READER_H
