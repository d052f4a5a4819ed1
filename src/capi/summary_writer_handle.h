// What a tw_summary_writer handle is: a reference to a shared event writer. Hook constructors that
// accept a writer take their own reference through it.
#ifndef TRAINWATCH_CAPI_SUMMARY_WRITER_HANDLE_H
#define TRAINWATCH_CAPI_SUMMARY_WRITER_HANDLE_H

#include <memory>

#include "summary/event_writer.h"

struct tw_summary_writer {
  std::shared_ptr<tw::summary::EventWriter> writer;
};

#endif  // TRAINWATCH_CAPI_SUMMARY_WRITER_HANDLE_H
