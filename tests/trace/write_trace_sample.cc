// Writes the Chrome trace that check_trace_file.py parses with Python's json module.
// usage: write_trace_sample DIR — prints the trace's path. Keep in step with check_trace_file.py.
#include <cstdio>

#include "trace/trace_writer.h"

using namespace tw::trace;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  TraceWriter trace;
  trace.SetProcessName(1, "trainwatch");
  trace.SetThreadName(1, 1, "session");
  trace.SetThreadName(1, 2, "checkpoint writer");

  auto span = [&](const char *name, const char *category, int64_t tid, double start, double duration) {
    TraceSpan s;
    s.name = name;
    s.category = category;
    s.pid = 1;
    s.tid = tid;
    s.start_us = start;
    s.duration_us = duration;
    return s;
  };
  trace.AddSpan(span("before_run/StepCounterHook", "hook", 1, 1000.0, 2.5));
  TraceSpan step = span("step_fn", "step", 1, 1002.5, 1500.125);
  step.args = {TraceArg::Number("global_step", 100)};
  trace.AddSpan(step);
  TraceSpan save = span("checkpoint save", "checkpoint", 2, 1100.0, 40000.0);
  save.args = {TraceArg::String("path", "/tmp/model.ckpt-100"), TraceArg::Number("bytes", 1.5e9)};
  trace.AddSpan(save);
  trace.AddSpan(span("na\xc3\xafve \"quoted\"\n\ttab\\ \x01 \xe2\x82\xac", "hook", 1, 3000.0, 1.0));
  trace.AddSpan(span("bad utf-8 \xff\xc0\x80 end", "hook", 1, 3001.0, -5.0));  // clamped to 0

  const std::string path = TimelinePath(argv[1], 100);
  const tw::Status status = trace.WriteFile(path);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  std::printf("%s\n", path.c_str());
  return 0;
}
