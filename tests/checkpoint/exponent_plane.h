// The plane the exponent-plane coders' tests code: the top byte (sign and the high 7 exponent bits) of
// Gaussian floats, as plane 3 of a float32 chunk. Shared by the Huffman and tiered codec tests.
#ifndef TRAINWATCH_TESTS_CHECKPOINT_EXPONENT_PLANE_H
#define TRAINWATCH_TESTS_CHECKPOINT_EXPONENT_PLANE_H

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

inline std::vector<uint8_t> ExponentPlane(size_t size, uint32_t seed, float sigma = 0.02f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> gauss(0.0f, sigma);
  std::vector<uint8_t> plane(size);
  for (uint8_t &b : plane) {
    const float f = gauss(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    b = static_cast<uint8_t>(bits >> 24);
  }
  return plane;
}

#endif  // TRAINWATCH_TESTS_CHECKPOINT_EXPONENT_PLANE_H
