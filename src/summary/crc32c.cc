#include "summary/crc32c.h"

#include <array>
#include <cstring>

#include "base/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define TW_CRC32C_X86 1
#endif

namespace tw {
namespace summary {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78u;  // Castagnoli, bit-reversed

// kTables[0] is the classic byte-at-a-time table; kTables[k][b] is the CRC of byte b followed by k
// zero bytes, which lets the loop below fold 8 input bytes per step (slicing-by-8).
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    t[0][b] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xffu];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

uint64_t LoadLittleEndian64(const unsigned char *p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

using ExtendFn = uint32_t (*)(uint32_t, const void *, size_t);

ExtendFn SelectImplementation() {
  return internal::HasHardwareCrc32c() ? internal::Crc32cExtendHardware : internal::Crc32cExtendPortable;
}

}  // namespace

namespace internal {

uint32_t Crc32cExtendPortable(uint32_t prefix_crc, const void *data, size_t size) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint32_t crc = ~prefix_crc;
  for (; size >= 8; size -= 8, p += 8) {
    const uint64_t word = LoadLittleEndian64(p) ^ crc;
    crc = kTables[7][word & 0xff] ^ kTables[6][(word >> 8) & 0xff] ^ kTables[5][(word >> 16) & 0xff] ^
          kTables[4][(word >> 24) & 0xff] ^ kTables[3][(word >> 32) & 0xff] ^ kTables[2][(word >> 40) & 0xff] ^
          kTables[1][(word >> 48) & 0xff] ^ kTables[0][word >> 56];
  }
  for (; size > 0; --size, ++p) crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xff];
  return ~crc;
}

#if defined(TW_CRC32C_X86)

bool HasHardwareCrc32c() { return Cpu().sse42; }

__attribute__((target("sse4.2"))) uint32_t Crc32cExtendHardware(uint32_t prefix_crc, const void *data, size_t size) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint32_t crc = ~prefix_crc;
#if defined(__x86_64__)
  uint64_t crc64 = crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    crc64 = _mm_crc32_u64(crc64, word);
  }
  crc = static_cast<uint32_t>(crc64);
#endif
  for (; size > 0; --size, ++p) crc = _mm_crc32_u8(crc, *p);
  return ~crc;
}

#else

bool HasHardwareCrc32c() { return false; }

uint32_t Crc32cExtendHardware(uint32_t prefix_crc, const void *data, size_t size) {
  return Crc32cExtendPortable(prefix_crc, data, size);
}

#endif

}  // namespace internal

uint32_t Crc32cExtend(uint32_t prefix_crc, const void *data, size_t size) {
  static const ExtendFn extend = SelectImplementation();
  return extend(prefix_crc, data, size);
}

}  // namespace summary
}  // namespace tw
