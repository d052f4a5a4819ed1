// Unloading libtrainwatch (dlclose) while its background worker still has evicted checkpoints to free
// and a checkpoint's mapping to unmap (checkpoint/io/background_close.h): the worker is joined before the
// library's code goes, and every job is done by then. The library is loaded with dlopen, never linked.
//
// argv[1]: the path of libtrainwatch.so.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <trainwatch.h>

#include "scratch_dir.h"

// cmocka last: its macros clash with the C++ standard headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

const char *g_library = nullptr;
int g_tasks_at_start = 0;

int CountTasks() {
  DIR *d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  int count = 0;
  while (const dirent *e = ::readdir(d)) count += e->d_name[0] != '.';
  ::closedir(d);
  return count;
}

// Descriptors of this process open on something under `dir` (a deleted file shows as "<path> (deleted)").
int DescriptorsUnder(const char *dir) {
  DIR *d = ::opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int count = 0;
  while (const dirent *e = ::readdir(d)) {
    char target[4096];
    const ssize_t n = ::readlinkat(::dirfd(d), e->d_name, target, sizeof(target) - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    count += std::strncmp(target, dir, std::strlen(dir)) == 0;
  }
  ::closedir(d);
  return count;
}

// Mappings of this process of files under `dir`.
int MappingsUnder(const char *dir) {
  FILE *f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return -1;
  int count = 0;
  char line[8192];
  while (std::fgets(line, sizeof(line), f) != nullptr) count += std::strstr(line, dir) != nullptr;
  std::fclose(f);
  return count;
}

template <typename F>
void Resolve(void *library, const char *name, F *out) {
  void *symbol = ::dlsym(library, name);
  assert_non_null(symbol);
  std::memcpy(out, &symbol, sizeof(symbol));  // object pointer to function pointer, without a cast
}

// Saves past max_to_keep (each eviction hands the worker a descriptor to close) and verifies a
// checkpoint larger than 16 MiB (its mapping goes to the worker) and restores it (the decoded planes'
// slab stays the process's spare, kept_planes.h, until the unload releases it: LeakSanitizer reports
// it otherwise), then unloads at once. Twice: a library loaded again starts a worker of its own.
void UnloadWithJobsQueued(void **) {
  const int64_t count = 8 << 20;  // 32 MiB of float32 bit patterns no coder shrinks below 16 MiB
  std::vector<uint32_t> values(static_cast<size_t>(count));
  uint32_t x = 2463534242u;
  for (uint32_t &v : values) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v = x;
  }
  // Weights of a narrow range: their exponent bytes are coded, so a restore decodes and keeps them.
  std::vector<float> weights(static_cast<size_t>(count / 2));
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 0.01f * static_cast<float>((values[i] >> 8) % 1000) - 5.0f;
  for (int round = 0; round < 2; ++round) {
    scratch_dir dir;
    assert_int_equal(scratch_dir_create(&dir), 0);
    char prefix[600];
    scratch_dir_join(&dir, "model.ckpt", prefix, sizeof(prefix));
    void *library = ::dlopen(g_library, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(library);
    decltype(&tw_saver_create) saver_create;
    decltype(&tw_saver_set_max_to_keep) set_max_to_keep;
    decltype(&tw_saver_save) save;
    decltype(&tw_checkpoint_verify) verify;
    decltype(&tw_saver_restore) restore;
    decltype(&tw_saver_destroy) saver_destroy;
    Resolve(library, "tw_saver_create", &saver_create);
    Resolve(library, "tw_saver_set_max_to_keep", &set_max_to_keep);
    Resolve(library, "tw_saver_save", &save);
    Resolve(library, "tw_checkpoint_verify", &verify);
    Resolve(library, "tw_saver_restore", &restore);
    Resolve(library, "tw_saver_destroy", &saver_destroy);

    const int64_t weight_count = static_cast<int64_t>(weights.size());
    tw_tensor w[2] = {TW_TENSOR_INIT, TW_TENSOR_INIT};
    w[0].name = "w";
    w[0].dtype = TW_FLOAT32;
    w[0].data = values.data();
    w[0].ndim = 1;
    w[0].shape = &count;
    w[1].name = "weights";
    w[1].dtype = TW_FLOAT32;
    w[1].data = weights.data();
    w[1].ndim = 1;
    w[1].shape = &weight_count;
    tw_saver *saver = nullptr;
    assert_int_equal(saver_create(&saver, w, 2), TW_OK);
    assert_int_equal(set_max_to_keep(saver, 1), TW_OK);
    std::string last;
    for (int64_t step = 1; step <= 3; ++step) {
      const char *path = nullptr;
      assert_int_equal(save(&path, saver, prefix, step), TW_OK);
      last = path;
    }
    assert_int_equal(verify(last.c_str()), TW_OK);
    const std::vector<float> saved = weights;
    std::fill(weights.begin(), weights.end(), 0.0f);
    assert_int_equal(restore(saver, last.c_str()), TW_OK);
    assert_memory_equal(weights.data(), saved.data(), saved.size() * sizeof(float));
    saver_destroy(saver);
    assert_int_equal(::dlclose(library), 0);

    assert_null(::dlopen(g_library, RTLD_NOW | RTLD_NOLOAD));  // really unloaded: its code is gone
    assert_int_equal(CountTasks(), g_tasks_at_start);          // no thread left behind in it
    assert_int_equal(DescriptorsUnder(dir.path), 0);           // evicted checkpoints freed
    assert_int_equal(MappingsUnder(dir.path), 0);              // the verified file's mapping gone
    assert_int_equal(scratch_dir_count_entries(&dir, "model.ckpt-"), 1);
    // The library's fork handlers went with it: a fork calls nothing that is unmapped.
    std::fflush(nullptr);
    const pid_t child = ::fork();
    assert_true(child >= 0);
    if (child == 0) ::_exit(0);
    int status = -1;
    assert_int_equal(::waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    scratch_dir_destroy(&dir);
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LIBTRAINWATCH\n", argv[0]);
    return 2;
  }
  g_library = argv[1];
  // A thread started and ended first: a runtime that starts a helper thread of its own with the first
  // thread (TSan's) has it counted here.
  std::thread([] {}).join();
  g_tasks_at_start = CountTasks();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(UnloadWithJobsQueued),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
