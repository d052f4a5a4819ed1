// The int a C caller passed as an enum. C lets an enum object hold any int; in C++ only values in the
// range of its enumerators are valid (for trainwatch's enums 0 … 2^31-1), and loading any other value
// through the enum type is undefined (UBSan: "load of value …, which is not a valid value for type").
// A C entry point reads the bits of an enum argument with this before using it, so that a negative
// value is checked as the int it is.
#ifndef TRAINWATCH_BASE_ENUM_BITS_H
#define TRAINWATCH_BASE_ENUM_BITS_H

#include <cstdint>
#include <cstring>

namespace tw {

template <typename Enum>
int32_t EnumBits(const Enum &value) {
  static_assert(sizeof(Enum) == sizeof(int32_t), "trainwatch's C enums are 32 bits wide");
  int32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));  // copies the object's bytes: no load of an invalid enum value
  return bits;
}

}  // namespace tw

#endif  // TRAINWATCH_BASE_ENUM_BITS_H
