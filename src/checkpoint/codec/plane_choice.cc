#include "checkpoint/codec/plane_choice.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tw {
namespace checkpoint {
namespace {

// c·log2(c), from a table for the small counts that a small plane's bytes nearly all have.
double CountTimesLog2(uint32_t c) {
  static const struct Table {
    double value[256];
    Table() {
      for (uint32_t i = 0; i < 256; ++i) value[i] = i == 0 ? 0 : i * std::log2(static_cast<double>(i));
    }
  } table;
  return c < 256 ? table.value[c] : c * std::log2(static_cast<double>(c));
}

// Bits of the byte entropy of `count` over `total` bytes (n·log2 n − Σ c·log2 c): no code of single
// bytes is shorter.
double EntropyBits(const uint32_t count[256], size_t total) {
  double sum = 0;
  for (int s = 0; s < 256; ++s) {
    if (count[s] > 1) sum += CountTimesLog2(count[s]);
  }
  return static_cast<double>(total) * std::log2(static_cast<double>(total)) - sum;
}

// Whether 1 in 16 of the 8-byte strings at every 4th position of the runs data[r·step, r·step + run)
// repeats an earlier one (looked up in a small hash table, as zstd's match finder does): zstd then
// codes the plane below Huffman's 1 bit per byte.
bool Repeats(const uint8_t *data, size_t runs, size_t step, size_t run) {
  constexpr int kHashBits = 12;
  constexpr size_t kStride = 4;
  uint32_t seen[1u << kHashBits] = {};  // offset + 1 of the last string with that hash, 0 for none
  size_t repeats = 0, looks = 0;
  for (size_t r = 0; r < runs; ++r) {
    for (size_t i = 0; i + 8 <= run; i += kStride, ++looks) {
      const size_t offset = r * step + i;
      uint64_t string;
      std::memcpy(&string, data + offset, 8);
      uint32_t &slot = seen[(string * 0x9E3779B97F4A7C15ull) >> (64 - kHashBits)];
      repeats += slot != 0 && std::memcmp(data + slot - 1, data + offset, 8) == 0;
      slot = static_cast<uint32_t>(offset + 1);
    }
  }
  return repeats * 16 >= looks;
}

// A small plane's counts are the whole plane's, so its entropy bounds what a code of its bytes can
// save: Huffman's output is at least the entropy (and a bit per byte) plus its table (a 32-byte bitmap,
// a nibble per symbol, the stream sizes); zstd's at least the entropy plus its headers and its table of
// code weights (2 bits a symbol or more, in practice). A plane no coder can shrink is stored raw
// untried: the mantissa planes of a model's small variables (its biases and norms) are noise, and codes
// built to fail cost more than the rest of saving them. Otherwise one coder, chosen as for a sampled
// plane: zstd where Huffman's table alone is too large or bytes repeat, else Huffman. (zstd's smaller
// table gives ~10 bytes less on an exponent plane under 16 KiB, for twice Huffman's time.)
PlaneChoice ChooseForSmallPlane(const uint8_t *data, size_t size, HuffmanModel *model, double *entropy_bits) {
  // Four tallies: an exponent plane repeats a few byte values, and one tally would wait on its own
  // increments of the same counter.
  uint32_t tally[3][256] = {};
  size_t i = 0, symbols = 0;
  for (; i + 4 <= size; i += 4) {
    ++model->count[data[i]], ++tally[0][data[i + 1]], ++tally[1][data[i + 2]], ++tally[2][data[i + 3]];
  }
  for (; i < size; ++i) ++model->count[data[i]];
  for (int s = 0; s < 256; ++s) {
    model->count[s] += tally[0][s] + tally[1][s] + tally[2][s];
    symbols += model->count[s] != 0;
  }
  model->whole_plane = true;
  const auto zstd_cannot_shrink = [&](double entropy_bytes) {  // frame and block headers: 9 bytes
    return entropy_bytes + symbols / 4.0 + 9 >= static_cast<double>(size);
  };
  // The collision entropy, log2(n² / Σ c²), is at most the entropy and costs no logarithm per symbol:
  // it already shows most noise planes to be noise.
  uint64_t squares = 0;
  for (uint32_t c : model->count) squares += uint64_t{c} * c;
  const double n = static_cast<double>(size);
  if (zstd_cannot_shrink(n * (2 * std::log2(n) - std::log2(static_cast<double>(squares))) / 8))
    return PlaneChoice::kRaw;
  *entropy_bits = EntropyBits(model->count, size);
  const double entropy_bytes = *entropy_bits / 8;
  if (zstd_cannot_shrink(entropy_bytes)) return PlaneChoice::kRaw;
  const double least_huffman =
      std::max(entropy_bytes, size / 8.0) + kHuffmanBitmapBytes + symbols / 2.0 + 4 * (kHuffmanStreams - 1);
  if (least_huffman >= static_cast<double>(size) || Repeats(data, 1, 0, size)) return PlaneChoice::kZstd;
  return PlaneChoice::kHuffman;
}

// A plane Huffman coding would take goes to the tiered code when that is at most kTieredSlack × the
// entropy of the counted bytes (`total` of them, `entropy_bits` in all) and, for a whole small plane,
// smaller than the plane with its header.
PlaneChoice PreferTiered(const HuffmanModel &model, size_t total, double entropy_bits, size_t size,
                         TieredCode *tiered) {
  if (tiered == nullptr) return PlaneChoice::kHuffman;
  double bits_per_byte = 0;
  *tiered = ChooseTieredCode(model.count, &bits_per_byte);
  const double tiered_bits = bits_per_byte * static_cast<double>(total);
  const bool fits = !model.whole_plane ||
                    tiered_bits / 8 + static_cast<double>(TieredHeaderBytes(*tiered)) < static_cast<double>(size);
  return fits && tiered_bits <= kTieredSlack * entropy_bits ? PlaneChoice::kTiered : PlaneChoice::kHuffman;
}

}  // namespace

bool TieredPlanesAllowed(TieredPlanes policy) {
  return policy == TieredPlanes::kAlways || (policy == TieredPlanes::kWhereFast && IsaRuns(Isa::kAvx512Vbmi));
}

PlaneChoice ChoosePlaneCodec(const uint8_t *data, size_t size, Filter filter, HuffmanModel *model, TieredCode *tiered) {
  const bool planes = filter == Filter::kBytePlanes;
  *model = HuffmanModel();
  if (size < kPlaneSampleMinBytes) {
    if (!planes) return PlaneChoice::kZstd;
    double entropy_bits = 0;
    const PlaneChoice choice = ChooseForSmallPlane(data, size, model, &entropy_bits);
    return choice == PlaneChoice::kHuffman ? PreferTiered(*model, size, entropy_bits, size, tiered) : choice;
  }
  constexpr size_t kRuns = 32, kRunBytes = 512, kSampleBytes = kRuns * kRunBytes;
  static_assert(4 * kSampleBytes <= kPlaneSampleMinBytes, "runs must not overlap");
  const size_t step = (size - kRunBytes) / (kRuns - 1);
  for (size_t r = 0; r < kRuns; ++r) {
    const uint8_t *run = data + r * step;
    for (size_t i = 0; i < kRunBytes; ++i) ++model->count[run[i]];
  }
  // Mantissa planes of trained weights are noise: above 7.8 bits per byte, Huffman coding would save
  // under 2.5%, and skipping the attempt saves its time.
  const double entropy_bits = EntropyBits(model->count, kSampleBytes);
  if (entropy_bits / kSampleBytes > 7.8) return PlaneChoice::kRaw;
  if (!planes) return PlaneChoice::kZstd;
  // Huffman and tiered coding spend at least a bit on every byte; zstd codes a repeated string as one
  // match. Exponent planes of trained weights have next to no repeats; zeros, constants and runs nearly all.
  if (Repeats(data, kRuns, step, kRunBytes)) return PlaneChoice::kZstd;
  return PreferTiered(*model, kSampleBytes, entropy_bits, size, tiered);
}

}  // namespace checkpoint
}  // namespace tw
