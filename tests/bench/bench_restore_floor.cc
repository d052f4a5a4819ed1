// What a verified restore cannot go below, next to what torch.load does at its core, in one process on
// one core: docs/performance/restore-floor.md asks a bfloat16 restore 1.5× faster than a repeated torch.load, and this
// measures whether any restore that maps, proves and writes the state could be.
//
// The anchor: read() of a file of the raw state's size (torch.load's one read of its zip file, in a
// process that has loaded it before: glibc hands the freed memory back without page faults) into a
// buffer already touched. Next to it, trainwatch's restore of the same state (CheckpointReader
// ReadInto, one thread), and the parts every all-or-nothing restore from a mapped file pays whatever
// its codec: mapping the checkpoint file and unmapping it, hashing every byte once (XXH3, what the
// proof reads), and writing the state into the variables (non-temporal stores, as the restore's join).
// Best of N runs each, milliseconds; the ratio is the anchor's time over ours (> 1: faster than it).
//
// usage: bench_restore_floor [MiB of bfloat16 state, default 32] [runs, default 30] [directory, /dev/shm]
#include <fcntl.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/file/reader.h"
#include "checkpoint/file/writer.h"
#include "checkpoint/format/xxh3.h"
#include "model_state.h"

namespace ckpt = tw::checkpoint;

namespace {

template <class F>
double BestMs(int runs, F f) {
  f();
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

__attribute__((target("avx512f"))) void StreamCopy(uint8_t *to, const uint8_t *from, size_t size) {
  for (size_t i = 0; i + 64 <= size; i += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i *>(to + i), _mm512_loadu_si512(from + i));
  }
  _mm_sfence();
}

}  // namespace

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 32;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 30;
  const std::string dir = argc > 3 ? argv[3] : "/dev/shm";
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("bench_restore_floor: needs AVX-512 (the stores of the restore's join)\n");
    return 0;
  }
  std::vector<Variable> vars = ModelState(mib << 20, TW_BFLOAT16);
  std::vector<tw::TensorRef> refs;
  std::vector<std::vector<int64_t>> shapes;
  size_t raw = 0;
  for (Variable &v : vars) shapes.push_back({v.count});
  for (size_t i = 0; i < vars.size(); ++i) {
    tw_tensor view = TW_TENSOR_INIT;
    view.dtype = TW_BFLOAT16, view.ndim = 1, view.shape = shapes[i].data(), view.data = vars[i].bytes.data();
    refs.emplace_back(view, vars[i].name);
    raw += vars[i].bytes.size();
  }
  const std::string path = dir + "/bench_restore_floor.ckpt", anchor_path = dir + "/bench_restore_floor.raw";
  ckpt::WriteOptions options;
  options.threads = 1;
  if (!ckpt::WriteCheckpoint(path, refs, options).ok()) return std::printf("cannot write %s\n", path.c_str()), 1;
  std::vector<uint8_t> state(raw);
  // Stream stores need 64-byte alignment, as the restore's join gives them.
  std::unique_ptr<uint8_t, decltype(&std::free)> aligned(static_cast<uint8_t *>(std::aligned_alloc(64, raw)),
                                                         &std::free);
  uint8_t *target = aligned.get();
  std::memset(target, 1, raw);
  size_t at = 0;
  for (const Variable &v : vars) std::memcpy(state.data() + at, v.bytes.data(), v.bytes.size()), at += v.bytes.size();
  const int anchor = ::open(anchor_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (anchor < 0 || ::write(anchor, state.data(), raw) != static_cast<ssize_t>(raw)) return 1;
  const int file = ::open(path.c_str(), O_RDONLY);
  const size_t file_size = static_cast<size_t>(::lseek(file, 0, SEEK_END));

  const double read_ms = BestMs(runs, [&] {
    if (::pread(anchor, target, raw, 0) != static_cast<ssize_t>(raw)) std::abort();
  });
  std::unique_ptr<ckpt::CheckpointReader> reader;
  const double restore_ms = BestMs(runs, [&] {
    if (!ckpt::CheckpointReader::Open(path, &reader).ok()) std::abort();
    std::vector<ckpt::CheckpointReader::Target> targets;
    for (size_t i = 0; i < vars.size(); ++i) targets.push_back({reader->Find(vars[i].name), vars[i].bytes.data()});
    if (!reader->ReadInto(targets, 1).ok()) std::abort();
    reader.reset();
  });
  const double map_ms = BestMs(runs, [&] {
    void *p = ::mmap(nullptr, file_size, PROT_READ, MAP_SHARED | MAP_POPULATE, file, 0);
    if (p == MAP_FAILED) std::abort();
    ::munmap(p, file_size);
  });
  volatile uint64_t sink = 0;
  const double hash_ms = BestMs(runs, [&] { sink = sink + ckpt::Xxh3(state.data(), file_size); });
  const double write_ms = BestMs(runs, [&] { StreamCopy(target, state.data(), raw); });
  const double floor_ms = map_ms + hash_ms + write_ms;
  std::printf("bfloat16 state %.1f MiB, checkpoint %.1f MiB (%.3f of raw), best of %d, one core, %s\n", raw / 1048576.0,
              file_size / 1048576.0, static_cast<double>(file_size) / raw, runs, dir.c_str());
  std::printf("anchor: read() of %.0f MiB into touched memory (torch.load's core)  %7.2f ms\n", raw / 1048576.0,
              read_ms);
  std::printf("trainwatch restore (ReadInto, 1 thread)                         %7.2f ms  ratio %.2f\n", restore_ms,
              read_ms / restore_ms);
  std::printf("floor of any verified restore from a mapping:                    %7.2f ms  ratio %.2f\n", floor_ms,
              read_ms / floor_ms);
  std::printf("  map + unmap the file %.2f, hash its bytes once %.2f, write the state (stream stores) %.2f\n", map_ms,
              hash_ms, write_ms);
  ::close(file), ::close(anchor);
  ::unlink(path.c_str()), ::unlink(anchor_path.c_str());
  return 0;
}
