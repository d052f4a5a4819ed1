// What the tiered encoder and decoder (tiered.h) share about their AVX-512 loops: whether they are
// built, the target attribute of their functions, and whether this CPU runs them.
#ifndef TRAINWATCH_CHECKPOINT_TIERED_AVX512_H
#define TRAINWATCH_CHECKPOINT_TIERED_AVX512_H

#include "checkpoint/codec/x86_intrinsics.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TW_TIERED_AVX512 1
#define TW_TIERED_TARGET_AVX512 __attribute__((__target__("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi2,popcnt")))
#else
#define TW_TIERED_AVX512 0
#endif

namespace tw {
namespace checkpoint {

// AVX-512 F, BW, VBMI (byte permutes, multishift), VBMI2 (byte expand and compress), BMI2 and POPCNT.
// Always false where the loops are not built.
bool TieredAvx512Runs();

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_TIERED_AVX512_H
