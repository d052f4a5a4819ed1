// Two variables for restore tests, with bytes that exercise both kinds of plane and a sentinel to show
// that a failed restore wrote nothing.
#ifndef TRAINWATCH_TESTS_RESTORE_MODEL_H
#define TRAINWATCH_TESTS_RESTORE_MODEL_H

#include <cstdint>
#include <cstring>
#include <vector>

#include "base/tensor.h"

// "a": float32 whose exponent planes compress (coded planes, kept or decoded again); "b": noise in the
// low mantissa bytes (raw planes). Both span several chunks, so that every worker has work.
struct RestoreModel {
  explicit RestoreModel(int64_t a_count = 4096, int64_t b_side = 128)
      : a(static_cast<size_t>(a_count)),
        b(static_cast<size_t>(b_side * b_side)),
        a_shape{a_count},
        b_shape{b_side, b_side} {}

  std::vector<float> a, b;
  int64_t a_shape[1], b_shape[2];

  std::vector<tw::TensorRef> refs() {
    tw_tensor va = TW_TENSOR_INIT, vb = TW_TENSOR_INIT;
    va.dtype = vb.dtype = TW_FLOAT32;
    va.ndim = 1, va.shape = a_shape, va.data = a.data();
    vb.ndim = 2, vb.shape = b_shape, vb.data = b.data();
    return {tw::TensorRef(va, "a"), tw::TensorRef(vb, "b")};
  }
  void Fill(float base) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = base + 0.25f * static_cast<float>(i % 16);
    for (size_t i = 0; i < b.size(); ++i) {
      uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u;
      h ^= h >> 15, h *= 0x85EBCA77u, h ^= h >> 13;
      b[i] = -base - static_cast<float>(h & 0x7fffff) / 8388608.0f;
    }
  }
  void Sentinel() {
    std::memset(a.data(), 0xA5, a.size() * sizeof(float));
    std::memset(b.data(), 0xA5, b.size() * sizeof(float));
  }
  std::vector<uint8_t> Bytes() const {
    std::vector<uint8_t> bytes(reinterpret_cast<const uint8_t *>(a.data()),
                               reinterpret_cast<const uint8_t *>(a.data() + a.size()));
    bytes.insert(bytes.end(), reinterpret_cast<const uint8_t *>(b.data()),
                 reinterpret_cast<const uint8_t *>(b.data() + b.size()));
    return bytes;
  }
};

#endif  // TRAINWATCH_TESTS_RESTORE_MODEL_H
