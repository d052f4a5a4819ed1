// libFuzzer target for the tiered plane codec (codec 3, tiered.h). The first two bytes give the plane's
// size (1 to 65536), the rest is a coded plane: every decoder loop this CPU runs must accept it or
// refuse it alike (TW_DATA_LOSS), never read or write outside the two buffers (exactly sized, so ASan
// sees any access past them), and decode the same bytes when it accepts. The same input read as a plane
// must round-trip through the code ChooseTieredCode picks for it, with every encoder loop writing the
// same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "checkpoint/codec/tiered.h"

namespace ckpt = tw::checkpoint;

namespace {

void Check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "%s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const ckpt::Isa loops[] = {ckpt::Isa::kPortable, ckpt::Isa::kAvx512Vbmi};
  if (size >= 2) {
    const size_t out_size = 1 + (data[0] | static_cast<size_t>(data[1]) << 8);
    const size_t in_size = size - 2;
    std::unique_ptr<uint8_t[]> in(new uint8_t[in_size + 1]);
    if (in_size > 0) std::memcpy(in.get(), data + 2, in_size);
    std::vector<uint8_t> first;
    bool first_ok = false;
    for (ckpt::Isa loop : loops) {
      if (!ckpt::IsaRuns(loop)) continue;
      std::unique_ptr<uint8_t[]> out(new uint8_t[out_size]);
      const tw::Status status = ckpt::TieredDecode(in.get(), in_size, out.get(), out_size, loop);
      Check(status.ok() || status.code() == TW_DATA_LOSS, "a status other than TW_OK or TW_DATA_LOSS");
      if (loop == ckpt::Isa::kPortable) {
        first_ok = status.ok();
        if (first_ok) first.assign(out.get(), out.get() + out_size);
      } else {
        Check(status.ok() == first_ok, "the loops disagree on whether the plane decodes");
        if (status.ok()) Check(std::memcmp(out.get(), first.data(), out_size) == 0, "the loops decode other bytes");
      }
    }
  }
  if (size == 0) return 0;
  uint32_t count[256] = {};
  for (size_t i = 0; i < size; ++i) ++count[data[i]];
  const ckpt::TieredCode code = ckpt::ChooseTieredCode(count);
  const size_t capacity = 4 * size + 256;
  std::vector<uint8_t> expected;
  for (ckpt::Isa loop : loops) {
    if (!ckpt::IsaRuns(loop)) continue;
    std::unique_ptr<uint8_t[]> coded(new uint8_t[capacity]), work(new uint8_t[ckpt::TieredWorkBytes(size)]);
    const size_t n = ckpt::TieredEncode(data, size, code, coded.get(), capacity, work.get(), loop);
    Check(n > 0, "a plane did not fit 4 bytes a byte");
    if (loop == ckpt::Isa::kPortable) {
      expected.assign(coded.get(), coded.get() + n);
    } else {
      Check(n == expected.size() && std::memcmp(coded.get(), expected.data(), n) == 0, "the encoder loops differ");
    }
    std::unique_ptr<uint8_t[]> back(new uint8_t[size]);
    Check(ckpt::TieredDecode(coded.get(), n, back.get(), size, loop).ok(), "a coded plane does not decode");
    Check(std::memcmp(back.get(), data, size) == 0, "a round trip changed the plane");
  }
  return 0;
}
