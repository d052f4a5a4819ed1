// TraceWriter: JSON escaping and order, the timeline file's name, atomic writes and their errors.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include "scratch_dir.h"
#include "trace/trace_writer.h"

// Last: cmocka.h defines macros (fail, …) that clash with the standard library, and declares its
// functions without C linkage for C++.
extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

using namespace tw::trace;
namespace fs = std::filesystem;

namespace {

// Each test's directory (tests/common/scratch_dir.h), handed to the test as its state.
int MakeTempDir(void **state) {
  auto *dir = new scratch_dir;
  if (scratch_dir_create(dir) != 0) {
    delete dir;
    return -1;
  }
  *state = dir;
  return 0;
}

int RemoveTempDir(void **state) {
  auto *dir = static_cast<scratch_dir *>(*state);
  scratch_dir_destroy(dir);
  delete dir;
  return 0;
}

std::string Dir(void **state) { return static_cast<scratch_dir *>(*state)->path; }

void trace_json_escapes_and_orders(void **state) {
  TraceWriter trace;
  trace.SetProcessName(1, "trainer");
  trace.SetThreadName(1, 7, "main");
  TraceSpan span;
  span.name = "a\"b\\c\n\x01\xff";  // quote, backslash, newline, control byte, invalid UTF-8
  span.category = "hook";
  span.pid = 1;
  span.tid = 7;
  span.start_us = 10.5;
  span.duration_us = -3;  // clamped
  span.args = {TraceArg::String("k", "v"), TraceArg::Number("n", 2.5), TraceArg::Number("bad", std::nan(""))};
  trace.AddSpan(span);
  const std::string json = trace.ToJson();
  assert_non_null(std::strstr(json.c_str(), "\"name\":\"a\\\"b\\\\c\\n\\u0001\\ufffd\""));
  assert_non_null(std::strstr(json.c_str(), "\"dur\":0.000"));
  assert_non_null(std::strstr(json.c_str(), "\"bad\":\"nan\""));
  assert_true(json.find("process_name") < json.find("\"ph\":\"X\""));  // metadata first
  assert_int_equal(trace.span_count(), 1);

  const std::string path = TimelinePath(Dir(state), 42);
  assert_string_equal(fs::path(path).filename().c_str(), "timeline-42.json");
  assert_true(trace.WriteFile(path).ok());
  assert_true(fs::file_size(path) == json.size());
  int entries = 0;
  for (const auto &entry : fs::directory_iterator(Dir(state))) entries += entry.is_regular_file();
  assert_int_equal(entries, 1);  // no temporary left behind
  trace.ClearSpans();
  assert_int_equal(trace.span_count(), 0);
  assert_int_equal(trace.WriteFile(Dir(state) + "/missing/dir/t.json").code(), TW_IO);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(trace_json_escapes_and_orders, MakeTempDir, RemoveTempDir),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
