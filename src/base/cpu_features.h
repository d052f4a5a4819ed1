// What the CPU running the library supports, found once. The checkpoint and summary kernels come in
// several builds (SSE2, AVX2, AVX-512, BMI2 shifts, SSE4.2 CRC) and pick them from here: the
// checkpoint's through one level (checkpoint/cpu_dispatch.h), the summary's CRC directly.
// One place asks libgcc (__builtin_cpu_init, which writes its model of the CPU), inside a thread-safe
// static: kernels resolved from several threads at once never write that model concurrently.
#ifndef TRAINWATCH_BASE_CPU_FEATURES_H
#define TRAINWATCH_BASE_CPU_FEATURES_H

namespace tw {

struct CpuFeatures {
  bool sse42 = false;
  bool avx2 = false;
  bool bmi2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vbmi = false;
  bool avx512vbmi2 = false;  // vpexpandb / vpcompressb (the tiered plane codec)
  bool popcnt = false;
};

// All false off x86-64 (the portable builds run there).
const CpuFeatures &Cpu();

}  // namespace tw

#endif  // TRAINWATCH_BASE_CPU_FEATURES_H
