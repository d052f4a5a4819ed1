#include "checkpoint/plane_choice.h"

#include <cmath>
#include <cstring>

namespace tw {
namespace checkpoint {

PlaneChoice ChoosePlaneCodec(const uint8_t *data, size_t size, Filter filter, HuffmanModel *model) {
  const bool planes = filter == Filter::kBytePlanes;
  *model = HuffmanModel();
  if (size < kPlaneSampleMinBytes) {
    if (!planes) return PlaneChoice::kZstd;
    for (size_t i = 0; i < size; ++i) ++model->count[data[i]];
    model->whole_plane = true;
    return PlaneChoice::kSmaller;
  }
  constexpr size_t kRuns = 32, kRunBytes = 512, kSampleBytes = kRuns * kRunBytes;
  static_assert(4 * kSampleBytes <= kPlaneSampleMinBytes, "runs must not overlap");
  const size_t step = (size - kRunBytes) / (kRuns - 1);
  uint32_t *histogram = model->count;
  for (size_t r = 0; r < kRuns; ++r) {
    const uint8_t *run = data + r * step;
    for (size_t i = 0; i < kRunBytes; ++i) ++histogram[run[i]];
  }
  double bits = 0;
  for (uint32_t n : model->count) {
    if (n != 0) bits -= n * std::log2(static_cast<double>(n) / kSampleBytes);
  }
  // Mantissa planes of trained weights are noise: above 7.8 bits per byte, Huffman coding would save
  // under 2.5%, and skipping the attempt saves its time.
  if (bits / kSampleBytes > 7.8) return PlaneChoice::kRaw;
  if (!planes) return PlaneChoice::kZstd;

  // Huffman coding spends at least a bit on every byte; zstd codes a repeated string as one match.
  // Every 4th position of the sample looks its 8-byte string up in a small hash table of the earlier
  // ones (as zstd's match finder does); a plane where 1 in 16 of them repeats goes to zstd. Exponent
  // planes of trained weights have next to none; zeros, constants and runs nearly all.
  constexpr int kHashBits = 12;
  constexpr size_t kStride = 4, kLooks = kRuns * ((kRunBytes - 8) / kStride + 1);
  uint32_t seen[1u << kHashBits] = {};  // offset + 1 of the last string with that hash, 0 for none
  size_t repeats = 0;
  for (size_t r = 0; r < kRuns; ++r) {
    for (size_t i = 0; i + 8 <= kRunBytes; i += kStride) {
      const size_t offset = r * step + i;
      uint64_t string;
      std::memcpy(&string, data + offset, 8);
      uint32_t &slot = seen[(string * 0x9E3779B97F4A7C15ull) >> (64 - kHashBits)];
      repeats += slot != 0 && std::memcmp(data + slot - 1, data + offset, 8) == 0;
      slot = static_cast<uint32_t>(offset + 1);
    }
  }
  return repeats * 16 >= kLooks ? PlaneChoice::kZstd : PlaneChoice::kHuffman;
}

}  // namespace checkpoint
}  // namespace tw
