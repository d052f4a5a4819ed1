// libFuzzer target for the Huffman plane decoder (codec 2, huffman.h), as zstd fuzzes Huff0's
// decompression: the first two bytes give the plane's size (1 to 65536), the rest is a coded plane.
// Every decoder loop this CPU runs (plain and BMI2 shifts) must accept it or refuse it alike
// (TW_DATA_LOSS), never read or write outside the two buffers (exactly sized, so ASan sees any access
// past them), and decode the same bytes when it accepts.
//
// With TW_FUZZ_SEED_DIR set, LLVMFuzzerInitialize first writes coded planes there (huffman_seeds.h),
// small ones decoded a symbol at a time and large ones through the table-driven fast loop.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "checkpoint/codec/huffman.h"
#include "checkpoint/format/cpu_dispatch.h"
#include "huffman_seeds.h"

namespace ckpt = tw::checkpoint;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (const char *dir = std::getenv("TW_FUZZ_SEED_DIR")) WriteHuffmanSeeds(dir, /*coded=*/true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const size_t out_size = 1 + (data[0] | static_cast<size_t>(data[1]) << 8);
  const size_t in_size = size - 2;
  std::unique_ptr<uint8_t[]> in(new uint8_t[in_size]);
  if (in_size > 0) std::memcpy(in.get(), data + 2, in_size);
  std::vector<uint8_t> first;
  bool first_ok = false;
  for (ckpt::Isa isa : {ckpt::Isa::kPortable, ckpt::Isa::kAvx2}) {
    if (!ckpt::IsaRuns(isa)) continue;
    std::unique_ptr<uint8_t[]> out(new uint8_t[out_size]);
    const tw::Status status = ckpt::HuffmanDecode(in.get(), in_size, out.get(), out_size, isa);
    HuffmanCheck(status.ok() || status.code() == TW_DATA_LOSS, "a status other than TW_OK or TW_DATA_LOSS");
    HuffmanCheck(status.ok() || !status.message().empty(), "a refusal without a reason");
    if (isa == ckpt::Isa::kPortable) {
      first_ok = status.ok();
      if (first_ok) first.assign(out.get(), out.get() + out_size);
    } else {
      HuffmanCheck(status.ok() == first_ok, "the loops disagree on whether the plane decodes");
      if (status.ok())
        HuffmanCheck(std::memcmp(out.get(), first.data(), out_size) == 0, "the loops decode other bytes");
    }
  }
  return 0;
}
