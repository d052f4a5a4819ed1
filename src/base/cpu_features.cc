#include "base/cpu_features.h"

namespace tw {
namespace {

CpuFeatures Detect() {
  CpuFeatures cpu;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();  // before any constructor of libgcc's may have run (a static initializer calling us)
  cpu.sse42 = __builtin_cpu_supports("sse4.2");
  cpu.avx2 = __builtin_cpu_supports("avx2");
  cpu.bmi2 = __builtin_cpu_supports("bmi2");
  cpu.avx512f = __builtin_cpu_supports("avx512f");
  cpu.avx512bw = __builtin_cpu_supports("avx512bw");
  cpu.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
  cpu.avx512vbmi2 = __builtin_cpu_supports("avx512vbmi2");
  cpu.popcnt = __builtin_cpu_supports("popcnt");
#endif
  return cpu;
}

}  // namespace

const CpuFeatures &Cpu() {
  static const CpuFeatures cpu = Detect();
  return cpu;
}

}  // namespace tw
