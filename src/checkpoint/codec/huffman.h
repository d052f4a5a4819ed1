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
#include "checkpoint/codec/huffman_table.h"
#include "checkpoint/format/cpu_dispatch.h"

namespace tw {
namespace checkpoint {

constexpr int kHuffmanStreams = 4;

// The byte counts a plane's code is built from: of the whole plane, or of a sample of it (the writer's
// 16 KiB sample, plane_choice.h). Counting every byte of a plane costs a third of coding it; from a
// sample the code is as good (the exponent bytes' distribution is smooth), and every byte value the
// sample missed between the smallest and the largest of each half (0x00–0x7F, 0x80–0xFF: positive
// and negative floats) gets a long code, so that every byte of the plane has one.
struct HuffmanModel {
  uint32_t count[256] = {};
  bool whole_plane = false;  // `count` is the plane's: byte values it misses do not occur
};

// The longest stream `bytes` bytes can give, with room for its 8-byte stores.
inline size_t MaxStreamBytes(size_t bytes) { return bytes / 8 * kHuffmanMaxBits + kHuffmanMaxBits + 16; }
// Bytes of `work` HuffmanEncode needs for a plane of `size` bytes: a 256 KiB table and the streams.
inline size_t HuffmanWorkBytes(size_t size) {
  return (256u << 10) + 64 + kHuffmanStreams * MaxStreamBytes((size + kHuffmanStreams - 1) / kHuffmanStreams);
}

// The coders' loops shift by variable counts all the time: from level Isa::kAvx2 (cpu_dispatch.h) they
// run with BMI2's shlx/shrx (one µop where a plain shift by %cl takes three); at kAvx512Vbmi the
// encoder runs its AVX-512 loop (huffman_encode.cc). Every loop writes the same bytes.

// Codes in[0, size) (size > 0) with a code built from `model` into `out`, which has `capacity` bytes;
// `work` (HuffmanWorkBytes(size)) holds the streams until their sizes are known. Returns the coded
// size, or 0 when it would exceed `capacity` (a caller passes one byte less than the plane to get a
// plane that shrinks, or nothing). Never writes past out[capacity). `isa` must run on this CPU.
size_t HuffmanEncode(const uint8_t *in, size_t size, const HuffmanModel &model, uint8_t *out, size_t capacity,
                     uint8_t *work, Isa isa = Isa::kBest);

// Decodes the coded plane in[0, in_size) into exactly out[0, out_size). A plane that does not decode to
// exactly out_size bytes with every stored bit accounted for — a bad table, stream sizes that do not
// add up, a stream that ends early, has bytes left over or non-zero padding — is TW_DATA_LOSS with the
// reason; nothing outside the two buffers is read or written (out may be partly written then). `isa`
// must run on this CPU.
Status HuffmanDecode(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size, Isa isa = Isa::kBest);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_HUFFMAN_H
