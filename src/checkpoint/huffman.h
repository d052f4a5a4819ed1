// Codec 2 (format version 3): a byte plane Huffman-coded with one canonical code of its own, in four
// interleaved bit streams. Made for the exponent planes of floats, where every byte is a literal for
// zstd too (no repeated strings): with the match finder gone and the streams independent, encoding runs
// several times faster than zstd and decoding at least as fast, for the same size.
//
// A coded plane of n bytes (docs/checkpoint-format.md, "Huffman planes", is the specification):
//
//   table        the code (huffman_table.h): a 32-byte bitmap of the coded symbols, then their
//                lengths, one nibble each
//   sizes        u32 × 3: bytes of streams 0, 1 and 2; stream 3 takes the rest
//   streams 0–3  stream k codes bytes [k·m, min((k+1)·m, n)) of the plane, m = ceil(n / 4); codes are
//                packed LSB-first, first bit first, and the last byte's unused high bits are 0
#ifndef TRAINWATCH_CHECKPOINT_HUFFMAN_H
#define TRAINWATCH_CHECKPOINT_HUFFMAN_H

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace tw {
namespace checkpoint {

constexpr int kHuffmanStreams = 4;

// Codes in[0, size) (size > 0) into `out`, which has `capacity` bytes. Returns the coded size, or 0
// when it would exceed `capacity` (a caller passes one byte less than the plane to get a plane that
// shrinks, or nothing). Never writes past out[capacity).
size_t HuffmanEncode(const uint8_t *in, size_t size, uint8_t *out, size_t capacity);

// Decodes the coded plane in[0, in_size) into exactly out[0, out_size). A plane that does not decode to
// exactly out_size bytes with every stored bit accounted for — a bad table, stream sizes that do not
// add up, a stream that ends early, has bytes left over or non-zero padding — is TW_DATA_LOSS with the
// reason; nothing outside the two buffers is read or written (out may be partly written then).
Status HuffmanDecode(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_HUFFMAN_H
