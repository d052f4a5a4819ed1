#include "summary/event_reader.h"

namespace tw {
namespace summary {

Status EventReader::Open(const std::string &path, std::unique_ptr<EventReader> *out) {
  std::unique_ptr<RecordReader> records;
  TW_RETURN_IF_ERROR(RecordReader::Open(path, &records));
  out->reset(new EventReader(std::move(records)));
  return Status();
}

Status EventReader::Next(Event *event) {
  const uint64_t offset = records_->offset();
  TW_RETURN_IF_ERROR(records_->ReadRecord(&record_));
  const Status decoded = DecodeEvent(record_.data(), record_.size(), event);
  if (!decoded.ok()) {
    return decoded.WithPrefix("record at offset " + std::to_string(offset) + " of '" + path() + "': ");
  }
  return Status();
}

}  // namespace summary
}  // namespace tw
