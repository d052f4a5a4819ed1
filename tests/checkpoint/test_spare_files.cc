// Recycled checkpoint files (white-box, tf-semantics C15; spare_files.h). By default an evicted
// checkpoint's file is unlinked, as TF deletes it: an outside reader copying the newest checkpoint (no
// lock) always gets one checkpoint's bytes. With SaverOptions::recycle_files (opt-in) the evicted file
// becomes the directory's spare and the next save overwrites it in place (same inode, restored
// bit-exact, truncated when shorter, with the mode the umask gives a new file); what must keep its
// bytes is never recycled (a hard-linked checkpoint, a file a reader maps); what is planted under the
// spare name is neither used, followed nor blocked on, and another user's file there is never deleted;
// a reader never sees a file being recycled; the saver drops its spares when done; a save killed while
// overwriting a spare corrupts nothing.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/file/reader.h"
#include "checkpoint/io/durable_file.h"
#include "checkpoint/io/private_file.h"
#include "checkpoint/io/spare_files.h"
#include "checkpoint/saver.h"
#include "checkpoint/state_file.h"
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

constexpr size_t kElements = 1 << 16;  // 256 KiB of float32: a few chunks, a few writes

struct Model {
  std::vector<float> w = std::vector<float>(kElements);
  int64_t shape[1] = {static_cast<int64_t>(kElements)};

  std::vector<tw::TensorRef> refs() {
    tw_tensor t = TW_TENSOR_INIT;
    t.dtype = TW_FLOAT32;
    t.ndim = 1;
    t.shape = shape;
    t.data = w.data();
    return {tw::TensorRef(t, "w")};
  }
  // Random values of `seed` (barely compressible), or zeros (a file much shorter) for seed 0.
  void Fill(unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    for (float &v : w) v = seed == 0 ? 0.0f : normal(rng);
  }
};

struct Fixture {
  scratch_dir dir;
  Model model;
  std::unique_ptr<ckpt::Saver> saver;

  // Most tests here are of the opt-in: recycling.
  explicit Fixture(bool recycle = true) {
    assert_int_equal(scratch_dir_create(&dir), 0);
    ckpt::SaverOptions options;
    options.max_to_keep = 1;
    options.recycle_files = recycle;
    assert_true(ckpt::Saver::Create(model.refs(), options, &saver).ok());
  }
  ~Fixture() {
    saver.reset();
    scratch_dir_destroy(&dir);
  }
  std::string Path(const std::string &name) const { return std::string(dir.path) + "/" + name; }
  std::string Spare() const { return Path(ckpt::SpareFileName(0)); }
  // Saves `step` with the values of `seed`.
  std::string Save(int64_t step, unsigned seed) {
    model.Fill(seed);
    std::string path;
    const tw::Status status = saver->Save(Path("model.ckpt"), step, &path);
    if (!status.ok()) fail_msg("save %lld: %s", static_cast<long long>(step), status.message().c_str());
    return path;
  }
  // Restores `path` over zeros and checks every value is the one `seed` saved (bit-exact).
  void ExpectRestores(const std::string &path, unsigned seed) {
    model.Fill(0);
    const tw::Status status = saver->Restore(path);
    if (!status.ok()) fail_msg("restore %s: %s", path.c_str(), status.message().c_str());
    Model expected;
    expected.Fill(seed);
    assert_memory_equal(model.w.data(), expected.w.data(), kElements * sizeof(float));
  }
};

struct stat Stat(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) fail_msg("%s: %s", path.c_str(), std::strerror(errno));
  return st;
}

bool Exists(const std::string &path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::string Contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The temporary files of the directory (".<name>.tw-tmp-<pid>-<n>").
std::vector<std::string> Temporaries(const scratch_dir &dir) {
  std::vector<std::string> names;
  DIR *d = opendir(dir.path);
  assert_non_null(d);
  while (const struct dirent *e = readdir(d)) {
    if (ckpt::IsTemporaryFileName(e->d_name)) names.push_back(std::string(dir.path) + "/" + e->d_name);
  }
  closedir(d);
  return names;
}

// Run once by the next flock(LOCK_SH): what happens between a reader's open and its lock.
std::function<void()> g_before_shared_lock;

// What is left to read from `fd`, to its end.
std::string ReadAll(int fd) {
  std::string bytes;
  char buffer[1 << 16];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) bytes.append(buffer, static_cast<size_t>(n));
  return bytes;
}

