// The code of a Huffman-coded plane (codec 2, format version 3; docs/checkpoint-format.md, "Huffman
// planes"): code lengths of at most kHuffmanMaxBits chosen from a histogram, the canonical codes they
// define, and the table that carries the lengths at the head of a coded plane.
#ifndef TRAINWATCH_CHECKPOINT_HUFFMAN_TABLE_H
#define TRAINWATCH_CHECKPOINT_HUFFMAN_TABLE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace tw {
namespace checkpoint {

// Longer codes would save almost nothing on exponent planes and make the decoding tables outgrow L1.
constexpr int kHuffmanMaxBits = 11;
// The table's fixed part: a bitmap of the symbols that have a code.
constexpr size_t kHuffmanBitmapBytes = 32;

// length[s] is symbol s's code length in bits, 0 when it has no code.
struct HuffmanLengths {
  uint8_t length[256];
};

// Optimal code lengths of at most kHuffmanMaxBits (package-merge) for a plane of these byte counts:
// every symbol that occurs gets a code and the code is complete (Kraft sum exactly 1) — when only one
// symbol occurs, a second, unused one gets a code too. `count` must not be all zero.
HuffmanLengths ChooseHuffmanLengths(const uint64_t count[256]);

// Canonical codes (DEFLATE's rule: by length, then by symbol value, counting up), each bit-reversed so
// that an LSB-first bit stream carries the code's first bit first: code[s] is what the encoder ORs in.
void HuffmanCanonicalCodes(const HuffmanLengths &lengths, uint16_t code[256]);

// Bytes of the table for these lengths: the bitmap, then one nibble per coded symbol.
size_t HuffmanTableSize(const HuffmanLengths &lengths);
// Writes the table (HuffmanTableSize bytes) at `out`.
void WriteHuffmanTable(const HuffmanLengths &lengths, uint8_t *out);
// Reads a table from in[0, size): sets *lengths and *table_size. Returns false, with *why set, for a
// truncated table, a length of 0 or over kHuffmanMaxBits for a listed symbol, a non-zero padding
// nibble, or lengths that are not a complete prefix code (oversubscribed or incomplete).
bool ReadHuffmanTable(const uint8_t *in, size_t size, HuffmanLengths *lengths, size_t *table_size, std::string *why);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_HUFFMAN_TABLE_H
