// Summary benchmark: CRC-32C throughput (run-time dispatched, and the portable slicing-by-8 table)
// against plain read bandwidth of the same buffer, and the cost of one scalar event (encode, frame,
// buffer, periodic write) against writing the same pre-encoded bytes with stdio — both anchors
// measured in the same run.
//
// usage: bench_summary [MiB] [directory]   (default 64 MiB; events go to /dev/shm unless a directory
// is given, so that the periodic fdatasync measures the library rather than the disk).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "summary/crc32c.h"
#include "summary/event.h"
#include "summary/event_writer.h"
#include "summary/record_writer.h"

namespace sm = tw::summary;

namespace {

double Best(const std::function<void()> &f, int repeats = 5) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

volatile uint64_t g_sink;  // keeps results alive

}  // namespace

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const std::string dir = argc > 2 ? argv[2] : "/dev/shm";
  const size_t bytes = mib << 20;
  std::vector<uint64_t> buffer(bytes / 8);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = i * 0x9E3779B97F4A7C15ULL;

  const double read_secs = Best([&] {
    uint64_t acc = 0;
    for (uint64_t w : buffer) acc ^= w;
    g_sink = acc;
  });
  const double crc_secs = Best([&] { g_sink = sm::Crc32c(buffer.data(), bytes); });
  const double portable_secs = Best([&] { g_sink = sm::internal::Crc32cExtendPortable(0, buffer.data(), bytes); });
  const double gb = static_cast<double>(bytes) / 1e9;
  std::printf("CRC-32C over %zu MiB (%s dispatched)\n", mib, sm::internal::HasHardwareCrc32c() ? "SSE4.2" : "portable");
  std::printf("  anchor  read bandwidth (xor of every word)   %7.2f GB/s\n", gb / read_secs);
  std::printf("  ours    Crc32c (dispatched)                  %7.2f GB/s   ratio %.2f\n", gb / crc_secs,
              read_secs / crc_secs);
  std::printf("  ours    Crc32c (portable slicing-by-8)       %7.2f GB/s   ratio %.2f\n", gb / portable_secs,
              read_secs / portable_secs);

  // One scalar event, end to end, against writing the bytes it becomes with stdio.
  constexpr int kEvents = 200000;
  char logdir[4096];
  std::snprintf(logdir, sizeof(logdir), "%s/tw_bench_summary_%d", dir.c_str(), static_cast<int>(::getpid()));
  sm::EventWriterOptions options;
  options.max_queue = 1000;  // SummarySaverHook-sized batches
  double add_secs = 1e30;
  std::string path;
  {
    std::unique_ptr<sm::EventWriter> writer;
    const tw::Status status = sm::EventWriter::Open(logdir, &writer, options);
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.message().c_str());
      return 1;
    }
    path = writer->path();
    add_secs = Best(
        [&] {
          for (int i = 0; i < kEvents; ++i) writer->AddScalar("loss", i, 0.5 * i);
          writer->Flush();
        },
        3);
  }
  std::string framed;
  {
    sm::Event event;
    event.wall_time = 1.7e9;
    event.step = 12345;
    event.what = sm::Event::What::kSummary;
    event.summary.resize(1);
    event.summary[0].tag = "loss";
    event.summary[0].kind = sm::SummaryValue::Kind::kSimpleValue;
    std::string encoded;
    sm::EncodeEvent(event, &encoded);
    sm::AppendRecord(encoded.data(), encoded.size(), &framed);
  }
  const std::string anchor_path = std::string(logdir) + "/anchor";
  const double fwrite_secs = Best(
      [&] {
        std::FILE *f = std::fopen(anchor_path.c_str(), "wb");
        for (int i = 0; i < kEvents; ++i) {
          std::fwrite(framed.data(), 1, framed.size(), f);
          if (i % 1000 == 999) {
            std::fflush(f);
            ::fdatasync(fileno(f));
          }
        }
        std::fclose(f);
      },
      3);
  std::printf("One scalar event (%zu bytes framed), %d events, synced every 1000\n", framed.size(), kEvents);
  std::printf("  anchor  fwrite of the pre-encoded bytes       %7.1f ns/event\n", fwrite_secs / kEvents * 1e9);
  std::printf("  ours    EventWriter::AddScalar               %7.1f ns/event   ratio %.2f\n", add_secs / kEvents * 1e9,
              add_secs / fwrite_secs);
  std::remove(anchor_path.c_str());
  std::remove(path.c_str());
  ::rmdir(logdir);
  return 0;
}