// An outside reader (cp, tar, rsync: a plain open and read(), no lock) copying the newest checkpoint
// the state file lists, half of it before two more saves with max_to_keep=1 and the rest after. True
// when every copy is the whole of the checkpoint it started reading, byte for byte.
bool OutsideCopiesAreWhole(Fixture &f, int rounds) {
  bool whole = true;
  f.Save(0, 100);
  for (int round = 1; round <= rounds; ++round) {
    tw::checkpoint::CheckpointState listed;
    assert_true(tw::checkpoint::LoadCheckpointState(f.dir.path, "checkpoint", &listed).ok());
    const std::string newest = listed.model_checkpoint_path;
    const std::string reference = Contents(newest);  // its bytes, right after its save
    const int fd = ::open(newest.c_str(), O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    std::string copy(reference.size() / 2, '\0');
    assert_int_equal(::read(fd, &copy[0], copy.size()), static_cast<ssize_t>(copy.size()));
    f.Save(2 * round - 1, static_cast<unsigned>(200 + round));  // evicts `newest`
    f.Save(2 * round, static_cast<unsigned>(300 + round));      // recycled, it would be overwritten here
    copy += ReadAll(fd);
    ::close(fd);
    whole = whole && copy == reference;
  }
  return whole;
}

}  // namespace

// The library's flock calls bind to this definition (the executable's comes first), so a test can act
// in the window between a reader's open and its lock.
extern "C" int flock(int fd, int operation) {
  using Flock = int (*)(int, int);
  static const Flock real = reinterpret_cast<Flock>(::dlsym(RTLD_NEXT, "flock"));
  if ((operation & LOCK_SH) != 0 && g_before_shared_lock) {
    const std::function<void()> act = std::move(g_before_shared_lock);
    g_before_shared_lock = nullptr;
    act();
  }
  return real(fd, operation);
}

static void spare_names(void **state) {
  (void)state;
  assert_string_equal(ckpt::SpareFileName(0).c_str(), ".tw-spare-0");
  assert_string_equal(ckpt::SpareFileName(12).c_str(), ".tw-spare-12");
  assert_true(ckpt::IsSpareFileName(".tw-spare-3"));
  assert_false(ckpt::IsSpareFileName(".tw-spare-"));
  assert_false(ckpt::IsSpareFileName(".tw-spare-3x"));
  assert_false(ckpt::IsSpareFileName("tw-spare-3"));
  // Hidden, and never a name the saver lists as a checkpoint or a temporary file.
  assert_false(ckpt::IsTemporaryFileName(".tw-spare-0"));
}

// C15: with max_to_keep=1 the second save evicts the first checkpoint into the spare and the third
// overwrites it: the same inode, restored bit-exact.
static void the_next_save_overwrites_the_evicted_file_c15(void **state) {
  (void)state;
  Fixture f;
  const std::string first = f.Save(1, 11);
  const ino_t first_inode = Stat(first).st_ino;
  assert_false(Exists(f.Spare()));
  const std::string second = f.Save(2, 22);
  assert_false(Exists(first));  // gone under its name, as TF deletes it (C10)
  assert_int_equal(Stat(f.Spare()).st_ino, first_inode);
  assert_int_equal(Stat(f.Spare()).st_nlink, 1);
  const ino_t second_inode = Stat(second).st_ino;
  const std::string third = f.Save(3, 33);
  assert_int_equal(Stat(third).st_ino, first_inode);
  assert_int_equal(Stat(f.Spare()).st_ino, second_inode);  // the second, evicted in turn
  assert_true(Temporaries(f.dir).empty());
  f.ExpectRestores(third, 33);
  std::unique_ptr<ckpt::CheckpointReader> reader;
  assert_true(ckpt::CheckpointReader::Open(third, &reader).ok());
  assert_true(reader->Verify().ok());
}

