// One event writer per log directory, shared by everyone who writes there (TF's FileWriterCache), so
// that hooks writing to the same directory append to one file instead of racing on several.
#ifndef TRAINWATCH_SUMMARY_WRITER_CACHE_H
#define TRAINWATCH_SUMMARY_WRITER_CACHE_H

#include <memory>
#include <string>

#include "base/status.h"
#include "summary/event_writer.h"

namespace tw {
namespace summary {

// The open writer of `logdir`, creating the directory and the writer when there is none. Directories
// are compared by their canonical path, so "logs", "./logs/" and "/abs/logs" share a writer.
// The cache holds no reference of its own: once the last holder releases a writer it is closed, and
// the next call opens a new file (as does a call after the shared writer was closed). Thread-safe.
// Errors: those of EventWriter::Open.
Status GetCachedEventWriter(const std::string &logdir, std::shared_ptr<EventWriter> *out);

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_WRITER_CACHE_H
