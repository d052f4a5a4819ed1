/* The collective seam of trainwatch/distributed.h: tw_options_set_collective's checks, ownership of
 * user_data and the options a job of many ranks reads. */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

static tw_status fake_allreduce(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout_secs) {
  (void)user_data;
  (void)values;
  (void)count;
  (void)op;
  (void)timeout_secs;
  return TW_OK;
}
static tw_status fake_broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout_secs) {
  (void)user_data;
  (void)data;
  (void)size;
  (void)root;
  (void)timeout_secs;
  return TW_OK;
}
static tw_status fake_barrier(void *user_data, double timeout_secs) {
  (void)user_data;
  (void)timeout_secs;
  return TW_OK;
}
static void count_destroy(void *user_data) { ++*(int *)user_data; }

static tw_collective valid_table(void) {
  tw_collective table = TW_COLLECTIVE_INIT;
  table.rank = 1;
  table.world_size = 4;
  table.allreduce_int64 = fake_allreduce;
  table.broadcast = fake_broadcast;
  table.barrier = fake_barrier;
  table.destroy = count_destroy;
  return table;
}

static void expect_invalid(tw_options *opts, const tw_collective *table, const char *needle) {
  int destroyed = 0;
  assert_int_equal(tw_options_set_collective(opts, table, &destroyed), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), needle));
  assert_int_equal(destroyed, 0); /* on error the caller keeps user_data */
}

static void bad_tables_are_refused_with_a_message(void **state) {
  (void)state;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  tw_collective table = valid_table();
  assert_int_equal(tw_options_set_collective(NULL, &table, NULL), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "opts"));

  table.struct_size = 8;
  expect_invalid(opts, &table, "struct_size");
  table = valid_table();
  table.world_size = 0;
  expect_invalid(opts, &table, "world_size");
  table = valid_table();
  table.rank = 4;
  expect_invalid(opts, &table, "rank 4");
  table.rank = -1;
  expect_invalid(opts, &table, "rank -1");
  table = valid_table();
  table.allreduce_int64 = NULL;
  expect_invalid(opts, &table, "allreduce_int64");
  table = valid_table();
  table.broadcast = NULL;
  expect_invalid(opts, &table, "broadcast");
  table = valid_table();
  table.barrier = NULL;
  expect_invalid(opts, &table, "barrier");
  tw_options_destroy(opts);
}

/* A program built against a newer header passes a bigger table: accepted when the slots this library
 * does not know are empty, refused when they are set (it would silently lose them). */
static void a_grown_table_is_read_up_to_what_the_library_knows(void **state) {
  (void)state;
  struct grown {
    tw_collective v1;
    void (*future_slot)(void);
  } grown;
  memset(&grown, 0, sizeof grown);
  grown.v1 = valid_table();
  grown.v1.struct_size = sizeof grown;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  int destroyed = 0;
  assert_int_equal(tw_options_set_collective(opts, &grown.v1, &destroyed), TW_OK);
  grown.future_slot = (void (*)(void))fake_barrier;
  int destroyed2 = 0;
  assert_int_equal(tw_options_set_collective(opts, &grown.v1, &destroyed2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "newer trainwatch"));
  assert_int_equal(destroyed, 0); /* the first table is still in place */
  tw_options_destroy(opts);
  assert_int_equal(destroyed, 1);
  assert_int_equal(destroyed2, 0);
}

static void user_data_is_destroyed_once_on_replace_and_on_remove(void **state) {
  (void)state;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  tw_collective table = valid_table();
  int first = 0, second = 0;
  assert_int_equal(tw_options_set_collective(opts, &table, &first), TW_OK);
  assert_int_equal(tw_options_set_collective(opts, &table, &second), TW_OK);
  assert_int_equal(first, 1);
  assert_int_equal(second, 0);
  assert_int_equal(tw_options_set_collective(opts, NULL, NULL), TW_OK);
  assert_int_equal(second, 1);
  tw_options_destroy(opts);
  assert_int_equal(first, 1);
  assert_int_equal(second, 1);
}

static void distributed_options_have_their_defaults_and_bounds(void **state) {
  (void)state;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  double secs = 0;
  int64_t value = -7;
  assert_int_equal(tw_options_get_double(&secs, opts, TW_OPT_COLLECTIVE_TIMEOUT_SECS), TW_OK);
  assert_true(secs == 600.0);
  assert_int_equal(tw_options_set_double(opts, TW_OPT_COLLECTIVE_TIMEOUT_SECS, -1.0), TW_OK); /* no limit */
  assert_int_equal(tw_options_get_int64(&value, opts, TW_OPT_VOTE_EVERY_N_RUNS), TW_OK);
  assert_int_equal(value, 1);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_VOTE_EVERY_N_RUNS, 0), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "TW_OPT_VOTE_EVERY_N_RUNS"));
  assert_int_equal(tw_options_get_int64(&value, opts, TW_OPT_RESTORE_VIA_BROADCAST), TW_OK);
  assert_int_equal(value, 0);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_RESTORE_VIA_BROADCAST, 2), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_options_get_int64(&value, opts, TW_OPT_CATCH_PREEMPTION_SIGNALS), TW_OK);
  assert_int_equal(value, 0);
  tw_options_destroy(opts);
}

/* tw_options_add_shard: the box must lie inside the global tensor; names and views as variables. */
static void shards_are_checked_against_their_global_tensor(void **state) {
  (void)state;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  float rows[2 * 3] = {0};
  int64_t shape[2] = {2, 3};
  tw_tensor var = TW_TENSOR_INIT;
  var.name = "w";
  var.dtype = TW_FLOAT32;
  var.ndim = 2;
  var.shape = shape;
  var.data = rows;
  const int64_t global[2] = {8, 3};
  const int64_t at_6[2] = {6, 0};
  const int64_t at_7[2] = {7, 0};
  const int64_t negative[2] = {-1, 0};
  const int64_t narrow[2] = {8, 2};
  assert_int_equal(tw_options_add_shard(opts, &var, global, at_7), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "shard 'w' dimension 0"));
  assert_int_equal(tw_options_add_shard(opts, &var, global, negative), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_options_add_shard(opts, &var, narrow, at_6), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "dimension 1"));
  assert_int_equal(tw_options_add_shard(opts, &var, NULL, at_6), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "global_shape"));
  assert_int_equal(tw_options_add_shard(opts, &var, global, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_options_add_shard(NULL, &var, global, at_6), TW_INVALID_ARGUMENT);
  tw_tensor scalar = var;
  scalar.ndim = 0;
  scalar.name = "s";
  assert_int_equal(tw_options_add_shard(opts, &scalar, global, at_6), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "scalar"));
  assert_int_equal(tw_options_add_shard(opts, &var, global, at_6), TW_OK);
  assert_int_equal(tw_options_add_shard(opts, &var, global, at_6), TW_ALREADY_EXISTS);
  assert_int_equal(tw_options_add_variable(opts, &var), TW_ALREADY_EXISTS);
  tw_options_destroy(opts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_tables_are_refused_with_a_message),
      cmocka_unit_test(a_grown_table_is_read_up_to_what_the_library_knows),
      cmocka_unit_test(user_data_is_destroyed_once_on_replace_and_on_remove),
      cmocka_unit_test(distributed_options_have_their_defaults_and_bounds),
      cmocka_unit_test(shards_are_checked_against_their_global_tensor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