// C15: a spare longer than the new checkpoint is cut to it (a footer must end the file).
static void a_shorter_checkpoint_truncates_the_spare_c15(void **state) {
  (void)state;
  Fixture f;
  const std::string first = f.Save(1, 11);
  const struct stat long_file = Stat(first);
  f.Save(2, 22);
  const std::string zeros = f.Save(3, 0);
  const struct stat short_file = Stat(zeros);
  assert_int_equal(short_file.st_ino, long_file.st_ino);
  assert_true(short_file.st_size < long_file.st_size / 4);
  f.ExpectRestores(zeros, 0);
}

// C15: a user's hard link to a checkpoint keeps its bytes: the evicted name is deleted, not recycled,
// and no later save writes into it.
static void a_hard_linked_checkpoint_is_deleted_not_recycled_c15(void **state) {
  (void)state;
  Fixture f;
  const std::string first = f.Save(1, 11);
  const std::string copy = f.Path("my-copy");
  assert_int_equal(::link(first.c_str(), copy.c_str()), 0);
  const std::string bytes = Contents(copy);
  f.Save(2, 22);
  assert_false(Exists(first));
  assert_false(Exists(f.Spare()));
  assert_int_equal(Stat(copy).st_nlink, 1);
  const std::string third = f.Save(3, 33);
  assert_int_not_equal(Stat(third).st_ino, Stat(copy).st_ino);
  assert_true(Contents(copy) == bytes);
  f.ExpectRestores(copy, 11);
  f.ExpectRestores(third, 33);
}

// C15: what stands under the spare name and is not a file the saver may overwrite — a symbolic link, a
// FIFO, a directory, a hard-linked file — is never used: the save creates a fresh file without
// following, opening or blocking on it, and it stays as it was (a link's target untouched). The next
// evicted file finds the slot taken and is deleted.
static void planted_spares_are_never_used_c15(void **state) {
  (void)state;
  enum Kind { kSymlink, kFifo, kDirectory, kHardLink };
  for (Kind kind : {kSymlink, kFifo, kDirectory, kHardLink}) {
    Fixture f;
    const std::string target = f.Path("target");
    {
      std::ofstream out(target, std::ios::binary);
      out << std::string(1 << 20, 'x');  // longer than any checkpoint here
    }
    switch (kind) {
      case kSymlink: assert_int_equal(::symlink(target.c_str(), f.Spare().c_str()), 0); break;
      case kFifo: assert_int_equal(::mkfifo(f.Spare().c_str(), 0600), 0); break;
      case kDirectory: assert_int_equal(::mkdir(f.Spare().c_str(), 0700), 0); break;
      case kHardLink: assert_int_equal(::link(target.c_str(), f.Spare().c_str()), 0); break;
    }
    const struct stat planted = Stat(f.Spare());
    const std::string first = f.Save(1, 11);
    assert_int_not_equal(Stat(first).st_ino, planted.st_ino);
    f.Save(2, 22);
    assert_false(Exists(first));  // the slot is taken: deleted
    const std::string third = f.Save(3, 33);
    assert_int_not_equal(Stat(third).st_ino, planted.st_ino);
    const struct stat after = Stat(f.Spare());
    assert_int_equal(after.st_ino, planted.st_ino);
    assert_int_equal(after.st_mode, planted.st_mode);
    assert_true(Contents(target) == std::string(1 << 20, 'x'));
    assert_true(Temporaries(f.dir).empty());
    f.ExpectRestores(third, 33);
    // Dropping the saver's spares leaves what is not a regular file; the hard-linked one is a regular
    // file under the spare name and goes, its other name keeping the bytes.
    f.saver.reset();
    assert_int_equal(Exists(f.Spare()), kind != kHardLink);
    assert_true(Contents(target) == std::string(1 << 20, 'x'));
  }
}

