// Which codec the writer tries first for a plane (or an unfiltered chunk), from a 16 KiB sample spread
// over it: its byte entropy and how many of its bytes repeat an earlier 8-byte string.
#ifndef TRAINWATCH_CHECKPOINT_PLANE_CHOICE_H
#define TRAINWATCH_CHECKPOINT_PLANE_CHOICE_H

#include <cstddef>
#include <cstdint>

#include "checkpoint/codec/huffman.h"
#include "checkpoint/codec/tiered.h"
#include "checkpoint/format/format.h"

namespace tw {
namespace checkpoint {

enum class PlaneChoice {
  kRaw,      // noise (over 7.8 bits of entropy per byte): no coder would save 2.5%
  kZstd,     // an unfiltered chunk, a plane whose repeats zstd's matches code below Huffman's 1 bit per
             // byte (zeros, a constant, runs), or a small plane Huffman's table would not fit
  kHuffman,  // a plane of skewed bytes without repeats: codec 2, several times faster than zstd
  kTiered,   // the same where a tiered code is at most kTieredSlack × the entropy (exponent planes):
             // codec 3, a few percent larger than Huffman's and decoded several times faster
};

// Where the writer may code a plane with a tiered code instead of Huffman coding.
enum class TieredPlanes {
  kWhereFast,  // where this CPU decodes tiered planes with its AVX-512 loop (the default). A checkpoint is
               // most often read on the kind of machine that wrote it, and elsewhere the portable loop
               // decodes ~7× slower than Huffman's (0.5 against 3.5–4 GB/s): a file written here then
               // stays as fast to read on a CPU without it as version 4's.
  kAlways,
  kNever,  // as version 4 wrote its planes
};
bool TieredPlanesAllowed(TieredPlanes policy);

// How much larger than the entropy of its bytes a tiered code may be and still be chosen over Huffman
// coding. The exponent planes of trained weights code to 1.05–1.07× their entropy as tiered planes
// (Huffman: 1.01–1.02×), a file ~1% larger, decoded 4–5× faster.
constexpr double kTieredSlack = 1.10;

// Planes smaller than this are not sampled.
constexpr size_t kPlaneSampleMinBytes = 64 << 10;

// Also leaves in *model the byte counts of the sample (of the whole plane when it is small), which
// the Huffman coder builds its code from, and for kTiered the code in *tiered (null: never kTiered).
PlaneChoice ChoosePlaneCodec(const uint8_t *data, size_t size, Filter filter, HuffmanModel *model, TieredCode *tiered);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_PLANE_CHOICE_H
