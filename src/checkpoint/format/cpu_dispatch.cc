#include "checkpoint/format/cpu_dispatch.h"

#include "base/cpu_features.h"

namespace tw {
namespace checkpoint {

bool IsaRuns(Isa isa) {
  const CpuFeatures &cpu = Cpu();
  switch (isa) {
    case Isa::kBest:
    case Isa::kPortable: return true;
    case Isa::kAvx2: return TW_KERNELS_X86 && cpu.avx2 && cpu.bmi2;
    case Isa::kAvx512: return IsaRuns(Isa::kAvx2) && cpu.avx512f && cpu.avx512bw;
    case Isa::kAvx512Vbmi: return IsaRuns(Isa::kAvx512) && cpu.avx512vbmi && cpu.avx512vbmi2 && cpu.popcnt;
  }
  return false;
}

Isa ResolveIsa(Isa isa) {
  static const Isa best = IsaRuns(Isa::kAvx512Vbmi) ? Isa::kAvx512Vbmi
                          : IsaRuns(Isa::kAvx512)   ? Isa::kAvx512
                          : IsaRuns(Isa::kAvx2)     ? Isa::kAvx2
                                                    : Isa::kPortable;
  return isa == Isa::kBest ? best : isa;
}

const char *IsaName(Isa isa) {
  switch (ResolveIsa(isa)) {
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx512Vbmi: return "avx512vbmi";
    default: return "portable";
  }
}

}  // namespace checkpoint
}  // namespace tw