// C15: a reader that maps an evicted checkpoint keeps its bytes: the next save finds the spare held
// (flock) and writes a fresh file, and the spare goes once the reader lets go.
static void a_mapped_evicted_file_is_never_overwritten_c15(void **state) {
  (void)state;
  Fixture f;
  const std::string first = f.Save(1, 11);
  const ino_t first_inode = Stat(first).st_ino;
  std::unique_ptr<ckpt::PrivateFile> mapped;
  assert_true(ckpt::PrivateFile::Open(first, &mapped).ok());
  const std::string bytes(reinterpret_cast<const char *>(mapped->data()), mapped->size());
  f.Save(2, 22);
  assert_int_equal(Stat(f.Spare()).st_ino, first_inode);  // evicted while mapped: a spare all the same
  const std::string third = f.Save(3, 33);
  assert_int_not_equal(Stat(third).st_ino, first_inode);
  assert_true(std::string(reinterpret_cast<const char *>(mapped->data()), mapped->size()) == bytes);
  assert_int_not_equal(Stat(f.Spare()).st_ino, first_inode);  // given up, the second evicted instead
  assert_true(Temporaries(f.dir).empty());
  mapped.reset();
  f.ExpectRestores(third, 33);
}

// C15: a file a save is recycling (it holds the exclusive lock) is reported as deleted to a reader; so
// is a checkpoint whose name some writer locks.
static void opening_a_file_being_recycled_is_not_found_c15(void **state) {
  (void)state;
  Fixture f;
  const std::string first = f.Save(1, 11);
  const ino_t first_inode = Stat(first).st_ino;
  f.Save(2, 22);
  std::unique_ptr<ckpt::DurableFile> file;
  assert_true(ckpt::DurableFile::Create(f.Path("model.ckpt-3"), &file, 0).ok());
  assert_false(Exists(f.Spare()));
  const std::vector<std::string> temps = Temporaries(f.dir);
  assert_int_equal(temps.size(), 1);
  assert_int_equal(Stat(temps[0]).st_ino, first_inode);  // the spare, taken as the temporary file
  std::unique_ptr<ckpt::PrivateFile> mapped;
  const tw::Status opened = ckpt::PrivateFile::Open(temps[0], &mapped);
  assert_int_equal(opened.code(), TW_NOT_FOUND);
  assert_non_null(std::strstr(opened.message().c_str(), "was deleted while being opened"));
  file.reset();  // never committed: the temporary file goes
  assert_true(Temporaries(f.dir).empty());

  const std::string second = f.Path("model.ckpt-2");
  const int writer = ::open(second.c_str(), O_RDONLY | O_CLOEXEC);
  assert_true(writer >= 0);
  assert_int_equal(::flock(writer, LOCK_EX | LOCK_NB), 0);
  assert_int_equal(ckpt::PrivateFile::Open(second, &mapped).code(), TW_NOT_FOUND);
  ::close(writer);
  assert_true(ckpt::PrivateFile::Open(second, &mapped).ok());
}

// C15: a reader that opened a checkpoint just before it was evicted and recycled reports it deleted
// instead of reading another checkpoint's bytes under its name. Between the reader's open of step 2 and
// its lock, saves ran: step 4 was written into step 2's file, then step 2 was saved again (the job went
// back), into another file, evicting step 4.
static void a_file_recycled_before_the_readers_lock_is_not_found_c15(void **state) {
  (void)state;
  Fixture f;
  f.Save(1, 11);
  const std::string second = f.Save(2, 22);
  const ino_t second_inode = Stat(second).st_ino;
  ino_t fourth_inode = 0;
  g_before_shared_lock = [&] {
    f.Save(3, 33);
    fourth_inode = Stat(f.Save(4, 44)).st_ino;
    f.Save(2, 55);
  };
  std::unique_ptr<ckpt::PrivateFile> mapped;
  const tw::Status opened = ckpt::PrivateFile::Open(second, &mapped);
  assert_int_equal(fourth_inode, second_inode);  // the recycling did happen in the window
  assert_int_not_equal(Stat(second).st_ino, second_inode);
  assert_int_equal(opened.code(), TW_NOT_FOUND);
  assert_non_null(std::strstr(opened.message().c_str(), "was deleted while being opened"));
  f.ExpectRestores(second, 55);
}

