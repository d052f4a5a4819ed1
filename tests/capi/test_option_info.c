/* tw_option_info_by_key / _by_name: the library's own option table (name, type, default, bounds,
 * readers), which bindings read instead of restating it. Every option it describes is checked against
 * what the setters and getters of a fresh tw_options actually do, so the metadata cannot drift from
 * the behaviour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

static void describes_an_option_by_key(void **state) {
  (void)state;
  tw_option_info info = TW_OPTION_INFO_INIT;
  assert_int_equal(tw_option_info_by_key(&info, TW_OPT_MAX_TO_KEEP), TW_OK);
  assert_int_equal(info.key, TW_OPT_MAX_TO_KEEP);
  assert_string_equal(info.name, "TW_OPT_MAX_TO_KEEP");
  assert_int_equal(info.type, TW_OPTION_TYPE_INT64);
  assert_int_equal(info.int64_default, 5);
  assert_int_equal(info.int64_min, 0);
  assert_true(info.int64_max == INT64_MAX);
  assert_true(info.read_by & TW_OPTION_READ_BY_SESSION);
  assert_true(info.read_by & TW_OPTION_READ_BY_SAVER);

  assert_int_equal(tw_option_info_by_key(&info, TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS), TW_OK);
  assert_int_equal(info.type, TW_OPTION_TYPE_DOUBLE);
  assert_true(info.double_default == 10000.0);
  assert_true(info.double_min == 0.0);
  assert_int_equal(info.double_min_exclusive, 1);

  assert_int_equal(tw_option_info_by_key(&info, TW_OPT_CHECKPOINT_DIR), TW_OK);
  assert_int_equal(info.type, TW_OPTION_TYPE_STRING);
}

/* Every periodic hook reads its period from TW_OPT_EVERY_N_*; MonitoredTrainingSession reads its own keys. */
static void names_who_reads_an_option(void **state) {
  (void)state;
  tw_option_info info = TW_OPTION_INFO_INIT;
  assert_int_equal(tw_option_info_by_key(&info, TW_OPT_EVERY_N_STEPS), TW_OK);
  assert_int_equal(info.read_by, TW_OPTION_READ_BY_CHECKPOINT_HOOK | TW_OPTION_READ_BY_HOOKS);
  assert_int_equal(tw_option_info_by_key(&info, TW_OPT_CHECKPOINT_EVERY_N_STEPS), TW_OK);
  assert_int_equal(info.read_by, TW_OPTION_READ_BY_TRAINING_SESSION);
  assert_int_equal(tw_option_info_by_key(&info, TW_OPT_VOTE_EVERY_N_RUNS), TW_OK);
  assert_true(info.read_by & TW_OPTION_READ_BY_JOB);
}

static void finds_an_option_by_name(void **state) {
  (void)state;
  tw_option_info info = TW_OPTION_INFO_INIT;
  assert_int_equal(tw_option_info_by_name(&info, "TW_OPT_ASYNC_CHECKPOINT"), TW_OK);
  assert_int_equal(info.key, TW_OPT_ASYNC_CHECKPOINT);
  info.key = 0;
  assert_int_equal(tw_option_info_by_name(&info, "async_checkpoint"), TW_OK); /* curl's rule: no prefix, any case */
  assert_int_equal(info.key, TW_OPT_ASYNC_CHECKPOINT);
  assert_string_equal(info.name, "TW_OPT_ASYNC_CHECKPOINT");
  assert_int_equal(tw_option_info_by_name(&info, "Max_To_Keep"), TW_OK);
  assert_int_equal(info.key, TW_OPT_MAX_TO_KEEP);
}

