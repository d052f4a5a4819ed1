// <immintrin.h> for the checkpoint kernels that dispatch on the CPU (their functions carry target
// attributes: the library is built without -m flags). GCC 12's AVX-512 intrinsics start from
// _mm512_undefined_epi32(), which -Wmaybe-uninitialized flags once inlined (GCC bug 105593, fixed in
// 13): the header's lines are exempted here, once for every kernel.
#ifndef TRAINWATCH_CHECKPOINT_X86_INTRINSICS_H
#define TRAINWATCH_CHECKPOINT_X86_INTRINSICS_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

#endif  // TRAINWATCH_CHECKPOINT_X86_INTRINSICS_H