// C15: the spares are the saver's while it writes the directory: releasing it (a session's close) or
// destroying the saver deletes them; its checkpoints and state file stay.
static void the_saver_drops_its_spares_c15(void **state) {
  (void)state;
  Fixture f;
  f.Save(1, 11);
  const std::string second = f.Save(2, 22);
  assert_true(Exists(f.Spare()));
  f.saver->ReleaseDirectoryLocks();
  assert_false(Exists(f.Spare()));
  f.Save(3, 33);
  f.Save(4, 44);
  assert_true(Exists(f.Spare()));
  f.saver.reset();
  assert_false(Exists(f.Spare()));
  assert_true(Exists(f.Path("model.ckpt-4")));
  assert_true(Exists(f.Path("checkpoint")));
}

// C15: a save killed while overwriting a spare leaves a temporary file holding new bytes over old ones,
// which nothing lists: the previous checkpoint restores bit-exact, the next saver removes the left-over
// and its save succeeds.
static void a_save_killed_while_overwriting_a_spare_corrupts_nothing_c15(void **state) {
  (void)state;
  Fixture f;
  const std::string first = f.Save(1, 11);
  const off_t first_size = Stat(first).st_size;
  const std::string second = f.Save(2, 22);
  fflush(nullptr);
  const pid_t child = ::fork();
  assert_true(child >= 0);
  if (child == 0) {  // the save of step 3, killed after writing part of its file
    std::unique_ptr<ckpt::DurableFile> file;
    if (!ckpt::DurableFile::Create(f.Path("model.ckpt-3"), &file, 0).ok()) ::_exit(2);
    const std::string half(static_cast<size_t>(first_size / 2), '\x5a');
    if (!file->Append(half.data(), half.size()).ok()) ::_exit(3);
    ::kill(::getpid(), SIGKILL);
    ::_exit(4);
  }
  int status = 0;
  assert_int_equal(::waitpid(child, &status, 0), child);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  const std::vector<std::string> temps = Temporaries(f.dir);
  assert_int_equal(temps.size(), 1);
  assert_int_equal(Stat(temps[0]).st_size, first_size);  // the spare, half overwritten
  assert_false(Exists(f.Path("model.ckpt-3")));

  f.saver.reset();  // the next process
  ckpt::SaverOptions options;
  options.max_to_keep = 1;
  assert_true(ckpt::Saver::Create(f.model.refs(), options, &f.saver).ok());
  assert_true(f.saver->RecoverLastCheckpoints(f.dir.path).ok());
  assert_true(Temporaries(f.dir).empty());
  f.ExpectRestores(second, 22);
  const std::string third = f.Save(3, 33);
  f.ExpectRestores(third, 33);
  assert_false(Exists(second));
}

// C15 by default: an evicted checkpoint's file is unlinked, never kept as a spare, and every save
// writes a new file.
static void by_default_an_evicted_file_is_unlinked_c15(void **state) {
  (void)state;
  Fixture f(/*recycle=*/false);
  const std::string first = f.Save(1, 11);
  const int held = ::open(first.c_str(), O_RDONLY | O_CLOEXEC);  // keeps its inode from being reused
  assert_true(held >= 0);
  const ino_t first_inode = Stat(first).st_ino;
  f.Save(2, 22);
  assert_false(Exists(first));
  assert_false(Exists(f.Spare()));
  const std::string third = f.Save(3, 33);
  assert_int_not_equal(Stat(third).st_ino, first_inode);
  assert_false(Exists(f.Spare()));
  ::close(held);
  f.ExpectRestores(third, 33);
}

// C15: an outside reader without trainwatch's lock copying the newest listed checkpoint while saves run
// with max_to_keep=1 gets that checkpoint whole, as with TF or torch.save + os.remove: by default the
// evicted file it reads is unlinked, never overwritten. Recycling, asked for, overwrites it in place
// under the reader: the copy mixes two checkpoints (the risk TW_OPT_CHECKPOINT_RECYCLE_FILES states).
static void an_outside_reader_copies_one_whole_checkpoint_c15(void **state) {
  (void)state;
  {
    Fixture f(/*recycle=*/false);
    assert_true(OutsideCopiesAreWhole(f, 4));
  }
  {
    Fixture f(/*recycle=*/true);
    assert_false(OutsideCopiesAreWhole(f, 4));
  }
}

