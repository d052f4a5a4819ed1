// EventWriter (file name, first record, buffering), the per-directory writer cache (TF's
// FileWriterCache) under threads, and RecordWriter's error handling.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "scratch_dir.h"
#include "summary/event_reader.h"
#include "summary/event_writer.h"
#include "summary/record_writer.h"
#include "summary/writer_cache.h"

// Last: cmocka.h defines macros (fail, …) that clash with the standard library, and declares its
// functions without C linkage for C++.
extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

using namespace tw::summary;
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

std::vector<Event> ReadAll(const std::string &path) {
  std::unique_ptr<EventReader> reader;
  assert_true(EventReader::Open(path, &reader).ok());
  std::vector<Event> events;
  Event e;
  tw::Status status;
  while ((status = reader->Next(&e)).ok()) events.push_back(e);
  assert_int_equal(status.code(), TW_OUT_OF_RANGE);
  return events;
}

void file_is_named_like_tfs_and_starts_with_file_version(void **state) {
  std::unique_ptr<EventWriter> writer;
  const std::string logdir = Dir(state) + "/a/b";  // parents are created
  assert_true(EventWriter::Open(logdir, &writer).ok());
  const std::string name = fs::path(writer->path()).filename().string();
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  const std::string prefix = "events.out.tfevents.";  // then %010d seconds, '.', the host name
  assert_true(name.compare(0, prefix.size(), prefix) == 0);
  const std::string secs = name.substr(prefix.size(), 10);
  assert_true(secs.find_first_not_of("0123456789") == std::string::npos && secs.size() == 10);
  assert_string_equal(name.substr(prefix.size() + 10).c_str(), ("." + std::string(host)).c_str());
  assert_string_equal(fs::path(writer->path()).parent_path().c_str(), logdir.c_str());
  // On disk before anything else is written, so TensorBoard sees the run at once.
  const std::vector<Event> events = ReadAll(writer->path());
  assert_int_equal(events.size(), 1);
  assert_true(events[0].what == Event::What::kFileVersion);
  assert_string_equal(events[0].file_version.c_str(), "brain.Event:2");
  assert_true(events[0].wall_time > 1.6e9);
}

void events_are_buffered_until_max_queue(void **state) {
  std::unique_ptr<EventWriter> writer;
  EventWriterOptions options;
  options.max_queue = 5;
  options.flush_secs = 1e9;
  assert_true(EventWriter::Open(Dir(state), &writer, options).ok());
  for (int i = 0; i < 4; ++i) assert_true(writer->AddScalar("x", i, i).ok());
  assert_int_equal(ReadAll(writer->path()).size(), 1);  // still buffered
  assert_true(writer->AddScalar("x", 4, 4).ok());       // the fifth triggers the write
  assert_int_equal(ReadAll(writer->path()).size(), 6);
  assert_true(writer->AddScalar("x", 5, 5).ok());
  assert_true(writer->Flush().ok());
  assert_int_equal(ReadAll(writer->path()).size(), 7);

  options.flush_secs = 0;  // every add is past the deadline
  std::unique_ptr<EventWriter> eager;
  assert_true(EventWriter::Open(Dir(state) + "/eager", &eager, options).ok());
  assert_true(eager->AddScalar("x", 1, 1).ok());
  assert_int_equal(ReadAll(eager->path()).size(), 2);
}

void closed_writer_rejects_events(void **state) {
  std::unique_ptr<EventWriter> writer;
  assert_true(EventWriter::Open(Dir(state), &writer).ok());
  assert_true(writer->AddSessionLog(3, SessionStatus::kStop).ok());
  assert_true(writer->Close().ok());
  assert_true(writer->Close().ok());  // idempotent
  assert_true(writer->Flush().ok());  // a no-op
  const tw::Status status = writer->AddScalar("x", 1, 1);
  assert_int_equal(status.code(), TW_FAILED_PRECONDITION);
  assert_non_null(std::strstr(status.message().c_str(), "is closed"));
  const std::vector<Event> events = ReadAll(writer->path());
  assert_int_equal(events.size(), 2);  // Close flushed the session log
  assert_true(events[1].session_log.status == SessionStatus::kStop);
}

