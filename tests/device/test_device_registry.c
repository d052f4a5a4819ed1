/* tw_set_device / tw_unset_device (V1) and the fake device's own contract. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fake_device.h"

static tw_status copy_stub(void *u, int32_t id, const tw_device_copy *c, size_t n) {
  (void)u, (void)id, (void)c, (void)n;
  return TW_OK;
}
static tw_status count_stub(void *u, int32_t id, const tw_tensor *t, size_t n, tw_device_scan *r) {
  (void)u, (void)id, (void)t, (void)n, (void)r;
  return TW_OK;
}
static tw_status record_stub(void *u, int32_t id, tw_device_event **e) {
  (void)u, (void)id, (void)e;
  return TW_OK;
}
static tw_status wait_stub(void *u, tw_device_event *e) {
  (void)u, (void)e;
  return TW_OK;
}
static tw_status query_stub(void *u, tw_device_event *e, int *d) {
  (void)u, (void)e, (void)d;
  return TW_OK;
}
static void release_stub(void *u, tw_device_event *e) { (void)u, (void)e; }
static tw_status alloc_stub(void *u, size_t s, void **o) {
  (void)u, (void)s, (void)o;
  return TW_OK;
}
static void free_stub(void *u, void *p) { (void)u, (void)p; }
static int destroyed;
static void destroy_counting(void *u) {
  (void)u;
  destroyed++;
}

static tw_device full_table(int32_t type) {
  tw_device t = TW_DEVICE_INIT;
  t.device_type = type;
  t.name = "stub";
  t.copy_to_host = copy_stub;
  t.copy_to_device = copy_stub;
  t.count_nonfinite = count_stub;
  t.record = record_stub;
  t.wait = wait_stub;
  t.query = query_stub;
  t.release = release_stub;
  t.alloc_pinned = alloc_stub;
  t.free_pinned = free_stub;
  t.destroy = destroy_counting;
  return t;
}

static void assert_error_mentions(const char *needle) {
  const char *message = tw_last_error_message();
  if (strstr(message, needle) == NULL) fail_msg("message '%s' does not mention '%s'", message, needle);
}

/* V1: a table is checked whole before it replaces anything; on error destroy is not called. */
static void test_bad_tables_are_refused(void **state) {
  (void)state;
  destroyed = 0;
  assert_int_equal(tw_set_device(NULL, NULL), TW_INVALID_ARGUMENT);
  tw_device t = full_table(TW_DEVICE_HOST);
  assert_int_equal(tw_set_device(&t, NULL), TW_INVALID_ARGUMENT);
  assert_error_mentions("device_type 0");
  t = full_table(TW_DEVICE_CUDA_HOST);
  assert_int_equal(tw_set_device(&t, NULL), TW_INVALID_ARGUMENT);
  t = full_table(-2);
  assert_int_equal(tw_set_device(&t, NULL), TW_INVALID_ARGUMENT);
  t = full_table(TW_DEVICE_EXT);
  t.name = NULL;
  assert_int_equal(tw_set_device(&t, NULL), TW_INVALID_ARGUMENT);
  assert_error_mentions("name");
  t = full_table(TW_DEVICE_EXT);
  t.count_nonfinite = NULL;
  assert_int_equal(tw_set_device(&t, NULL), TW_INVALID_ARGUMENT);
  assert_error_mentions("count_nonfinite");
  t = full_table(TW_DEVICE_EXT);
  t.struct_size = 8;
  assert_int_equal(tw_set_device(&t, NULL), TW_INVALID_ARGUMENT);
  assert_error_mentions("TW_DEVICE_INIT");
  assert_int_equal(destroyed, 0);
}

/* V1: replacing or removing a registration runs the old table's destroy once. */
static void test_replace_and_unset_destroy_once(void **state) {
  (void)state;
  destroyed = 0;
  tw_device t = full_table(TW_DEVICE_EXT);
  assert_int_equal(tw_set_device(&t, NULL), TW_OK);
  assert_int_equal(destroyed, 0);
  assert_int_equal(tw_set_device(&t, NULL), TW_OK);
  assert_int_equal(destroyed, 1);
  assert_int_equal(tw_unset_device(TW_DEVICE_EXT), TW_OK);
  assert_int_equal(destroyed, 2);
  assert_int_equal(tw_unset_device(TW_DEVICE_EXT), TW_OK); /* none registered: not an error */
  assert_int_equal(destroyed, 2);
  assert_int_equal(tw_unset_device(TW_DEVICE_CPU), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_unset_device(-1), TW_INVALID_ARGUMENT);
}

/* The fake's memory round-trips through its test-side mapping, and a range outside an allocation is
 * refused. */
static void test_fake_memory_round_trip(void **state) {
  (void)state;
  float values[3] = {1.5f, -2.0f, 3.25f}, back[3] = {0};
  char *device = (char *)fake_device_alloc(sizeof values);
  assert_non_null(device);
  assert_int_equal(fake_device_write(device, values, sizeof values), 0);
  assert_int_equal(fake_device_read(back, device, sizeof back), 0);
  assert_memory_equal(values, back, sizeof values);
  assert_int_equal(fake_device_read(back, values, sizeof back), -1);
  fake_device_free(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_tables_are_refused),
      cmocka_unit_test(test_replace_and_unset_destroy_once),
      cmocka_unit_test(test_fake_memory_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
