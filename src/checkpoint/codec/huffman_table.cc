#include "checkpoint/codec/huffman_table.h"

#include <algorithm>
#include <cstring>

namespace tw {
namespace checkpoint {

namespace {

// Huffman's code lengths for the ascending weights w[0, n), n ≥ 2, computed in place (Moffat and
// Katajainen, "In-place calculation of minimum-redundancy codes", 1995): w[i] becomes the length of
// the i-th symbol, so w[0] is the longest. O(n) after the sort, against package-merge's O(n·L).
void HuffmanLengthsInPlace(uint64_t *w, int n) {
  // Left to right: each internal node takes the two lightest of the leaves left and the nodes made;
  // a node taken becomes a pointer to its parent.
  w[0] += w[1];
  int root = 0, leaf = 2;
  for (int next = 1; next < n - 1; ++next) {
    if (leaf >= n || w[root] < w[leaf]) {
      w[next] = w[root], w[root++] = static_cast<uint64_t>(next);
    } else {
      w[next] = w[leaf++];
    }
    if (leaf >= n || (root < next && w[root] < w[leaf])) {
      w[next] += w[root], w[root++] = static_cast<uint64_t>(next);
    } else {
      w[next] += w[leaf++];
    }
  }
  // Right to left: internal nodes' depths from their parents'.
  w[n - 2] = 0;
  for (int next = n - 3; next >= 0; --next) w[next] = w[w[next]] + 1;
  // Right to left: leaf depths, filling the slots the internal nodes of each depth leave free.
  int available = 1, used = 0, next = n - 1;
  uint64_t depth = 0;
  for (root = n - 2; available > 0; ++depth) {
    for (; root >= 0 && w[root] == depth; --root) ++used;
    for (; available > used; --available) w[next--] = depth;
    available = 2 * used, used = 0;
  }
}

}  // namespace

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
  std::sort(symbols, symbols + n, [&](int a, int b) { return count[a] != count[b] ? count[a] < count[b] : a < b; });

  // Where Huffman's own code fits the limit it is the answer (most planes); otherwise package-merge.
  uint64_t lengths[256];
  for (int i = 0; i < n; ++i) lengths[i] = count[symbols[i]];
  HuffmanLengthsInPlace(lengths, n);
  if (lengths[0] <= kHuffmanMaxBits) {
    for (int i = 0; i < n; ++i) result.length[symbols[i]] = static_cast<uint8_t>(lengths[i]);
    return result;
  }

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

namespace {

// kReversed[b] is byte b with its bits in the opposite order.
constexpr struct ReversedBytes {
  uint8_t value[256] = {};
  constexpr ReversedBytes() {
    for (int b = 0; b < 256; ++b) {
      for (int i = 0; i < 8; ++i) value[b] = static_cast<uint8_t>(value[b] | ((b >> i) & 1) << (7 - i));
    }
  }
  constexpr uint8_t operator[](uint32_t b) const { return value[b]; }
} kReversed;

}  // namespace

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
    const uint32_t value = next[bits]++;  // bits ≤ 11: two bytes reversed, then shifted down
    code[s] = static_cast<uint16_t>((kReversed[value & 0xFF] << 8 | kReversed[value >> 8]) >> (16 - bits));
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
