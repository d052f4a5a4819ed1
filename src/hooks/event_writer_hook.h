// What StepCounterHook and SummarySaverHook share: the event writer they hold from begin to end — the
// one the caller gave, else the shared writer of output_dir (B27, B37), else none — flushed at end
// (B40) and dropped unflushed when the session fails.
#ifndef TRAINWATCH_HOOKS_EVENT_WRITER_HOOK_H
#define TRAINWATCH_HOOKS_EVENT_WRITER_HOOK_H

#include <memory>
#include <string>
#include <utility>

#include "session/hook.h"
#include "summary/event_writer.h"
#include "summary/writer_cache.h"

namespace tw {

class EventWriterHook : public Hook {
 public:
  Status End(Session &) override {
    std::shared_ptr<summary::EventWriter> writer = std::move(writer_);
    return writer != nullptr ? writer->Flush() : Status();
  }

  void OnError(Session &, const Status &) override { writer_.reset(); }

 protected:
  EventWriterHook(std::string name, std::shared_ptr<summary::EventWriter> given, std::string output_dir)
      : Hook(std::move(name)), given_(std::move(given)), output_dir_(std::move(output_dir)) {}

  // Called by Begin: takes this session's writer.
  Status OpenWriter() {
    writer_ = given_;
    if (writer_ == nullptr && !output_dir_.empty()) return summary::GetCachedEventWriter(output_dir_, &writer_);
    return Status();
  }

  std::shared_ptr<summary::EventWriter> writer_;  // between begin and end

 private:
  const std::shared_ptr<summary::EventWriter> given_;
  const std::string output_dir_;
};

}  // namespace tw

#endif  // TRAINWATCH_HOOKS_EVENT_WRITER_HOOK_H
