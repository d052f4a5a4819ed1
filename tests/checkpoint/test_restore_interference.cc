// A checkpoint changed by another program during a restore (C21): rewritten in place with random bytes
// or with another checkpoint's bytes, truncated to nothing or to half. Between the proof and the write
// (RestorePlan's Prove and Fill, the two steps a restore takes) none of it may be seen: the restore
// writes exactly what it proved. Racing restores in a loop, each restore either fails with
// TW_DATA_LOSS leaving every variable byte as it was, or succeeds with exactly one checkpoint's values.
// Never a signal: each case runs in a child process, which must exit normally.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/format/format.h"
#include "checkpoint/restore_plan.h"
#include "checkpoint/saver.h"
#include "restore_model.h"
#include "scratch_dir.h"

extern "C" {
#include <cmocka.h>
}

namespace ckpt = tw::checkpoint;

namespace {

std::vector<uint8_t> ReadAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Replaces the file's bytes in place (same inode, as an outside program writing into it would).
void Overwrite(int fd, const std::vector<uint8_t> &bytes) {
  if (::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) std::abort();
  if (::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) std::abort();
}

// Random bytes over the chunks (between header and index), in place.
void Scribble(int fd, size_t file_size, std::mt19937 *random) {
  std::vector<uint8_t> noise(file_size - ckpt::kHeaderSize - ckpt::kFooterSize);
  for (uint8_t &byte : noise) byte = static_cast<uint8_t>((*random)());
  if (::pwrite(fd, noise.data(), noise.size() / 2, ckpt::kHeaderSize) < 0) std::abort();
}

// Runs `child` in a child process; true when it exited normally with 0. Everything that starts threads
// (saves, restores) runs in the child: the test process stays single-threaded, so that it may fork
// (ThreadSanitizer refuses threads in the child of a multi-threaded process).
template <typename Child>
bool InChild(Child child) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return false;
  if (WIFSIGNALED(status)) print_message("# child killed by signal %d\n", WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) print_message("# child exited %d\n", WEXITSTATUS(status));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct Checkpoints {
  scratch_dir dir;
  RestoreModel model;
  std::unique_ptr<ckpt::Saver> saver;
  std::vector<uint8_t> first, second;  // the files of two saves with other values
  std::vector<uint8_t> first_values, second_values, sentinel;
  std::string target;  // the file restores read, rewritten by the tests

  Checkpoints() {
    assert_int_equal(scratch_dir_create(&dir), 0);
    ckpt::SaverOptions options;
    options.write.chunk_bytes = 4096;
    options.write.threads = 4;
    assert_true(ckpt::Saver::Create(model.refs(), options, &saver).ok());
    std::string path;
    model.Fill(1);
    first_values = model.Bytes();
    assert_true(saver->Save(std::string(dir.path) + "/model.ckpt", 1, &path).ok());
    first = ReadAll(path);
    model.Fill(2);
    second_values = model.Bytes();
    assert_true(saver->Save(std::string(dir.path) + "/model.ckpt", 2, &path).ok());
    second = ReadAll(path);
    model.Sentinel();
    sentinel = model.Bytes();
    target = std::string(dir.path) + "/target";
  }
  ~Checkpoints() { scratch_dir_destroy(&dir); }

  int OpenTarget() {
    const int fd = ::open(target.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    Overwrite(fd, first);
    return fd;
  }

  // The plan of a restore of `target` into the model's variables (`refs` must outlive it).
  bool OpenPlan(const std::vector<tw::TensorRef> &refs, std::unique_ptr<ckpt::RestorePlan> *plan) const {
    std::vector<ckpt::RestoreTarget> targets;
    for (const tw::TensorRef &ref : refs) targets.push_back({&ref, nullptr});
    bool misfit = false;
    return ckpt::RestorePlan::Open(target, targets, {}, nullptr, &misfit, plan).ok();
  }
};

// Runs `body` on fresh checkpoints and the target file open read-write, in a child (InChild).
template <typename Body>
bool InChildOnTarget(Body body) {
  return InChild([&] {
    Checkpoints c;
    const int fd = c.OpenTarget();
    const int result = body(&c, fd);
    ::close(fd);
    return result;
  });
}

enum class Interference { kScribble, kOtherCheckpoint, kTruncateToZero, kTruncateToHalf };

// Proves a restore of `target`, lets `interference` happen to the file, then fills: the variables must
// get exactly the proven (first) checkpoint's values.
int ProveInterfereFill(Checkpoints *c, int fd, Interference interference) {
  const std::vector<tw::TensorRef> refs = c->model.refs();
  std::unique_ptr<ckpt::RestorePlan> plan;
  if (!c->OpenPlan(refs, &plan)) return 2;
  if (!plan->Prove(4).ok()) return 3;
  std::mt19937 random(7);
  switch (interference) {
    case Interference::kScribble: Scribble(fd, c->first.size(), &random); break;
    case Interference::kOtherCheckpoint: Overwrite(fd, c->second); break;
    case Interference::kTruncateToZero: (void)!::ftruncate(fd, 0); break;
    case Interference::kTruncateToHalf: (void)!::ftruncate(fd, static_cast<off_t>(c->first.size() / 2)); break;
  }
  if (!plan->Fill().ok()) return 4;
  return c->model.Bytes() == c->first_values ? 0 : 5;  // 5: values the proof never saw
}

void file_changed_between_proof_and_write_is_not_seen(void **) {
  for (Interference interference : {Interference::kScribble, Interference::kOtherCheckpoint,
                                    Interference::kTruncateToZero, Interference::kTruncateToHalf}) {
    print_message("# interference %d\n", static_cast<int>(interference));
    assert_true(InChildOnTarget([&](Checkpoints *c, int fd) { return ProveInterfereFill(c, fd, interference); }));
  }
}

// Truncated after the plan opened the file and before its proof read the chunks: a short read, refused
// naming the file, with nothing written.
int TruncateBeforeProof(Checkpoints *c, int fd) {
  const std::vector<tw::TensorRef> refs = c->model.refs();
  std::unique_ptr<ckpt::RestorePlan> plan;
  if (!c->OpenPlan(refs, &plan)) return 2;
  if (::ftruncate(fd, static_cast<off_t>(c->first.size() / 2)) != 0) return 3;
  const tw::Status proven = plan->Prove(4);
  std::fprintf(stderr, "# %s\n", proven.message().c_str());
  if (proven.code() != TW_DATA_LOSS) return 4;
  if (proven.message().find("checkpoint " + c->target + " was truncated while being read") == std::string::npos) {
    return 5;
  }
  return c->model.Bytes() == c->sentinel ? 0 : 6;
}

void file_truncated_before_the_proof_is_refused(void **) { assert_true(InChildOnTarget(TruncateBeforeProof)); }

// Restores in a loop while another thread rewrites the file in place (the other checkpoint's bytes,
// random bytes, a truncation) and puts it back.
int RestoresWhileRewritten(Checkpoints *c, int fd) {
  std::atomic<bool> done{false};
  std::thread rewriter([&] {
    std::mt19937 random(11);
    for (unsigned i = 0; !done.load(); ++i) {
      switch (i % 4) {
        case 0: Overwrite(fd, c->second); break;
        case 1: Scribble(fd, c->first.size(), &random); break;
        case 2: (void)!::ftruncate(fd, static_cast<off_t>(random() % c->first.size())); break;
        case 3: Overwrite(fd, c->first); break;
      }
    }
  });
  int result = 0, restored = 0, refused = 0;
  for (int i = 0; i < 300 && result == 0; ++i) {
    c->model.Sentinel();
    const tw::Status status = c->saver->Restore(c->target);
    const std::vector<uint8_t> values = c->model.Bytes();
    if (status.ok()) {
      ++restored;
      if (values != c->first_values && values != c->second_values) result = 6;  // a mix, reported as OK
    } else {
      ++refused;
      if (status.code() != TW_DATA_LOSS) {
        std::fprintf(stderr, "unexpected: %s\n", status.message().c_str());
        result = 7;
      } else if (values != c->sentinel) {
        result = 8;  // a failed restore wrote something
      }
    }
  }
  done.store(true);
  rewriter.join();
  std::fprintf(stderr, "# %d restored, %d refused\n", restored, refused);
  return result;
}

void restores_racing_an_outside_rewriter(void **) { assert_true(InChildOnTarget(RestoresWhileRewritten)); }

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(file_changed_between_proof_and_write_is_not_seen),
      cmocka_unit_test(file_truncated_before_the_proof_is_refused),
      cmocka_unit_test(restores_racing_an_outside_rewriter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
