#include "checkpoint/format/xxhash64.h"

#include <algorithm>
#include <cstring>

namespace tw {
namespace checkpoint {
namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// The format is little-endian; memcpy keeps unaligned reads defined.
inline uint64_t Read64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t Read32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline uint64_t Round(uint64_t acc, uint64_t input) {
  acc += input * kPrime2;
  return Rotl(acc, 31) * kPrime1;
}

inline uint64_t MergeRound(uint64_t acc, uint64_t value) {
  acc ^= Round(0, value);
  return acc * kPrime1 + kPrime4;
}

}  // namespace

Xxh64Stream::Xxh64Stream(uint64_t seed)
    : seed_(seed), v_{seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1} {}

void Xxh64Stream::Update(const void *data, size_t size) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "XXH64 reads assume a little-endian host");
  const uint8_t *p = static_cast<const uint8_t *>(data);
  const uint8_t *const end = p + size;
  total_ += size;
  if (buffered_ > 0) {
    const size_t take = std::min<size_t>(32 - buffered_, size);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    if (buffered_ < 32) return;
    for (int lane = 0; lane < 4; ++lane) v_[lane] = Round(v_[lane], Read64(buffer_ + 8 * lane));
    buffered_ = 0;
  }
  uint64_t v1 = v_[0], v2 = v_[1], v3 = v_[2], v4 = v_[3];  // locals: kept in registers
  for (; end - p >= 32; p += 32) {
    v1 = Round(v1, Read64(p));
    v2 = Round(v2, Read64(p + 8));
    v3 = Round(v3, Read64(p + 16));
    v4 = Round(v4, Read64(p + 24));
  }
  v_[0] = v1, v_[1] = v2, v_[2] = v3, v_[3] = v4;
  buffered_ = static_cast<size_t>(end - p);
  std::memcpy(buffer_, p, buffered_);
}

uint64_t Xxh64Stream::Digest() const {
  uint64_t h;
  if (total_ >= 32) {
    h = Rotl(v_[0], 1) + Rotl(v_[1], 7) + Rotl(v_[2], 12) + Rotl(v_[3], 18);
    for (uint64_t v : v_) h = MergeRound(h, v);
  } else {
    h = seed_ + kPrime5;
  }
  h += total_;
  const uint8_t *p = buffer_;
  const uint8_t *const end = buffer_ + buffered_;
  for (; p + 8 <= end; p += 8) h = Rotl(h ^ Round(0, Read64(p)), 27) * kPrime1 + kPrime4;
  if (p + 4 <= end) {
    h = Rotl(h ^ (static_cast<uint64_t>(Read32(p)) * kPrime1), 23) * kPrime2 + kPrime3;
    p += 4;
  }
  for (; p < end; ++p) h = Rotl(h ^ (*p * kPrime5), 11) * kPrime1;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

uint64_t Xxh64(const void *data, size_t size, uint64_t seed) {
  Xxh64Stream stream(seed);
  stream.Update(data, size);
  return stream.Digest();
}

}  // namespace checkpoint
}  // namespace tw
