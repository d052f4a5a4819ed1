// libFuzzer target for the event reader: any bytes, read as an event file (TFRecord framing, CRCs,
// Event decoding) or decoded directly as one Event, must produce a Status — never a crash, a hang, an
// out-of-bounds access or an allocation larger than the input.
//
// The CRCs make a random file fail at the first record, so the bytes are also given to the decoder
// directly and, framed with valid CRCs as one record after the file_version event, to the reader.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "summary/event.h"
#include "summary/event_reader.h"
#include "summary/record_writer.h"

namespace summary = tw::summary;

namespace {

int g_file = -1;  // a memfd: the reader opens it by path, as a regular file

// Reads every event of `bytes` as a file; stops at the first non-OK status (the reader stays at a
// corrupt record, so reading on would repeat it).
void ReadAll(const std::string &bytes) {
  if (::ftruncate(g_file, 0) != 0 ||
      ::pwrite(g_file, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    std::abort();
  }
  std::unique_ptr<summary::EventReader> reader;
  if (!summary::EventReader::Open("/proc/self/fd/" + std::to_string(g_file), &reader).ok()) return;
  summary::Event event;
  while (reader->Next(&event).ok()) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  g_file = ::memfd_create("fuzz_event_reader", MFD_CLOEXEC);
  if (g_file < 0) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  summary::Event event;
  summary::DecodeEvent(data, size, &event);
  summary::ValidateSummary(data, size);

  ReadAll(std::string(reinterpret_cast<const char *>(data), size));

  summary::Event version;
  version.wall_time = 1.0;
  version.what = summary::Event::What::kFileVersion;
  version.file_version = summary::kFileVersion;
  std::string encoded, framed;
  summary::EncodeEvent(version, &encoded);
  summary::AppendRecord(encoded.data(), encoded.size(), &framed);
  summary::AppendRecord(data, size, &framed);
  ReadAll(framed);
  return 0;
}
