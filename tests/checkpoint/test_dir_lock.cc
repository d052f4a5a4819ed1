// The directory's writer lock (white-box, tf-semantics C16; dir_lock.h) cannot be bypassed or abused:
// a lock file the writer cannot open read-write in a directory it can write refuses the writer instead
// of letting it run unlocked; a symbolic link or a hard link planted as the lock file is refused and
// what it points at keeps its bytes; a directory the process cannot write at all stays readable
// (restore) without a lock. The permission cases run as an unprivileged user in a child process, as
// root bypasses permission bits.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/io/dir_lock.h"
#include "checkpoint/saver.h"
#include "scratch_dir.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

constexpr uid_t kNobody = 65534;

struct Scratch {
  scratch_dir dir;
  Scratch() { assert_int_equal(scratch_dir_create(&dir), 0); }
  ~Scratch() { scratch_dir_destroy(&dir); }
  std::string Path(const std::string &name) const { return std::string(dir.path) + "/" + name; }
  std::string Lock() const { return Path(ckpt::kLockFileName); }
};

std::string Contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Write(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// Codes a child reports (0: as expected).
enum ChildResult { kAsExpected = 0, kWrongCode = 1, kWrongMessage = 2, kLocked = 3, kFailed = 4, kUnreachable = 5 };

// Runs `body` in a child process as user and group 65534 and returns its exit code (the body's
// result), or -1 when the child could not drop privileges or died. The test is skipped when that user
// cannot reach `dir` (a $TMPDIR only root may enter).
int RunAsNobody(const std::string &dir, const std::function<int()> &body) {
  fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setresgid(kNobody, kNobody, kNobody) != 0 || ::setresuid(kNobody, kNobody, kNobody) != 0) ::_exit(100);
    if (::access(dir.c_str(), X_OK) != 0) ::_exit(kUnreachable);
    ::_exit(body());
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  if (WEXITSTATUS(status) == kUnreachable) skip();
  return WEXITSTATUS(status);
}

}  // namespace

// A saver over four floats at `w` (shape held by the caller).
static std::unique_ptr<ckpt::Saver> FourFloatSaver(float *w, int64_t *shape) {
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.ndim = 1;
  shape[0] = 4;
  t.shape = shape;
  t.data = w;
  std::unique_ptr<ckpt::Saver> saver;
  if (!ckpt::Saver::Create({tw::TensorRef(t, "w")}, ckpt::SaverOptions(), &saver).ok()) return nullptr;
  return saver;
}

// C16: another user's 0644 lock file in a directory this process can write (a shared directory): the
// lock cannot be opened read-write, and the writer is refused with TW_PERMISSION_DENIED naming the file,
// instead of running unlocked next to a second writer. A saver's save fails the same way, writing
// nothing.
static void a_lock_file_that_cannot_be_opened_read_write_refuses_the_writer_c16(void **state) {
  (void)state;
  if (::geteuid() != 0) skip();
  Scratch s;
  assert_int_equal(::chmod(s.dir.path, 0777), 0);  // anyone may write the directory
  Write(s.Lock(), "1\n");
  assert_int_equal(::chmod(s.Lock().c_str(), 0644), 0);  // root's lock file: others can only read it
  const std::string lock = s.Lock();
  const std::string dir = s.dir.path;
  const auto acquire = [&]() -> int {
    std::unique_ptr<ckpt::DirectoryLock> held;
    const tw::Status status = ckpt::DirectoryLock::Acquire(dir, "a Saver", &held);
    if (held) return kLocked;
    if (status.code() != TW_PERMISSION_DENIED) return kWrongCode;
    return status.message().find(lock) == std::string::npos ? kWrongMessage : kAsExpected;
  };
  assert_int_equal(RunAsNobody(dir, acquire), kAsExpected);
  const auto save = [&]() -> int {
    float w[4] = {1, 2, 3, 4};
    int64_t shape[1];
    const std::unique_ptr<ckpt::Saver> saver = FourFloatSaver(w, shape);
    std::string path;
    if (saver == nullptr) return kFailed;
    if (saver->Save(dir + "/model.ckpt", 1, &path).code() != TW_PERMISSION_DENIED) return kWrongCode;
    struct stat st;
    return ::lstat((dir + "/model.ckpt-1").c_str(), &st) == 0 ? kFailed : kAsExpected;
  };
  assert_int_equal(RunAsNobody(dir, save), kAsExpected);
  assert_true(Contents(s.Lock()) == "1\n");
}

// C16: a directory this process cannot write at all (read-only) is read without the lock: nothing can
// be saved there anyway, and a restore from it goes on.
static void a_directory_that_cannot_be_written_is_read_unlocked_c16(void **state) {
  (void)state;
  if (::geteuid() != 0) skip();
  Scratch s;
  float w[4] = {1, 2, 3, 4};
  int64_t shape[1];
  {
    const std::unique_ptr<ckpt::Saver> saver = FourFloatSaver(w, shape);
    std::string path;
    assert_non_null(saver.get());
    assert_true(saver->Save(std::string(s.dir.path) + "/model.ckpt", 1, &path).ok());
  }
  assert_int_equal(::unlink(s.Lock().c_str()), 0);
  assert_int_equal(::chmod(s.Path("model.ckpt-1").c_str(), 0644), 0);  // readable by others, whatever the umask
  assert_int_equal(::chmod(s.dir.path, 0755), 0);                      // root's directory: others may only read it
  const std::string dir = s.dir.path;
  const auto restore = [&]() -> int {
    std::unique_ptr<ckpt::DirectoryLock> held;
    if (!ckpt::DirectoryLock::Acquire(dir, "a Saver", &held).ok()) return kWrongCode;
    if (held) return kLocked;
    float restored[4] = {0, 0, 0, 0};
    int64_t restored_shape[1];
    const std::unique_ptr<ckpt::Saver> saver = FourFloatSaver(restored, restored_shape);
    if (saver == nullptr || !saver->Restore(dir + "/model.ckpt-1").ok()) return kFailed;
    return std::memcmp(restored, w, sizeof(w)) == 0 ? kAsExpected : kFailed;
  };
  assert_int_equal(RunAsNobody(dir, restore), kAsExpected);
}

