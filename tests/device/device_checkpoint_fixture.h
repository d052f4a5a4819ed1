/* What the device checkpoint tests share: a scratch directory for the checkpoints next to the fake
 * device of device_test_util.h around every case, and the pseudo-random bytes their variables hold.
 * Include it first: scratch_dir.h selects the POSIX feature level. */
#ifndef TW_TESTS_DEVICE_CHECKPOINT_FIXTURE_H
#define TW_TESTS_DEVICE_CHECKPOINT_FIXTURE_H

#include "scratch_dir.h"

#include "device_test_util.h"

static scratch_dir g_scratch;

/* A fresh scratch directory and a fresh fake registered for CUDA (fake_setup). */
static inline int checkpoint_setup(void **state) {
  if (scratch_dir_create(&g_scratch) != 0) return -1;
  return fake_setup(state);
}

/* The scratch directory removed, and fake_teardown's checks: no breach of the device contract (the
 * destroy's checks included), no pinned memory left. */
static inline int checkpoint_teardown(void **state) {
  scratch_dir_destroy(&g_scratch);
  return fake_teardown(state);
}

#define CHECKPOINT_TEST(f) cmocka_unit_test_setup_teardown(f, checkpoint_setup, checkpoint_teardown)

/* Byte i of variable v (of elements of `dtype`) at "generation" g: pseudo-random, every bit pattern
 * but the top exponent bit, cleared so that every value is finite (CheckpointSaverHook saves no NaN). */
static inline uint8_t generation_byte(tw_dtype dtype, int v, uint64_t i, int64_t g) {
  uint64_t x = (uint64_t)v * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + (uint64_t)g * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86855D34Dull;
  x ^= x >> 29;
  const size_t size = tw_dtype_size(dtype);
  return (uint8_t)(i % size == size - 1 ? x & ~0x40u : x);
}

#endif /* TW_TESTS_DEVICE_CHECKPOINT_FIXTURE_H */
