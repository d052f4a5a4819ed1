// Checkpoint benchmark: a 256 MiB model-like state (Gaussian weights σ=0.02, Adam-like moments m and
// v = m²) in float32 and in bfloat16 — save and restore throughput, file size ratio, and the stall of
// an asynchronous save (Snapshot::Capture) against a plain memcpy — in /dev/shm (tmpfs) and in a
// directory on the disk, each next to torch.save, torch.save + fsync and torch.load of the same state
// in the same directory (anchors/anchor_torch_save.py), measured in the same run (docs/performance/checkpoint.md's four
// cells). The other anchors of anchors/anchor_ckpt.py (docs/performance/checkpoint.md) are printed first.
//
// usage: bench_checkpoint [MiB] [disk directory]   (default 256 MiB and /var/tmp). TW_BENCH_NO_ANCHORS=1
// skips the anchors (for profiling); TW_BENCH_CHUNK_KIB overrides the chunk size.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/saver.h"
#include "checkpoint/snapshot.h"
#include "model_state.h"

namespace ckpt = tw::checkpoint;

namespace {

constexpr int kRepeats = 3;

double Seconds(const std::function<void()> &f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double CpuSeconds() {
  struct rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Best wall time of kRepeats runs after an untimed one (the steady state of a job that saves again and
// again: a save deletes the file its retention evicted, C15's default); *cpu (optional) receives the CPU seconds (all
// threads) of that run, which tells a slow run on a busy machine apart from a slow implementation.
double Best(const std::function<void()> &f, double *cpu = nullptr) {
  f();
  double best = 1e30;
  for (int i = 0; i < kRepeats; ++i) {
    const double cpu_before = CpuSeconds();
    const double wall = Seconds(f);
    if (wall < best) {
      best = wall;
      if (cpu != nullptr) *cpu = CpuSeconds() - cpu_before;
    }
  }
  return best;
}

struct Anchors {
  double torch_save = 0, torch_save_fsync = 0, torch_load = 0;  // GB/s
};

std::string Run(const std::string &command) {
  std::string out;
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char line[512];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) out += line;
  ::pclose(pipe);
  return out;
}

double Field(const std::string &line, const char *key) {
  const size_t at = line.find(key);
  return at == std::string::npos ? 0 : std::atof(line.c_str() + at + std::strlen(key));
}

// torch's figures for `dtype` ("float32", "bfloat16") in `dir`, from anchor_torch_save.py's output.
Anchors TorchAnchors(const std::string &output, const std::string &dtype) {
  Anchors a;
  const size_t at = output.find("torch " + dtype + " ");
  if (at == std::string::npos) return a;
  const std::string line = output.substr(at, output.find('\n', at) - at);
  a.torch_save = Field(line, "save=");
  a.torch_save_fsync = Field(line, "save+fsync=");
  a.torch_load = Field(line, "load=");
  return a;
}

double FileSize(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0;
}

void Bench(const char *label, int32_t dtype, size_t bytes, const std::string &dir, const Anchors &anchors,
           double target_ratio) {
  std::vector<Variable> vars = ModelState(bytes, dtype);
  std::vector<tw::TensorRef> refs;
  for (Variable &v : vars) {
    tw_tensor view = TW_TENSOR_INIT;
    view.dtype = dtype;
    view.ndim = 1;
    view.shape = &v.count;
    view.data = v.bytes.data();
    refs.emplace_back(view, v.name);
  }
  std::unique_ptr<ckpt::Saver> saver;
  ckpt::SaverOptions options;
  options.max_to_keep = 1;
  if (const char *kib = std::getenv("TW_BENCH_CHUNK_KIB"))
    options.write.chunk_bytes = std::strtoull(kib, nullptr, 10) << 10;
  if (!ckpt::Saver::Create(refs, options, &saver).ok()) std::abort();
  const std::string prefix = dir + "/bench-" + label;
  std::string path;
  int64_t step = 0;
  double save_cpu = 0, restore_cpu = 0;
  const double save = Best(
      [&] {
        const tw::Status s = saver->Save(prefix, ++step, &path);
        if (!s.ok()) std::fprintf(stderr, "save failed: %s\n", s.message().c_str()), std::exit(1);
      },
      &save_cpu);
  const double restore = Best(
      [&] {
        const tw::Status s = saver->Restore(path);
        if (!s.ok()) std::fprintf(stderr, "restore failed: %s\n", s.message().c_str()), std::exit(1);
      },
      &restore_cpu);
  const double ratio = FileSize(path) / static_cast<double>(bytes);

  ckpt::Snapshot snapshot;
  const double cold_capture = Seconds([&] { saver->Capture(&snapshot); });
  const double capture = Best([&] { saver->Capture(&snapshot); });
  std::vector<uint8_t> copy(bytes, 1);  // touched: a warm destination, as the reused snapshot buffers
  const double memcpy_time = Best([&] {
    size_t at = 0;
    for (const Variable &v : vars) {
      std::memcpy(copy.data() + at, v.bytes.data(), v.bytes.size());
      at += v.bytes.size();
    }
  });

  const double gb = static_cast<double>(bytes) / 1e9;
  const double ours = gb / save;
  auto times = [&](double theirs) { return theirs > 0 ? ours / theirs : 0; };
  std::printf("%s state, %zu MiB, in %s:\n", label, bytes >> 20, dir.c_str());
  std::printf(
      "  save     trainwatch %5.2f GB/s [%.0f ms wall, %.0f ms CPU]   torch.save %5.2f GB/s: %.2fx (target >= 1.5)   "
      "torch.save+fsync %5.2f GB/s: %.2fx\n",
      ours, save * 1e3, save_cpu * 1e3, anchors.torch_save, times(anchors.torch_save), anchors.torch_save_fsync,
      times(anchors.torch_save_fsync));
  std::printf(
      "  restore  trainwatch %5.2f GB/s [%.0f ms wall, %.0f ms CPU]   torch.load %5.2f GB/s: %.2fx (target >= 2)\n",
      gb / restore, restore * 1e3, restore_cpu * 1e3, anchors.torch_load,
      anchors.torch_load > 0 ? gb / restore / anchors.torch_load : 0);
  std::printf("  file size           %.3f x raw (raw/file %.3f; target raw/file >= %.2f)\n", ratio, 1 / ratio,
              target_ratio);
  std::printf(
      "  async-save stall    capture %.1f ms (first, allocating: %.1f ms)   memcpy %.1f ms   ratio %.2fx "
      "(target <= 1.5)\n",
      capture * 1e3, cold_capture * 1e3, memcpy_time * 1e3, capture / memcpy_time);
}

}  // namespace

int main(int argc, char **argv) {
  const int mib = argc > 1 ? std::atoi(argv[1]) : 256;
  const std::string disk = argc > 2 ? argv[2] : "/var/tmp";
  const bool anchors = std::getenv("TW_BENCH_NO_ANCHORS") == nullptr;
  if (anchors) {
    std::printf("anchors (same run): /usr/bin/python3 %s %d\n", TW_ANCHOR_CKPT, mib);
    std::fputs(Run("/usr/bin/python3 " TW_ANCHOR_CKPT " " + std::to_string(mib)).c_str(), stdout);
  }
  double load[3];
  if (::getloadavg(load, 3) == 3)
    std::printf("load average %.2f (wall times are noisy above the core count)\n", load[0]);
  std::printf("trainwatch: best of %d, zstd level 1, %d-byte chunks, fsync of file and directory\n", kRepeats,
              static_cast<int>(ckpt::kDefaultChunkBytes));
  int status = 0;
  for (const std::string &dir : {std::string("/dev/shm"), disk}) {
    const std::string work = dir + "/bench_checkpoint." + std::to_string(::getpid());
    if (::mkdir(work.c_str(), 0755) != 0) return std::perror(work.c_str()), 1;
    const std::string torch =
        anchors ? Run("/usr/bin/python3 " TW_ANCHOR_TORCH_SAVE " " + std::to_string(mib) + " '" + work + "'") : "";
    std::fputs(torch.c_str(), stdout);
    Bench("float32", TW_FLOAT32, static_cast<size_t>(mib) << 20, work, TorchAnchors(torch, "float32"), 1.19);
    Bench("bfloat16", TW_BFLOAT16, static_cast<size_t>(mib) << 20, work, TorchAnchors(torch, "bfloat16"), 1.45);
    if (std::system(("rm -rf '" + work + "'").c_str()) != 0) status = 1;
  }
  return status;
}
