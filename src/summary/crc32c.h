// CRC-32C (Castagnoli), the checksum of TFRecord framing, and TFRecord's masking of it.
#ifndef TRAINWATCH_SUMMARY_CRC32C_H
#define TRAINWATCH_SUMMARY_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace tw {
namespace summary {

// The CRC-32C of `prefix_crc`'s bytes followed by data[0, size): Crc32cExtend(Crc32c(a), b) ==
// Crc32c(a + b). Uses the SSE4.2 crc32 instruction when the CPU has it (checked once, at run time),
// else a slicing-by-8 table.
uint32_t Crc32cExtend(uint32_t prefix_crc, const void *data, size_t size);

inline uint32_t Crc32c(const void *data, size_t size) { return Crc32cExtend(0, data, size); }

// TFRecord stores CRCs masked, because computing the CRC of a string that contains embedded CRCs is
// weak: rotate right by 15 bits, then add a constant.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

inline uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

namespace internal {
// The two implementations behind Crc32cExtend, exposed so tests can compare them.
uint32_t Crc32cExtendPortable(uint32_t prefix_crc, const void *data, size_t size);
bool HasHardwareCrc32c();
// Only callable when HasHardwareCrc32c().
uint32_t Crc32cExtendHardware(uint32_t prefix_crc, const void *data, size_t size);
}  // namespace internal

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_CRC32C_H
