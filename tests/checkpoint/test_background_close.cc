// The background worker that frees deleted checkpoints' storage and large mappings
// (checkpoint/io/background_close.h), white-box: every job is done, by one thread per process, also in a
// child of fork and while the process exits.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/io/background_close.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

// The tests fork while the worker runs and start threads in the child; TSan refuses that by default.
#if defined(__SANITIZE_THREAD__)
#define TW_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TW_TEST_TSAN 1
#endif
#endif
#ifdef TW_TEST_TSAN
extern "C" const char *__tsan_default_options() { return "die_after_fork=0"; }
#endif

namespace ckpt = tw::checkpoint;

namespace {

constexpr char kWorkerName[] = "tw-bg-free";
constexpr int kBoundSeconds = 120;  // a bound on waits for the worker, never reached unless it is broken

int g_tasks_at_start = 0;  // threads of this process before the first job

// Threads of this process, all of them (name null) or those named `name`.
int CountTasks(const char *name) {
  DIR *d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  int count = 0;
  while (const dirent *e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    if (name == nullptr) {
      ++count;
      continue;
    }
    char comm[64] = {0};
    FILE *f = std::fopen(("/proc/self/task/" + std::string(e->d_name) + "/comm").c_str(), "r");
    if (f == nullptr) continue;  // the thread just ended
    if (std::fgets(comm, sizeof(comm), f) != nullptr && std::strncmp(comm, name, std::strlen(name)) == 0 &&
        comm[std::strlen(name)] == '\n')
      ++count;
    std::fclose(f);
  }
  ::closedir(d);
  return count;
}

struct Pipe {
  int read_end = -1;
  int write_end = -1;
};

std::vector<Pipe> MakePipes(int n) {
  std::vector<Pipe> pipes(n);
  for (Pipe &p : pipes) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) std::abort();
    p = Pipe{fds[0], fds[1]};
  }
  return pipes;
}

// True once every write end of `pipes` is closed in every process (each read end reports a hang-up),
// false after kBoundSeconds. A hang-up is only reported once the last copy of the write end is gone,
// so a reused descriptor number cannot fake it. Closes the read ends.
bool AllHungUp(std::vector<Pipe> *pipes) {
  const time_t deadline = ::time(nullptr) + kBoundSeconds;
  bool all = true;
  for (Pipe &p : *pipes) {
    pollfd pfd{p.read_end, 0, 0};
    int ready = 0;
    while (all && (ready = ::poll(&pfd, 1, 1000)) <= 0) {
      if (ready < 0 && errno != EINTR) all = false;
      if (::time(nullptr) > deadline) all = false;
    }
    all = all && (pfd.revents & POLLHUP) != 0;
    ::close(p.read_end);
  }
  std::vector<Pipe>().swap(*pipes);
  return all;
}

bool Unmapped(void *addr, size_t size) {
  std::vector<unsigned char> pages(size / static_cast<size_t>(::sysconf(_SC_PAGESIZE)) + 1);
  return ::mincore(addr, size, pages.data()) != 0 && errno == ENOMEM;
}

void *MapTouched(size_t size) {
  void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::abort();
  std::memset(p, 1, size);
  return p;
}

// Forks; the child runs `body` (its result is the exit code, 0 for success) and exits with exit(), so
// the library's destructors run there too. The parent's result: the child exited with 0 within the
// bound (a crash, a std::terminate or a hang at exit fails).
template <typename Body>
bool ChildSucceeds(Body body) {
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) std::exit(body());
  const time_t deadline = ::time(nullptr) + kBoundSeconds;
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(child, &status, WNOHANG)) == 0 && ::time(nullptr) <= deadline) ::usleep(1000);
  if (done == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    return false;
  }
  return done == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// 1000 closes are all done, by one thread whatever their number; a negative fd is no job.
void ManyClosesOneWorker(void **) {
  errno = 0;
  ckpt::CloseInBackground(-1);
  assert_int_equal(errno, 0);  // not even tried
  std::vector<Pipe> pipes = MakePipes(1000);
  for (const Pipe &p : pipes) ckpt::CloseInBackground(p.write_end);
  assert_int_equal(CountTasks(kWorkerName), 1);
  assert_int_equal(CountTasks(nullptr), g_tasks_at_start + 1);
  assert_true(AllHungUp(&pipes));
  // The worker stays, asleep, for the next jobs.
  assert_int_equal(CountTasks(kWorkerName), 1);
  assert_int_equal(CountTasks(nullptr), g_tasks_at_start + 1);
}

