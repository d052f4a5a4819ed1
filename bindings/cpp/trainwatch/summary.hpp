// trainwatch/summary.hpp — part of the C++ facade (bindings/cpp/trainwatch.hpp, whose comment gives its
// rules): summary writers and event readers: TensorBoard event files (trainwatch/summary.h).
#ifndef TRAINWATCH_HPP_SUMMARY_HPP
#define TRAINWATCH_HPP_SUMMARY_HPP

#include "common.hpp"

namespace trainwatch {

// ------------------------------------------------------------------------------------------------
// Summaries (TensorBoard event files)
// ------------------------------------------------------------------------------------------------

// A handle on the shared event-file writer of a directory.
class SummaryWriter {
 public:
  explicit SummaryWriter(const std::string &logdir) {
    detail::call([&] { return tw_summary_writer_open(&writer_, logdir.c_str()); });
  }
  SummaryWriter(const SummaryWriter &) = delete;
  SummaryWriter &operator=(const SummaryWriter &) = delete;
  ~SummaryWriter() { tw_summary_writer_destroy(writer_); }

  void add_scalar(const std::string &tag, int64_t step, double value) {
    detail::call([&] { return tw_summary_writer_add_scalar(writer_, tag.c_str(), step, value); });
  }
  void add_histogram(const std::string &tag, int64_t step, const Tensor &values) {
    const tw_tensor t = values.c_tensor();
    detail::call([&] { return tw_summary_writer_add_histogram(writer_, tag.c_str(), step, &t); });
  }
  // `status` is a tw_session_log_status.
  void add_session_log(int64_t step, int status, const std::string &checkpoint_path = std::string(),
                       const std::string &msg = std::string()) {
    detail::call([&] {
      return tw_summary_writer_add_session_log(writer_, step, static_cast<tw_session_log_status>(status),
                                               checkpoint_path.c_str(), msg.c_str());
    });
  }
  // `serialized` holds the bytes of a Summary protobuf (TF's add_summary(bytes)).
  void add_summary(int64_t step, const std::string &serialized) {
    detail::call([&] { return tw_summary_writer_add_summary(writer_, step, serialized.data(), serialized.size()); });
  }
  void flush() {
    detail::call([&] { return tw_summary_writer_flush(writer_); });
  }
  void close() {
    detail::call([&] { return tw_summary_writer_close(writer_); });
  }
  std::string path() const { return tw_summary_writer_path(writer_); }
  tw_summary_writer *handle() const noexcept { return writer_; }

 private:
  tw_summary_writer *writer_ = nullptr;
};

namespace detail {
inline tw_summary_writer *handle_of(const SummaryWriter *writer) {
  return writer == nullptr ? nullptr : writer->handle();
}
}  // namespace detail

// One decoded event; only scalar values of a summary are kept.
struct Event {
  int kind = TW_EVENT_NONE;
  double wall_time = 0;
  int64_t step = 0;
  std::vector<std::string> tags;  // every Summary.Value's tag
  std::vector<double> scalars;    // simple_value, NaN for a value that is not a scalar
  int session_log_status = 0;
  std::string checkpoint_path;
  std::string message;
};

class EventReader {
 public:
  explicit EventReader(const std::string &path) {
    detail::call([&] { return tw_event_reader_open(&reader_, path.c_str()); });
  }
  EventReader(const EventReader &) = delete;
  EventReader &operator=(const EventReader &) = delete;
  ~EventReader() { tw_event_reader_destroy(reader_); }

  // False after the last event.
  bool next(Event &out) {
    tw_event e;
    tw_event_init(&e);
    const tw_status status = tw_event_reader_next(&e, reader_);
    if (status == TW_OUT_OF_RANGE) return false;
    if (status != TW_OK) throw Error(status, tw_last_error_message());
    out = Event();
    out.kind = e.kind;
    out.wall_time = e.wall_time;
    out.step = e.step;
    for (size_t i = 0; i < e.value_count; ++i) {
      const tw_summary_value &value = *e.values[i];
      out.tags.emplace_back(value.tag);
      out.scalars.push_back(value.kind == TW_SUMMARY_VALUE_SCALAR ? value.simple_value
                                                                  : std::numeric_limits<double>::quiet_NaN());
    }
    out.session_log_status = e.session_log_status;
    out.checkpoint_path = e.checkpoint_path != nullptr ? e.checkpoint_path : "";
    out.message = e.message != nullptr ? e.message : "";
    return true;
  }

 private:
  tw_event_reader *reader_ = nullptr;
};

}  // namespace trainwatch

#endif  // TRAINWATCH_HPP_SUMMARY_HPP
