// The benchmarks' model-like state: Gaussian weights σ=0.02 and Adam-like moments m (σ=1e-3) and
// v = m², in float32 or rounded to bfloat16 — the state of the checkpoint benchmark (bench_checkpoint.py
// draws the same distributions with numpy).
#ifndef TRAINWATCH_BENCH_MODEL_STATE_H
#define TRAINWATCH_BENCH_MODEL_STATE_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "trainwatch/common.h"

namespace {

// xorshift64* + Box–Muller: fast enough to fill 256 MiB in well under a second.
struct Gaussian {
  uint64_t s = 0x9E3779B97F4A7C15ULL;
  double Uniform() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return ((s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
  }
  float Next(float sigma) {
    const double u = Uniform() + 1e-300, v = Uniform();
    return static_cast<float>(sigma * std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v));
  }
};

uint16_t ToBfloat16(float f) {  // round to nearest even
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

struct Variable {
  std::string name;
  std::vector<uint8_t> bytes;
  int64_t count;
};

// w: half of the bytes, m and v: a quarter each, as anchor_ckpt.py.
std::vector<Variable> ModelState(size_t bytes, int32_t dtype) {
  const size_t element = dtype == TW_FLOAT32 ? 4 : 2;
  const int64_t n = static_cast<int64_t>(bytes / element);
  Gaussian g;
  std::vector<Variable> vars = {{"w", {}, n / 2}, {"m", {}, n / 4}, {"v", {}, n / 4}};
  std::vector<float> m(static_cast<size_t>(n / 4));
  for (Variable &var : vars) {
    var.bytes.resize(static_cast<size_t>(var.count) * element);
    for (int64_t i = 0; i < var.count; ++i) {
      float f;
      if (var.name == "w") {
        f = g.Next(0.02f);
      } else if (var.name == "m") {
        f = m[static_cast<size_t>(i)] = g.Next(1e-3f);
      } else {
        f = m[static_cast<size_t>(i)] * m[static_cast<size_t>(i)];
      }
      if (element == 4) {
        std::memcpy(&var.bytes[static_cast<size_t>(i) * 4], &f, 4);
      } else {
        const uint16_t h = ToBfloat16(f);
        std::memcpy(&var.bytes[static_cast<size_t>(i) * 2], &h, 2);
      }
    }
  }
  return vars;
}

}  // namespace

#endif  // TRAINWATCH_BENCH_MODEL_STATE_H
