#include "checkpoint/format/xxh3.h"

#include <new>

#include "checkpoint/format/xxhash64.h"

// The whole of xxHash as static functions of this file (no library to link), XXH64 and XXH3 with
// the x86 dispatch build's three accumulator loops; the AVX2 and AVX-512 ones carry the target
// attributes of their levels (cpu_dispatch.h), so only the functions below that use them need those
// instructions. Including xxhash.h here and nowhere else keeps its static functions out of every
// other file.
#define XXH_INLINE_ALL
#if TW_KERNELS_X86
#define XXH_X86DISPATCH
#define XXH_DISPATCH_AVX2 1
#define XXH_DISPATCH_AVX512 1
#define XXH_TARGET_AVX2 TW_TARGET_AVX2
#define XXH_TARGET_AVX512 TW_TARGET_AVX512
#endif
#include <xxhash.h>

namespace tw {
namespace checkpoint {
namespace {

static_assert(sizeof(XXH3_state_t) <= 576 && alignof(XXH3_state_t) <= 64, "Xxh3Stream::state_ is too small");
static_assert(sizeof(XXH64_state_t) <= 88 && alignof(XXH64_state_t) <= 8, "Xxh64Stream::state_ is too small");

using LongHash = XXH64_hash_t (*)(const void *, size_t, XXH64_hash_t, const xxh_u8 *, size_t);
using Update = XXH_errorcode (*)(XXH3_state_t *, const void *, size_t);

struct Loop {
  LongHash long_hash;
  Update update;
};

#if TW_KERNELS_X86
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reads _mm512_undefined_epi32() (an intentionally undefined vector) as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// One instance of xxHash's long-input loop and of its streaming update per instruction set, as
// xxh_x86dispatch.c builds them.
#define TW_XXH3_LOOP(name, target)                                                                       \
  target XXH64_hash_t LongHash_##name(const void *input, size_t len, XXH64_hash_t, const xxh_u8 *secret, \
                                      size_t secret_size) {                                              \
    return XXH3_hashLong_64b_internal(input, len, secret, secret_size, XXH3_accumulate_512_##name,       \
                                      XXH3_scrambleAcc_##name);                                          \
  }                                                                                                      \
  target XXH_errorcode Update_##name(XXH3_state_t *state, const void *input, size_t len) {               \
    return XXH3_update(state, static_cast<const xxh_u8 *>(input), len, XXH3_accumulate_512_##name,       \
                       XXH3_scrambleAcc_##name);                                                         \
  }
TW_XXH3_LOOP(sse2, )
TW_XXH3_LOOP(avx2, TW_TARGET_AVX2)
TW_XXH3_LOOP(avx512, TW_TARGET_AVX512)
#undef TW_XXH3_LOOP

const Loop &Get(Isa isa) {
  static const Loop kSse2 = {LongHash_sse2, Update_sse2}, kAvx2 = {LongHash_avx2, Update_avx2},
                    kAvx512 = {LongHash_avx512, Update_avx512};
  switch (ResolveIsa(isa)) {
    case Isa::kAvx512Vbmi:
    case Isa::kAvx512: return kAvx512;
    case Isa::kAvx2: return kAvx2;
    default: return kSse2;  // SSE2 is part of x86-64
  }
}
#else
const Loop &Get(Isa) {
  static const Loop kPortable = {XXH3_hashLong_64b_default, XXH3_64bits_update};
  return kPortable;
}
#endif

XXH3_state_t *State3(unsigned char *storage) { return reinterpret_cast<XXH3_state_t *>(storage); }
const XXH3_state_t *State3(const unsigned char *storage) { return reinterpret_cast<const XXH3_state_t *>(storage); }
XXH64_state_t *State64(unsigned char *storage) { return reinterpret_cast<XXH64_state_t *>(storage); }
const XXH64_state_t *State64(const unsigned char *storage) { return reinterpret_cast<const XXH64_state_t *>(storage); }

}  // namespace

uint64_t Xxh3(const void *data, size_t size, Isa isa) {
  return XXH3_64bits_internal(data, size, 0, XXH3_kSecret, sizeof(XXH3_kSecret), Get(isa).long_hash);
}

Xxh3Stream::Xxh3Stream(Isa isa) : isa_(isa) { XXH3_64bits_reset(new (state_) XXH3_state_t); }

void Xxh3Stream::Update(const void *data, size_t size) {
  if (size != 0) Get(isa_).update(State3(state_), data, size);  // NULL data is fine when size is 0
}

uint64_t Xxh3Stream::Digest() const { return XXH3_64bits_digest(State3(state_)); }

uint64_t Xxh64(const void *data, size_t size, uint64_t seed) { return XXH64(data, size, seed); }

Xxh64Stream::Xxh64Stream(uint64_t seed) { XXH64_reset(new (state_) XXH64_state_t, seed); }

void Xxh64Stream::Update(const void *data, size_t size) {
  if (size != 0) XXH64_update(State64(state_), data, size);
}

uint64_t Xxh64Stream::Digest() const { return XXH64_digest(State64(state_)); }

}  // namespace checkpoint
}  // namespace tw
