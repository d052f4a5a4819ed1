// Reads the events of an event file back: TFRecord framing with CRC checks, then Event decoding.
#ifndef TRAINWATCH_SUMMARY_EVENT_READER_H
#define TRAINWATCH_SUMMARY_EVENT_READER_H

#include <memory>
#include <string>

#include "base/status.h"
#include "summary/event.h"
#include "summary/record_reader.h"

namespace tw {
namespace summary {

// Not thread-safe; distinct readers are independent.
class EventReader {
 public:
  // Errors: TW_NOT_FOUND, TW_INVALID_ARGUMENT (not a regular file, e.g. a FIFO: refused at once), TW_IO.
  static Status Open(const std::string &path, std::unique_ptr<EventReader> *out);

  // The next event. TW_OUT_OF_RANGE after the last one; TW_DATA_LOSS naming the file and the record's
  // offset for a bad CRC, a truncated record or a record that is not an Event.
  Status Next(Event *event);

  const std::string &path() const { return records_->path(); }

 private:
  explicit EventReader(std::unique_ptr<RecordReader> records) : records_(std::move(records)) {}

  std::unique_ptr<RecordReader> records_;
  std::string record_;
};

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_EVENT_READER_H