static void refuses_what_is_no_option(void **state) {
  (void)state;
  tw_option_info info = TW_OPTION_INFO_INIT;
  assert_int_equal(tw_option_info_by_key(&info, (tw_option)99), TW_NOT_FOUND);
  assert_string_equal(tw_last_error_message(), "unknown option key 99 (not a TW_OPT_* value)");
  assert_int_equal(tw_option_info_by_key(&info, (tw_option)-1), TW_NOT_FOUND);
  assert_int_equal(tw_option_info_by_name(&info, "TW_OPT_"), TW_NOT_FOUND);
  assert_int_equal(tw_option_info_by_name(&info, "max_to_keepx"), TW_NOT_FOUND);
  assert_string_equal(tw_last_error_message(), "no option named 'max_to_keepx'");
  assert_int_equal(tw_option_info_by_name(&info, NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_option_info_by_key(NULL, TW_OPT_MAX_TO_KEEP), TW_INVALID_ARGUMENT);
  info.struct_size = 4; /* below the first version */
  assert_int_equal(tw_option_info_by_key(&info, TW_OPT_MAX_TO_KEEP), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "tw_option_info"));
}

/* Each described option behaves as described: a fresh tw_options holds the default, the setter of its
 * type takes the bounds and refuses one past them, and the setters of the other types refuse it. */
static void the_table_is_what_the_setters_do(void **state) {
  (void)state;
  int described = 0;
  for (int key = -8; key < 1024; ++key) {
    tw_option_info info = TW_OPTION_INFO_INIT;
    const tw_status found = tw_option_info_by_key(&info, (tw_option)key);
    if (found == TW_NOT_FOUND) continue;
    assert_int_equal(found, TW_OK);
    ++described;
    tw_option_info named = TW_OPTION_INFO_INIT;
    assert_int_equal(tw_option_info_by_name(&named, info.name), TW_OK);
    assert_int_equal(named.key, key);
    tw_options *opts = NULL;
    assert_int_equal(tw_options_create(&opts), TW_OK);
    const tw_option k = (tw_option)key;
    if (info.type == TW_OPTION_TYPE_INT64) {
      int64_t value = 0;
      assert_int_equal(tw_options_get_int64(&value, opts, k), TW_OK);
      assert_true(value == info.int64_default);
      assert_int_equal(tw_options_set_int64(opts, k, info.int64_min), TW_OK);
      assert_int_equal(tw_options_set_int64(opts, k, info.int64_max), TW_OK);
      if (info.int64_min > INT64_MIN)
        assert_int_equal(tw_options_set_int64(opts, k, info.int64_min - 1), TW_INVALID_ARGUMENT);
      if (info.int64_max < INT64_MAX)
        assert_int_equal(tw_options_set_int64(opts, k, info.int64_max + 1), TW_INVALID_ARGUMENT);
      assert_int_equal(tw_options_set_double(opts, k, 1.0), TW_INVALID_ARGUMENT);
    } else if (info.type == TW_OPTION_TYPE_DOUBLE) {
      double value = 0;
      assert_int_equal(tw_options_get_double(&value, opts, k), TW_OK);
      assert_true(value == info.double_default);
      assert_int_equal(tw_options_set_double(opts, k, info.double_min),
                       info.double_min_exclusive ? TW_INVALID_ARGUMENT : TW_OK);
      assert_int_equal(tw_options_set_double(opts, k, info.double_min + 1.0), TW_OK);
      if (info.double_min == 0.0) assert_int_equal(tw_options_set_double(opts, k, -1.0), TW_INVALID_ARGUMENT);
      assert_int_equal(tw_options_set_int64(opts, k, 1), TW_INVALID_ARGUMENT);
    } else {
      assert_int_equal(info.type, TW_OPTION_TYPE_STRING);
      assert_int_equal(tw_options_set_string(opts, k, "x"), TW_OK);
      assert_int_equal(tw_options_set_int64(opts, k, 1), TW_INVALID_ARGUMENT);
    }
    assert_int_not_equal(info.read_by, 0);
    tw_options_destroy(opts);
  }
  assert_true(described >= 38);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(describes_an_option_by_key),       cmocka_unit_test(names_who_reads_an_option),
      cmocka_unit_test(finds_an_option_by_name),          cmocka_unit_test(refuses_what_is_no_option),
      cmocka_unit_test(the_table_is_what_the_setters_do),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
