// The frozen first version of every public versioned struct (base/v1_layouts.def), checked where the
// library is built: a member moved or inserted in a public header fails the build.
#include <cstddef>
#include <cstdint>

#include "trainwatch.h"

#if UINTPTR_MAX == UINT64_MAX
#define TW_V1_SIZE(type, size_macro, size) \
  static_assert(size_macro == size, #size_macro " changed: the first version of " #type " is frozen");
#define TW_V1_MEMBER(type, member, offset)                                                   \
  static_assert(offsetof(type, member) == offset, #type "." #member                          \
                                                        " moved: members are only appended " \
                                                        "after the last one (include/trainwatch/common.h)");
#include "base/v1_layouts.def"
#undef TW_V1_SIZE
#undef TW_V1_MEMBER
#endif
