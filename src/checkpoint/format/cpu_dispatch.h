// The one place the checkpoint kernels choose their instructions. The library is built without -m
// flags; a kernel that needs more than the baseline is compiled with a target attribute from here and
// chosen at run time by an Isa, one level for every kernel: the plane joins and splits (plane_join.h),
// the Huffman coder (huffman.h), the tiered code (tiered.h) and XXH3 (xxh3.h, libxxhash's own loops).
//
// Why hand-written kernels and not Highway's HWY_DYNAMIC_DISPATCH, as the numerics kernels use:
// Highway 1.0.3 lacks what each of them is built on — byte permutes across 128-bit blocks (its
// TableLookupLanes takes 4- and 8-byte lanes; vpermb/vpermi2b: the 8-byte transposes, the Huffman and
// tiered table lookups), byte expand (vpexpandb: the tiered decoder's escapes), the multishift
// (vpmultishiftqb: the tiered unpacking), and non-temporal stores of interleaved planes (its
// StoreInterleaved2/4 could join 2- and 4-byte planes, but store normally, and a restore streams).
// XXH3's loops are libxxhash's. The levels are Highway's x86 targets (HWY_AVX2,
// HWY_AVX3, HWY_AVX3_DL), so a CPU runs the same tier here as in the numerics kernels.
#ifndef TRAINWATCH_CHECKPOINT_CPU_DISPATCH_H
#define TRAINWATCH_CHECKPOINT_CPU_DISPATCH_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TW_KERNELS_X86 1
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32(), which -Wmaybe-uninitialized flags
// once inlined (GCC bug 105593, fixed in 13): the header's lines are exempted here, once for every kernel.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
// The target attribute of a kernel of each level: exactly the instructions IsaRuns checks.
#define TW_TARGET_AVX2 __attribute__((__target__("avx2,bmi2")))
// Level kAvx2's shifts alone, for scalar loops (the Huffman coder's): with AVX2 as well, GCC 12
// compiles them differently, and what they gain from shlx/shrx was measured without it.
#define TW_TARGET_BMI2 __attribute__((__target__("bmi2")))
#define TW_TARGET_AVX512 __attribute__((__target__("avx2,bmi2,avx512f,avx512bw")))
#define TW_TARGET_AVX512_VBMI __attribute__((__target__("avx2,bmi2,avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt")))
#else
#define TW_KERNELS_X86 0
#endif

namespace tw {
namespace checkpoint {

// The instruction-set levels, each including the one before. Every kernel writes the same bytes at
// every level (tests/checkpoint runs each level the CPU has against kPortable).
//   kPortable     the compiler's code for the baseline (SSE2 on x86-64); the only level elsewhere
//   kAvx2         AVX2 and BMI2 (Haswell, Zen): the 2- and 4-byte joins, XXH3's AVX2 loop, the
//                 Huffman coder's shlx/shrx loops
//   kAvx512       AVX-512 F and BW (Skylake-SP): the 2- and 4-byte joins, XXH3's AVX-512 loop
//   kAvx512Vbmi   AVX-512 VBMI and VBMI2, POPCNT (Ice Lake, Zen 4): the 8-byte join and split, the
//                 Huffman encoder's vector loop, the tiered encoder and decoder
// kBest is the highest level this CPU runs, found once.
enum class Isa { kBest, kPortable, kAvx2, kAvx512, kAvx512Vbmi };

bool IsaRuns(Isa isa);         // whether this CPU runs it (kBest and kPortable always)
Isa ResolveIsa(Isa isa);       // kBest: the level it stands for; another level: itself
const char *IsaName(Isa isa);  // "portable", "avx2", "avx512", "avx512vbmi"; kBest: its level's name

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_CPU_DISPATCH_H
