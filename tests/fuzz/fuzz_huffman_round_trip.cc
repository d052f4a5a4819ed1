// libFuzzer target for the Huffman plane coder's round trip (codec 2, huffman.h), as zstd fuzzes
// Huff0's: the first byte chooses the model, the rest is the plane. Bit 0 set: the counts of the whole
// plane; clear: the writer's kind, counts of a sample (every (byte >> 1) + 1-th byte), so that byte
// values the sample missed take the long codes the encoder gives them. Every encoder loop this CPU runs
// must write the same bytes, which every decoder loop must turn back into the plane; with one byte less
// room than the coded plane takes, the encoder must refuse (return 0) without writing past it.
//
// With TW_FUZZ_SEED_DIR set, LLVMFuzzerInitialize first writes exponent-like planes there
// (huffman_seeds.h).
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
  if (const char *dir = std::getenv("TW_FUZZ_SEED_DIR")) WriteHuffmanSeeds(dir, /*coded=*/false);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const uint8_t *plane = data + 1;
  const size_t n = size - 1;
  ckpt::HuffmanModel model;
  model.whole_plane = data[0] & 1;
  const size_t stride = model.whole_plane ? 1 : (data[0] >> 1) + 1;
  for (size_t i = 0; i < n; i += stride) ++model.count[plane[i]];

  const size_t capacity = 2 * n + 300;  // more than any plane of n bytes codes to
  std::vector<uint8_t> expected;
  for (ckpt::Isa isa : {ckpt::Isa::kPortable, ckpt::Isa::kAvx2, ckpt::Isa::kAvx512, ckpt::Isa::kAvx512Vbmi}) {
    if (!ckpt::IsaRuns(isa)) continue;
    std::unique_ptr<uint8_t[]> coded(new uint8_t[capacity]), work(new uint8_t[ckpt::HuffmanWorkBytes(n)]);
    const size_t coded_size = ckpt::HuffmanEncode(plane, n, model, coded.get(), capacity, work.get(), isa);
    HuffmanCheck(coded_size > 0, "a plane did not fit twice its size");
    if (isa == ckpt::Isa::kPortable) {
      expected.assign(coded.get(), coded.get() + coded_size);
      // One byte short: refused, and nothing written past the smaller buffer (ASan watches its end).
      std::unique_ptr<uint8_t[]> short_out(new uint8_t[coded_size - 1]);
      HuffmanCheck(ckpt::HuffmanEncode(plane, n, model, short_out.get(), coded_size - 1, work.get(), isa) == 0,
                   "a plane was coded into less room than it takes");
    } else {
      HuffmanCheck(coded_size == expected.size() && std::memcmp(coded.get(), expected.data(), coded_size) == 0,
                   "the encoder loops differ");
    }
  }
  std::unique_ptr<uint8_t[]> exact(new uint8_t[expected.size()]);
  std::memcpy(exact.get(), expected.data(), expected.size());
  for (ckpt::Isa isa : {ckpt::Isa::kPortable, ckpt::Isa::kAvx2}) {
    if (!ckpt::IsaRuns(isa)) continue;
    std::unique_ptr<uint8_t[]> back(new uint8_t[n]);
    const tw::Status status = ckpt::HuffmanDecode(exact.get(), expected.size(), back.get(), n, isa);
    if (!status.ok()) std::fprintf(stderr, "%s\n", status.message().c_str());
    HuffmanCheck(status.ok(), "a coded plane does not decode");
    HuffmanCheck(std::memcmp(back.get(), plane, n) == 0, "a round trip changed the plane");
  }
  return 0;
}
