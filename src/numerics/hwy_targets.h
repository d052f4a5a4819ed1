// Which SIMD targets the numerics kernels are compiled for. Every file that includes Highway includes
// this header first: the index HWY_DYNAMIC_DISPATCH uses depends on HWY_TARGETS, so all of them must
// agree on it.
//
// - Every attainable x86 target (SSSE3, SSE4, AVX2, AVX3, and AVX3_DL, which 1.0.3 only builds on
//   request) plus the EMU128 fallback, so that each one can be exercised on a single AVX-512 machine.
// - No -march flags anywhere: they raise the static baseline and remove the lower targets.
#ifndef TRAINWATCH_NUMERICS_HWY_TARGETS_H
#define TRAINWATCH_NUMERICS_HWY_TARGETS_H

#ifdef HIGHWAY_HWY_DETECT_TARGETS_H_
#error "include numerics/hwy_targets.h before any Highway header"
#endif

#define HWY_COMPILE_ALL_ATTAINABLE 1
#define HWY_WANT_AVX3_DL 1

#endif  // TRAINWATCH_NUMERICS_HWY_TARGETS_H