// C15: files the saver writes get the mode open(2) gives a new file under the umask (0666 & ~umask):
// under umask 077 a new checkpoint, the state file and a recycled spare made under umask 022 are all
// 0600 (the spare's mode is reset; it kept 0644 before).
static void files_get_the_mode_of_the_umask_c15(void **state) {
  (void)state;
  for (bool recycle : {false, true}) {
    Fixture f(recycle);
    const mode_t previous = ::umask(022);
    const std::string first = f.Save(1, 11);
    assert_int_equal(Stat(first).st_mode & 0777, 0644);
    const ino_t first_inode = Stat(first).st_ino;
    const int held = ::open(first.c_str(), O_RDONLY | O_CLOEXEC);  // its inode number is not reused
    assert_true(held >= 0);
    f.Save(2, 22);
    ::umask(077);
    const std::string third = f.Save(3, 33);
    assert_int_equal(Stat(third).st_ino == first_inode, recycle);  // recycled only when asked for
    assert_int_equal(Stat(third).st_mode & 0777, 0600);
    assert_int_equal(Stat(f.Path("checkpoint")).st_mode & 0777, 0600);
    std::unique_ptr<ckpt::DurableFile> part;  // a part file is a durable file of its part index's slot
    const std::string part_path = f.Path("model.ckpt-4.part-00000-of-00001");
    assert_true(ckpt::DurableFile::Create(part_path, &part, recycle ? 0 : ckpt::kNoSpareSlot).ok());
    assert_true(part->Append("part", 4).ok());
    assert_true(part->Commit().ok());
    assert_int_equal(Stat(part_path).st_mode & 0777, 0600);
    ::umask(previous);
    ::close(held);
    f.ExpectRestores(third, 33);
  }
}

// C15: a file of another user under a spare name is neither used nor deleted when the saver drops its
// spares: it was never ours. (Needs root, to give the file away.)
static void another_users_spare_is_never_deleted_c15(void **state) {
  (void)state;
  if (::geteuid() != 0) skip();
  Fixture f;
  {
    std::ofstream out(f.Spare(), std::ios::binary);
    out << std::string(1 << 20, 'y');
  }
  assert_int_equal(::chown(f.Spare().c_str(), 65534, 65534), 0);
  const struct stat planted = Stat(f.Spare());
  const std::string first = f.Save(1, 11);
  assert_int_not_equal(Stat(first).st_ino, planted.st_ino);
  f.Save(2, 22);
  const std::string third = f.Save(3, 33);
  assert_int_not_equal(Stat(third).st_ino, planted.st_ino);
  f.saver.reset();  // releases the directory: drops the saver's spares
  assert_true(Exists(f.Spare()));
  assert_int_equal(Stat(f.Spare()).st_ino, planted.st_ino);
  assert_true(Contents(f.Spare()) == std::string(1 << 20, 'y'));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(spare_names),
      cmocka_unit_test(the_next_save_overwrites_the_evicted_file_c15),
      cmocka_unit_test(a_shorter_checkpoint_truncates_the_spare_c15),
      cmocka_unit_test(a_hard_linked_checkpoint_is_deleted_not_recycled_c15),
      cmocka_unit_test(planted_spares_are_never_used_c15),
      cmocka_unit_test(a_mapped_evicted_file_is_never_overwritten_c15),
      cmocka_unit_test(opening_a_file_being_recycled_is_not_found_c15),
      cmocka_unit_test(a_file_recycled_before_the_readers_lock_is_not_found_c15),
      cmocka_unit_test(the_saver_drops_its_spares_c15),
      cmocka_unit_test(a_save_killed_while_overwriting_a_spare_corrupts_nothing_c15),
      cmocka_unit_test(by_default_an_evicted_file_is_unlinked_c15),
      cmocka_unit_test(an_outside_reader_copies_one_whole_checkpoint_c15),
      cmocka_unit_test(files_get_the_mode_of_the_umask_c15),
      cmocka_unit_test(another_users_spare_is_never_deleted_c15),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