// C16: a symbolic link planted as the lock file is refused, never followed: its target keeps its bytes.
static void a_symbolic_link_as_the_lock_is_refused_c16(void **state) {
  (void)state;
  Scratch s;
  Scratch outside;
  const std::string target = outside.Path("precious");
  Write(target, "precious bytes\n");
  assert_int_equal(::symlink(target.c_str(), s.Lock().c_str()), 0);
  std::unique_ptr<ckpt::DirectoryLock> held;
  const tw::Status status = ckpt::DirectoryLock::Acquire(s.dir.path, "a Saver", &held);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_non_null(std::strstr(status.message().c_str(), "symbolic link"));
  assert_null(held.get());
  assert_true(Contents(target) == "precious bytes\n");
}

// C16: a hard link planted as the lock file (another name of a file elsewhere) is refused before
// anything is written: the file it links keeps its bytes (the holder's pid is never written into it).
static void a_hard_link_as_the_lock_is_refused_and_its_target_kept_c16(void **state) {
  (void)state;
  Scratch s;
  const std::string target = s.Path("precious");  // a hard link cannot cross file systems
  Write(target, "precious bytes\n");
  assert_int_equal(::link(target.c_str(), s.Lock().c_str()), 0);
  std::unique_ptr<ckpt::DirectoryLock> held;
  const tw::Status status = ckpt::DirectoryLock::Acquire(s.dir.path, "a Saver", &held);
  assert_int_equal(status.code(), TW_INVALID_ARGUMENT);
  assert_non_null(std::strstr(status.message().c_str(), s.Lock().c_str()));
  assert_non_null(std::strstr(status.message().c_str(), "2 links"));
  assert_null(held.get());
  assert_true(Contents(target) == "precious bytes\n");
}

// C16: the lock file is opened without truncating it: what it held stays until the lock is held, and
// then holds the holder's pid and what it is (C24).
static void the_pid_is_written_only_once_the_lock_is_held_c16(void **state) {
  (void)state;
  Scratch s;
  Write(s.Lock(), "12345678901234567890\n");
  std::unique_ptr<ckpt::DirectoryLock> first;
  assert_true(ckpt::DirectoryLock::Acquire(s.dir.path, "a Saver", &first).ok());
  assert_non_null(first.get());
  const std::string pid = std::to_string(::getpid()) + "\na Saver\n";
  assert_true(Contents(s.Lock()) == pid);
  std::unique_ptr<ckpt::DirectoryLock> second;  // refused: it must not have emptied the holder's pid
  const tw::Status refused = ckpt::DirectoryLock::Acquire(s.dir.path, "a Saver", &second);
  assert_int_equal(refused.code(), TW_FAILED_PRECONDITION);
  assert_true(Contents(s.Lock()) == pid);
}

// C24: a refused writer is told what holds the directory — in this process and from another one —
// so that a user whose own session never saves is not told that "another session" does.
static void a_refused_writer_is_told_what_holds_the_lock_c24(void **state) {
  (void)state;
  Scratch s;
  std::unique_ptr<ckpt::DirectoryLock> held;
  assert_true(ckpt::DirectoryLock::Acquire(s.dir.path, "a session with a CheckpointSaverHook", &held).ok());
  std::unique_ptr<ckpt::DirectoryLock> second;
  const tw::Status here = ckpt::DirectoryLock::Acquire(s.dir.path, "a Saver", &second);
  assert_int_equal(here.code(), TW_FAILED_PRECONDITION);
  assert_non_null(std::strstr(here.message().c_str(), "a session with a CheckpointSaverHook of this process"));
  assert_null(std::strstr(here.message().c_str(), "a Saver"));
  const std::string expected =
      "a session with a CheckpointSaverHook of another process (pid " + std::to_string(::getpid()) + ")";
  fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    std::unique_ptr<ckpt::DirectoryLock> other;
    const tw::Status there = ckpt::DirectoryLock::Acquire(s.dir.path, "a Saver", &other);
    if (there.code() != TW_FAILED_PRECONDITION) ::_exit(kWrongCode);
    ::_exit(std::strstr(there.message().c_str(), expected.c_str()) != nullptr ? kAsExpected : kWrongMessage);
  }
  int status = 0;
  assert_int_equal(::waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), kAsExpected);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_lock_file_that_cannot_be_opened_read_write_refuses_the_writer_c16),
      cmocka_unit_test(a_directory_that_cannot_be_written_is_read_unlocked_c16),
      cmocka_unit_test(a_symbolic_link_as_the_lock_is_refused_c16),
      cmocka_unit_test(a_hard_link_as_the_lock_is_refused_and_its_target_kept_c16),
      cmocka_unit_test(the_pid_is_written_only_once_the_lock_is_held_c16),
      cmocka_unit_test(a_refused_writer_is_told_what_holds_the_lock_c24),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
