#include "checkpoint/format/xxh3.h"

#include <new>

#include "base/cpu_features.h"

// The whole of xxHash as static functions of this file (no library to link), with the x86 dispatch
// build's three accumulator loops; the AVX2 and AVX-512 ones carry target attributes, so only the
// functions below that use them need those instructions. Including xxhash.h here and nowhere else
// keeps its static functions out of every other file.
#define XXH_INLINE_ALL
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TW_XXH3_DISPATCH 1
#define XXH_X86DISPATCH
#define XXH_DISPATCH_AVX2 1
#define XXH_DISPATCH_AVX512 1
#define XXH_TARGET_AVX2 __attribute__((__target__("avx2")))
#define XXH_TARGET_AVX512 __attribute__((__target__("avx512f")))
#include <immintrin.h>  // xxhash.h includes only what the compiler flags enable (SSE2)
#endif
#include <xxhash.h>

namespace tw {
namespace checkpoint {
namespace {

static_assert(sizeof(XXH3_state_t) <= 576 && alignof(XXH3_state_t) <= 64, "Xxh3Stream::state_ is too small");

using LongHash = XXH64_hash_t (*)(const void *, size_t, XXH64_hash_t, const xxh_u8 *, size_t);
using Update = XXH_errorcode (*)(XXH3_state_t *, const void *, size_t);

struct Implementation {
  LongHash long_hash;
  Update update;
  const char *name;
};

#if TW_XXH3_DISPATCH
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
TW_XXH3_LOOP(avx2, XXH_TARGET_AVX2)
TW_XXH3_LOOP(avx512, XXH_TARGET_AVX512)
#undef TW_XXH3_LOOP

const Implementation kLoops[] = {
    {nullptr, nullptr, nullptr},  // kBest: resolved by Best()
    {LongHash_sse2, Update_sse2, "sse2"},
    {LongHash_avx2, Update_avx2, "avx2"},
    {LongHash_avx512, Update_avx512, "avx512"},
};

bool Runs(Xxh3Loop loop) {
  switch (loop) {
    case Xxh3Loop::kAvx512: return Cpu().avx512f;
    case Xxh3Loop::kAvx2: return Cpu().avx2;
    default: return true;  // SSE2 is part of x86-64
  }
}

const Implementation &Best() {
  static const Implementation &best = Runs(Xxh3Loop::kAvx512) ? kLoops[3]
                                      : Runs(Xxh3Loop::kAvx2) ? kLoops[2]
                                                              : kLoops[1];
  return best;
}
#else
const Implementation kPortable = {XXH3_hashLong_64b_default, XXH3_64bits_update, "portable"};
bool Runs(Xxh3Loop) { return true; }
const Implementation &Best() { return kPortable; }
#endif

const Implementation &Get(Xxh3Loop loop) {
#if TW_XXH3_DISPATCH
  if (loop != Xxh3Loop::kBest) return kLoops[static_cast<int>(loop)];
#else
  (void)loop;
#endif
  return Best();
}

XXH3_state_t *State(unsigned char *storage) { return reinterpret_cast<XXH3_state_t *>(storage); }
const XXH3_state_t *State(const unsigned char *storage) { return reinterpret_cast<const XXH3_state_t *>(storage); }

}  // namespace

bool Xxh3LoopRuns(Xxh3Loop loop) { return Runs(loop); }

const char *Xxh3LoopName(Xxh3Loop loop) { return Get(loop).name; }

uint64_t Xxh3(const void *data, size_t size, Xxh3Loop loop) {
  return XXH3_64bits_internal(data, size, 0, XXH3_kSecret, sizeof(XXH3_kSecret), Get(loop).long_hash);
}

Xxh3Stream::Xxh3Stream(Xxh3Loop loop) : loop_(loop) { XXH3_64bits_reset(new (state_) XXH3_state_t); }

void Xxh3Stream::Update(const void *data, size_t size) {
  if (size != 0) Get(loop_).update(State(state_), data, size);  // NULL data is fine when size is 0
}

uint64_t Xxh3Stream::Digest() const { return XXH3_64bits_digest(State(state_)); }

}  // namespace checkpoint
}  // namespace tw
