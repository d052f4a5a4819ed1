#include "checkpoint/huffman_table.h"

#include <algorithm>
#include <cstring>

namespace tw {
namespace checkpoint {

HuffmanLengths ChooseHuffmanLengths(const uint64_t count[256]) {
  HuffmanLengths result{};
  // The symbols that occur, by count then value (the order fixes the output: deterministic files).
  int symbols[256], n = 0;
  for (int s = 0; s < 256; ++s) {
    if (count[s] != 0) symbols[n++] = s;
  }
  if (n < 2) {  // one symbol still needs a 1-bit code, and a complete code needs a second one
    const int only = n == 1 ? symbols[0] : 0;
    result.length[only] = 1;
    result.length[only == 0 ? 1 : 0] = 1;
    return result;
  }
  std::stable_sort(symbols, symbols + n, [&](int a, int b) { return count[a] < count[b]; });

  // Package-merge (Larmore and Hirschberg): list d (d = L … 1) merges the leaves with the pairs of
  // list d+1 (list L is the leaves alone); the 2n-2 cheapest items of list 1 decide the lengths. Only
  // which items of each list are packages is kept: a symbol's length is the number of lists in which
  // it is among the leaves taken, and the leaves taken from a list are always its cheapest ones.
  constexpr int L = kHuffmanMaxBits;
  uint64_t weights[2][2 * 256];
  bool is_package[L + 1][2 * 256];
  int sizes[L + 1];
  uint64_t *previous = weights[0], *current = weights[1];
  for (int i = 0; i < n; ++i) previous[i] = count[symbols[i]], is_package[L][i] = false;
  sizes[L] = n;
  for (int d = L - 1; d >= 1; --d) {
    const int packages = sizes[d + 1] / 2;
    int leaf = 0, package = 0, size = 0;
    while (leaf < n || package < packages) {
      const uint64_t package_weight = package < packages ? previous[2 * package] + previous[2 * package + 1] : 0;
      const bool take_leaf = package == packages || (leaf < n && count[symbols[leaf]] <= package_weight);
      current[size] = take_leaf ? count[symbols[leaf++]] : package_weight;
      is_package[d][size++] = !take_leaf;
      if (!take_leaf) ++package;
    }
    sizes[d] = size;
    std::swap(previous, current);
  }
  int take = 2 * n - 2;
  for (int d = 1; d <= L && take > 0; ++d) {
    int packages = 0;
    for (int i = 0; i < take; ++i) packages += is_package[d][i];
    for (int i = 0; i < take - packages; ++i) ++result.length[symbols[i]];
    take = 2 * packages;
  }
  return result;
}

void HuffmanCanonicalCodes(const HuffmanLengths &lengths, uint16_t code[256]) {
  int per_length[kHuffmanMaxBits + 1] = {};
  for (int s = 0; s < 256; ++s) ++per_length[lengths.length[s]];
  uint32_t next[kHuffmanMaxBits + 2] = {};
  per_length[0] = 0;
  for (int bits = 1; bits <= kHuffmanMaxBits; ++bits) next[bits] = (next[bits - 1] + per_length[bits - 1]) << 1;
  for (int s = 0; s < 256; ++s) {
    const int bits = lengths.length[s];
    code[s] = 0;
    if (bits == 0) continue;
    const uint32_t value = next[bits]++;
    uint32_t reversed = 0;
    for (int b = 0; b < bits; ++b) reversed |= ((value >> b) & 1u) << (bits - 1 - b);
    code[s] = static_cast<uint16_t>(reversed);
  }
}

size_t HuffmanTableSize(const HuffmanLengths &lengths) {
  size_t coded = 0;
  for (uint8_t bits : lengths.length) coded += bits != 0;
  return kHuffmanBitmapBytes + (coded + 1) / 2;
}

void WriteHuffmanTable(const HuffmanLengths &lengths, uint8_t *out) {
  std::memset(out, 0, HuffmanTableSize(lengths));
  uint8_t *nibbles = out + kHuffmanBitmapBytes;
  size_t coded = 0;
  for (int s = 0; s < 256; ++s) {
    const uint8_t bits = lengths.length[s];
    if (bits == 0) continue;
    out[s >> 3] |= static_cast<uint8_t>(1u << (s & 7));
    nibbles[coded / 2] |= static_cast<uint8_t>(bits << (4 * (coded % 2)));
    ++coded;
  }
}

bool ReadHuffmanTable(const uint8_t *in, size_t size, HuffmanLengths *lengths, size_t *table_size, std::string *why) {
  *lengths = HuffmanLengths{};
  if (size < kHuffmanBitmapBytes) return *why = "truncated code table", false;
  size_t coded = 0;
  for (size_t i = 0; i < kHuffmanBitmapBytes; ++i) coded += static_cast<size_t>(__builtin_popcount(in[i]));
  *table_size = kHuffmanBitmapBytes + (coded + 1) / 2;
  if (size < *table_size) return *why = "truncated code table", false;
  const uint8_t *nibbles = in + kHuffmanBitmapBytes;
  uint32_t kraft = 0;  // in units of 2^-kHuffmanMaxBits; a complete code sums to exactly 1
  size_t k = 0;
  for (int s = 0; s < 256; ++s) {
    if ((in[s >> 3] >> (s & 7) & 1) == 0) continue;
    const int bits = nibbles[k / 2] >> (4 * (k % 2)) & 0xF;
    ++k;
    if (bits == 0 || bits > kHuffmanMaxBits) {
      *why = "code length " + std::to_string(bits) + " of symbol " + std::to_string(s) + " (1 to " +
             std::to_string(kHuffmanMaxBits) + " allowed)";
      return false;
    }
    lengths->length[s] = static_cast<uint8_t>(bits);
    kraft += 1u << (kHuffmanMaxBits - bits);
  }
  if (coded % 2 == 1 && (nibbles[coded / 2] >> 4) != 0) return *why = "non-zero padding in the code table", false;
  if (kraft > (1u << kHuffmanMaxBits)) return *why = "oversubscribed code (not a prefix code)", false;
  if (kraft < (1u << kHuffmanMaxBits)) return *why = "incomplete code", false;
  return true;
}

}  // namespace checkpoint
}  // namespace tw