void open_rejects_a_file_as_logdir(void **state) {
  const std::string file = Dir(state) + "/plain";
  std::fclose(std::fopen(file.c_str(), "w"));
  std::unique_ptr<EventWriter> writer;
  assert_int_equal(EventWriter::Open(file, &writer).code(), TW_FAILED_PRECONDITION);
  assert_int_equal(EventWriter::Open(file + "/sub", &writer).code(), TW_IO);
  assert_int_equal(EventWriter::Open("", &writer).code(), TW_INVALID_ARGUMENT);
  assert_null(writer.get());
}

void cache_shares_one_writer_per_directory(void **state) {
  const std::string dir = Dir(state) + "/logs";
  std::shared_ptr<EventWriter> a, b, c, other;
  assert_true(GetCachedEventWriter(dir, &a).ok());
  assert_true(GetCachedEventWriter(dir + "/", &b).ok());
  assert_true(GetCachedEventWriter(Dir(state) + "/./logs", &c).ok());
  assert_true(a == b && b == c);  // the same object for every spelling of the directory
  assert_true(GetCachedEventWriter(Dir(state) + "/other", &other).ok());
  assert_true(other != a);

  // Closed → the next caller gets a new writer and a new file (same second: a suffixed name).
  const std::string first_path = a->path();
  assert_true(a->Close().ok());
  std::shared_ptr<EventWriter> reopened;
  assert_true(GetCachedEventWriter(dir, &reopened).ok());
  assert_true(reopened != a);
  assert_string_not_equal(reopened->path().c_str(), first_path.c_str());
  assert_int_equal(ReadAll(first_path).size(), 1);  // the first file was not overwritten

  // Released by everyone → closed and forgotten.
  const std::string second_path = reopened->path();
  assert_true(reopened->AddScalar("kept", 1, 1).ok());
  a.reset(), b.reset(), c.reset(), reopened.reset();
  assert_int_equal(ReadAll(second_path).size(), 2);  // destruction flushed
  std::shared_ptr<EventWriter> fresh;
  assert_true(GetCachedEventWriter(dir, &fresh).ok());
  assert_string_not_equal(fresh->path().c_str(), second_path.c_str());
}

void cache_and_writer_are_thread_safe(void **state) {
  const std::string dir = Dir(state) + "/threads";
  constexpr int kThreads = 4, kEvents = 250;
  std::vector<std::shared_ptr<EventWriter>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (!GetCachedEventWriter(dir, &seen[t]).ok()) return;
      for (int i = 0; i < kEvents; ++i) seen[t]->AddScalar("t" + std::to_string(t), i, i);
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (int t = 1; t < kThreads; ++t) assert_true(seen[t] != nullptr && seen[t] == seen[0]);
  assert_true(seen[0]->Flush().ok());
  const std::vector<Event> events = ReadAll(seen[0]->path());
  assert_int_equal(events.size(), 1 + kThreads * kEvents);
  std::vector<int> next_step(kThreads, 0);  // each thread's events in its own order
  for (size_t i = 1; i < events.size(); ++i) {
    const int t = events[i].summary[0].tag[1] - '0';
    assert_int_equal(events[i].step, next_step[t]++);
  }
}

void record_writer_errors_are_sticky(void **) {
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;  // no /dev/full here: nothing to check
  RecordWriter writer(fd, "/dev/full");
  writer.Append("abc");
  tw::Status status = writer.Flush();
  assert_int_equal(status.code(), TW_RESOURCE_EXHAUSTED);  // ENOSPC
  assert_non_null(std::strstr(status.message().c_str(), "/dev/full"));
  writer.Append("def");
  assert_int_equal(writer.Flush().code(), TW_RESOURCE_EXHAUSTED);
  assert_int_equal(writer.Close().code(), TW_RESOURCE_EXHAUSTED);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(file_is_named_like_tfs_and_starts_with_file_version, MakeTempDir, RemoveTempDir),
      cmocka_unit_test_setup_teardown(events_are_buffered_until_max_queue, MakeTempDir, RemoveTempDir),
      cmocka_unit_test_setup_teardown(closed_writer_rejects_events, MakeTempDir, RemoveTempDir),
      cmocka_unit_test_setup_teardown(open_rejects_a_file_as_logdir, MakeTempDir, RemoveTempDir),
      cmocka_unit_test_setup_teardown(cache_shares_one_writer_per_directory, MakeTempDir, RemoveTempDir),
      cmocka_unit_test_setup_teardown(cache_and_writer_are_thread_safe, MakeTempDir, RemoveTempDir),
      cmocka_unit_test(record_writer_errors_are_sticky),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