// Mappings of 16 MiB or more are unmapped by the worker, smaller ones before the call returns.
void LargeMappingsUnmappedInBackground(void **) {
  const size_t small = 1u << 20, large = 32u << 20;
  void *p = MapTouched(small);
  ckpt::UnmapInBackground(p, small);
  assert_true(Unmapped(p, small));
  p = MapTouched(large);
  ckpt::UnmapInBackground(p, large);
  const time_t deadline = ::time(nullptr) + kBoundSeconds;
  while (!Unmapped(p, large) && ::time(nullptr) <= deadline) ::usleep(1000);
  assert_true(Unmapped(p, large));
  assert_int_equal(CountTasks(kWorkerName), 1);
}

// A child of fork has no worker until it needs one, then its own; the parent's jobs queued at the fork
// are the parent's: the child drops its copies of their descriptors, which a hang-up in the parent
// proves while the child is still alive.
void ForkChildHasItsOwnWorker(void **) {
  std::vector<Pipe> parents = MakePipes(200);
  int control[2], result[2];
  assert_int_equal(::pipe2(control, O_CLOEXEC), 0);
  assert_int_equal(::pipe2(result, O_CLOEXEC), 0);
  for (const Pipe &p : parents) ckpt::CloseInBackground(p.write_end);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  assert_true(child >= 0);
  if (child == 0) {
    std::vector<Pipe>().swap(parents);  // the parent's
    ::close(control[1]);
    char code = CountTasks(kWorkerName) == 0 ? 0 : 1;  // the parent's worker is not here
    std::vector<Pipe> own = MakePipes(100);
    for (const Pipe &p : own) ckpt::CloseInBackground(p.write_end);
    if (code == 0 && !AllHungUp(&own)) code = 2;
    if (code == 0 && CountTasks(kWorkerName) != 1) code = 3;
    if (::write(result[1], &code, 1) != 1) ::_exit(4);
    char byte;
    while (::read(control[0], &byte, 1) < 0 && errno == EINTR) {
    }
    std::exit(0);  // joins the child's worker
  }
  ::close(control[0]);
  ::close(result[1]);
  char code = -1;
  assert_int_equal(::read(result[0], &code, 1), 1);
  assert_int_equal(code, 0);
  assert_true(AllHungUp(&parents));  // with the child alive
  ::close(control[1]);
  int status = 0;
  assert_int_equal(::waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(result[0]);
  assert_int_equal(CountTasks(kWorkerName), 1);  // the parent's worker is untouched
}

// exit() while other threads keep handing in jobs: no crash, no std::terminate, no hang; every job
// queued before the worker stops is done by it or at exit, later ones inline.
void ExitWhileOtherThreadsQueue(void **) {
  assert_true(ChildSucceeds([] {
    static std::atomic<int> jobs{0};  // outlives this frame: the threads run on into exit
    for (int t = 0; t < 2; ++t) {
      std::thread([] {
        for (;;) {
          int fds[2];
          if (::pipe2(fds, O_CLOEXEC) != 0) continue;  // out of descriptors for a moment
          ckpt::CloseInBackground(fds[1]);
          ::close(fds[0]);
          jobs.fetch_add(1);
        }
      }).detach();
    }
    while (jobs.load() < 2000) std::this_thread::yield();
    return 0;  // exit() with both threads still queueing
  }));
  // The same with a large unmap queued.
  assert_true(ChildSucceeds([] {
    const size_t large = 32u << 20;
    std::thread([] {
      for (;;) ckpt::UnmapInBackground(MapTouched(16u << 20), 16u << 20);
    }).detach();
    ckpt::UnmapInBackground(MapTouched(large), large);
    return 0;
  }));
}

}  // namespace

int main(void) {
  // A thread started and ended first: a runtime that starts a helper thread of its own with the first
  // thread (TSan's) has it counted here.
  std::thread([] {}).join();
  g_tasks_at_start = CountTasks(nullptr);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ManyClosesOneWorker),
      cmocka_unit_test(LargeMappingsUnmappedInBackground),
      cmocka_unit_test(ForkChildHasItsOwnWorker),
      cmocka_unit_test(ExitWhileOtherThreadsQueue),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
