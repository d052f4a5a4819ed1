// Codec 3: a byte plane in "tiered" code — fixed-width codes in up to three tiers, each tier's escape
// passing the byte on to the next, and raw bytes last. Made for the exponent planes of floats, as
// Huffman coding (huffman.h), but decodable 64 bytes at a time with AVX-512 (a fixed width unpacks
// with one permutation and one multishift; an escape's next code is found by expanding the next
// tier's codes to the escaped lanes), where Huffman's variable-length codes decode a symbol at a time.
// On bfloat16 exponent planes it takes ~2.75 bits per byte, ~4% more than Huffman's 2.6–2.7.
//
// A coded plane of n >= 1 bytes (the specification; docs/checkpoint-format.md, "Tiered planes"):
//
//   u8  T                         coded tiers, 1..3
//   T × { u8 w_t                  width of tier t's codes, 1..6 bits
//         u8 symbol_t[2^w_t - 1] } the byte values tier t codes: code c < 2^w_t - 1 is symbol_t[c];
//                                 code 2^w_t - 1 (all ones) is the escape: the next tier codes the
//                                 byte (after tier T it is a raw byte). Every symbol of every table
//                                 is distinct.
//   u32 × T  count_2 … count_T, raw_count (little-endian; count_1 = n is implied): count_{t+1} is
//                                 the escapes in stream t, raw_count the escapes in stream T
//   stream 1 … stream T           stream t: count_t codes of w_t bits, one for each plane byte that
//                                 reaches tier t, in plane order, packed LSB-first (bit i of the stream
//                                 is bit i mod 8 of byte i div 8), ceil(count_t·w_t / 8) bytes, the
//                                 unused high bits of its last byte 0
//   raw bytes                     raw_count bytes, in plane order
//
// The sizes must add up to exactly the coded plane's size.
#ifndef TRAINWATCH_CHECKPOINT_TIERED_H
#define TRAINWATCH_CHECKPOINT_TIERED_H

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "checkpoint/format/cpu_dispatch.h"

namespace tw {
namespace checkpoint {

constexpr int kTieredMaxTiers = 3;
constexpr int kTieredMaxWidth = 6;  // 63 symbols and the escape: a table is one 64-byte register

// The tables of a plane's code: tier t (0-based here) codes symbol[t][c] as c, c < 2^width[t] - 1.
struct TieredCode {
  int tiers = 0;
  int width[kTieredMaxTiers] = {};
  uint8_t symbol[kTieredMaxTiers][63] = {};
};

// The code with the fewest estimated bits for a plane of these byte counts (of the whole plane or of a
// sample: the writer's 16 KiB sample, plane_choice.h). Byte values by count, descending (ties: by value),
// fill tier 1, 2, 3 in turn; T and the widths are those minimising the estimated size, codes plus header
// (at the counts' scale); ties go to fewer tiers, then narrower widths. *bits_per_byte (if given) is the
// estimate of the codes alone, header excluded. Deterministic.
TieredCode ChooseTieredCode(const uint32_t count[256], double *bits_per_byte = nullptr);

// Bytes of the header a plane coded with `code` starts with: T, each tier's width and symbols, the counts.
inline size_t TieredHeaderBytes(const TieredCode &code) {
  size_t bytes = 1 + 4 * static_cast<size_t>(code.tiers);
  for (int t = 0; t < code.tiers; ++t) bytes += size_t{1} << code.width[t];
  return bytes;
}

// The loops: the AVX-512 one at level Isa::kAvx512Vbmi (cpu_dispatch.h), the portable one below it.
// Every one writes the same bytes and agrees on what it refuses.

// Bytes of `work` TieredEncode needs for a plane of `size` bytes: 2·size + 128. The AVX-512 loop stages
// there, a byte each, tier 2's codes and the bytes that reach tier 3 (or the raw bytes), until the
// streams' sizes are known; the portable loop counts first and needs none.
size_t TieredWorkBytes(size_t size);

// Codes in[0, size) (size > 0) with `code` into `out`, which has `capacity` bytes. Returns the coded
// size, or 0 when it would exceed `capacity` (a caller passes one byte less than the plane to get a
// plane that shrinks, or nothing) or `code` is not a valid code. Never writes past out[capacity) nor
// past work[TieredWorkBytes(size)); out[0, capacity) may have been written when it returns 0. `isa`
// must run on this CPU.
size_t TieredEncode(const uint8_t *in, size_t size, const TieredCode &code, uint8_t *out, size_t capacity,
                    uint8_t *work, Isa isa = Isa::kBest);

// Decodes the coded plane in[0, in_size) into exactly out[0, out_size). A plane that does not decode to
// exactly out_size bytes with every stored bit accounted for — a bad header, sizes that do not add up,
// a tier whose escapes differ from the next tier's count, non-zero padding — is TW_DATA_LOSS with the
// reason ("tiered plane: …"); nothing outside the two buffers is read or written (out may be partly
// written then). `isa` must run on this CPU.
Status TieredDecode(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size, Isa isa = Isa::kBest);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_TIERED_H
