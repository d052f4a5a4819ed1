// Little-endian encoding of the checkpoint files' integers, and bounds-checked decoding of untrusted
// bytes, shared by the checkpoint file (format.cc) and the sharded index (shard_index.cc).
#ifndef TRAINWATCH_CHECKPOINT_WIRE_H
#define TRAINWATCH_CHECKPOINT_WIRE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace tw {
namespace checkpoint {

// The host is little-endian, so a memcpy is the encoding (and the checkpoint kernels read and write
// their little-endian streams with plain loads and stores).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the checkpoint format assumes a little-endian host");

template <typename T>
void Put(std::string *out, T value) {
  out->append(reinterpret_cast<const char *>(&value), sizeof(value));
}

// Every read past the end fails; none crashes.
class Cursor {
 public:
  Cursor(const uint8_t *bytes, size_t size) : p_(bytes), end_(bytes + size) {}

  template <typename T>
  bool Get(T *value) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(value, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }
  bool GetString(size_t size, std::string *value) {
    if (remaining() < size) return false;
    value->assign(reinterpret_cast<const char *>(p_), size);
    p_ += size;
    return true;
  }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  const uint8_t *p_;
  const uint8_t *end_;
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_WIRE_H
