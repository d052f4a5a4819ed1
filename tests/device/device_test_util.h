/* What the device tests share: the fake device registered for TW_DEVICE_CUDA around every case, and
 * device tensors made from host values. */
#ifndef TW_TESTS_DEVICE_TEST_UTIL_H
#define TW_TESTS_DEVICE_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_device.h"

/* A device tensor of up to 64 elements in fake device memory. */
typedef struct device_tensor {
  void *data; /* device memory: the host cannot read it */
  int64_t shape[2];
  tw_tensor view;
} device_tensor;

/* Fills *t with a device tensor named `name` of `count` elements of `dtype`, holding `bytes`. */
static inline void make_device_tensor(device_tensor *t, const char *name, tw_dtype dtype, int64_t count,
                                      const void *bytes) {
  const size_t size = (size_t)count * tw_dtype_size(dtype);
  memset(t, 0, sizeof(*t));
  t->data = fake_device_alloc(size);
  assert_non_null(t->data);
  if (size > 0) assert_int_equal(fake_device_write(t->data, bytes, size), 0);
  t->shape[0] = count;
  tw_tensor_init(&t->view);
  t->view.name = name;
  t->view.dtype = dtype;
  t->view.data = t->data;
  t->view.ndim = 1;
  t->view.shape = t->shape;
  t->view.device_type = TW_DEVICE_CUDA;
  t->view.device_id = 0;
}

static inline void set_device_floats(device_tensor *t, const float *values, int64_t count) {
  assert_int_equal(fake_device_write(t->data, values, (size_t)count * sizeof(float)), 0);
}

static inline void free_device_tensor(device_tensor *t) { fake_device_free(t->data); }

/* Every case runs with a fresh fake registered for CUDA, no failure injected, counters at 0. */
static inline int fake_setup(void **state) {
  (void)state;
  fake_device_clear_failures();
  if (fake_device_register(TW_DEVICE_CUDA) != TW_OK) return -1;
  fake_device_reset_counts();
  return 0;
}

/* ... and leaves no breach of the device contract behind, nor pinned memory once unregistered. */
static inline int fake_teardown(void **state) {
  (void)state;
  char first[512];
  fake_device_clear_failures();
  if (fake_device_unregister(TW_DEVICE_CUDA) != TW_OK) return -1;
  const int64_t misuse = fake_device_misuse(first, sizeof(first));
  if (misuse != 0) {
    print_error("fake device saw %lld breaches of the device contract; the first: %s\n", (long long)misuse, first);
    return -1;
  }
  if (fake_device_pinned_in_use() != 0) {
    print_error("%lld bytes of pinned memory still allocated after the table went\n",
                (long long)fake_device_pinned_in_use());
    return -1;
  }
  return 0;
}

static inline void assert_message_has(const char *needle) {
  const char *message = tw_last_error_message();
  if (strstr(message, needle) == NULL) fail_msg("message '%s' does not mention '%s'", message, needle);
}

#define DEVICE_TEST(f) cmocka_unit_test_setup_teardown(f, fake_setup, fake_teardown)

#endif /* TW_TESTS_DEVICE_TEST_UTIL_H */
