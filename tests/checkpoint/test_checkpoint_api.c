/* The C API of trainwatch/checkpoint.h: argument checks, every documented status, ownership of the
 * returned strings and lists. */
#include "scratch_dir.h"

#include <stdint.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <trainwatch.h>

static float g_w[6];
static const int64_t g_w_shape[2] = {2, 3};
static uint16_t g_b[3];
static const int64_t g_b_shape[1] = {3};

static void views(tw_tensor vars[2]) {
  tw_tensor init = TW_TENSOR_INIT;
  vars[0] = init;
  vars[1] = init;
  vars[0].name = "w";
  vars[0].dtype = TW_FLOAT32;
  vars[0].ndim = 2;
  vars[0].shape = g_w_shape;
  vars[0].data = g_w;
  vars[1].name = "b";
  vars[1].dtype = TW_BFLOAT16;
  vars[1].ndim = 1;
  vars[1].shape = g_b_shape;
  vars[1].data = g_b;
}

static void fill(float base) {
  int i;
  for (i = 0; i < 6; ++i) g_w[i] = base + (float)i;
  for (i = 0; i < 3; ++i) g_b[i] = (uint16_t)(base * 10 + (float)i);
}

static void create_checks_arguments(void **state) {
  tw_tensor vars[2];
  tw_saver *saver = (tw_saver *)0x1;
  const int64_t strides[2] = {1, 2};
  (void)state;
  views(vars);
  assert_int_equal(tw_saver_create(NULL, vars, 2), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_saver_create(&saver, NULL, 2), TW_INVALID_ARGUMENT);
  vars[1].name = "w";
  assert_int_equal(tw_saver_create(&saver, vars, 2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "'w'"));
  vars[1].name = NULL;
  assert_int_equal(tw_saver_create(&saver, vars, 2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "variables[1] has no name"));
  views(vars);
  vars[0].strides = strides;
  assert_int_equal(tw_saver_create(&saver, vars, 2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "strided"));
  views(vars);
  vars[0].dtype = 99;
  assert_int_equal(tw_saver_create(&saver, vars, 2), TW_INVALID_ARGUMENT);
  assert_ptr_equal(saver, (tw_saver *)0x1); /* untouched on failure */
  assert_int_equal(tw_saver_create(&saver, NULL, 0), TW_OK);
  assert_int_equal(tw_saver_set_max_to_keep(saver, -1), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_saver_set_keep_checkpoint_every_n_hours(saver, 0), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_saver_set_pad_step_number(saver, 2), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_saver_set_recycle_files(saver, 2), TW_INVALID_ARGUMENT); /* C15: 0 or 1 */
  assert_int_equal(tw_saver_set_recycle_files(NULL, 1), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_saver_set_recycle_files(saver, 1), TW_OK);
  assert_int_equal(tw_saver_set_max_to_keep(NULL, 3), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_saver_set_max_to_keep(saver, 0), TW_OK);
  tw_saver_destroy(saver);
  tw_saver_destroy(NULL);
}

static void save_restore_list_load_verify(void **state) {
  scratch_dir dir;
  tw_tensor vars[2], out = TW_TENSOR_INIT, dst = TW_TENSOR_INIT;
  tw_saver *saver;
  tw_checkpoint_variables *list;
  char prefix[600], latest[1024], first[1024];
  const char *path = NULL, *names[1] = {"b"};
  float w[6];
  const int64_t wrong_shape[2] = {3, 2};
  (void)state;
  assert_int_equal(scratch_dir_create(&dir), 0);
  scratch_dir_join(&dir, "model.ckpt", prefix, sizeof(prefix));
  views(vars);
  assert_int_equal(tw_saver_create(&saver, vars, 2), TW_OK);
  assert_int_equal(tw_saver_set_pad_step_number(saver, 1), TW_OK);
  fill(1);
  assert_int_equal(tw_saver_save(&path, saver, prefix, 7), TW_OK);
  assert_non_null(strstr(path, "model.ckpt-00000007")); /* C1 with pad_step_number */
  strcpy(first, path);
  fill(2);
  assert_int_equal(tw_saver_save(&path, saver, prefix, 8), TW_OK);
  assert_int_equal(tw_saver_last_checkpoint_count(saver), 2);
  assert_int_equal(tw_saver_last_checkpoint_at(&path, saver, 0), TW_OK);
  assert_string_equal(path, first);
  assert_int_equal(tw_saver_last_checkpoint_at(&path, saver, 2), TW_OUT_OF_RANGE);
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), dir.path), TW_OK);
  assert_non_null(strstr(latest, "model.ckpt-00000008"));
  assert_int_equal(tw_latest_checkpoint(latest, 5, dir.path), TW_OUT_OF_RANGE);
  assert_non_null(strstr(tw_last_error_message(), "needs"));

  /* restore all, then a subset */
  fill(9);
  assert_int_equal(tw_saver_restore(saver, first), TW_OK);
  assert_true(g_w[1] == 2.0f && g_b[2] == 12);
  fill(9);
  assert_int_equal(tw_saver_restore_variables(saver, first, names, 1), TW_OK);
  assert_true(g_w[1] == 10.0f && g_b[2] == 12);
  assert_int_equal(tw_saver_restore(saver, "/nonexistent/model.ckpt-1"), TW_NOT_FOUND);
  assert_int_equal(tw_saver_restore(NULL, first), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_saver_restore_newest_good(&path, saver, dir.path), TW_OK);
  assert_non_null(strstr(path, "model.ckpt-00000008"));

  /* list_variables */
  assert_int_equal(tw_checkpoint_list_variables(&list, first), TW_OK);
  assert_int_equal(tw_checkpoint_variables_count(list), 2);
  assert_int_equal(tw_checkpoint_variables_at(&out, list, 0), TW_OK);
  assert_string_equal(out.name, "w");
  assert_int_equal(out.dtype, TW_FLOAT32);
  assert_int_equal(out.ndim, 2);
  assert_int_equal(out.shape[1], 3);
  assert_null(out.data);
  assert_int_equal(tw_checkpoint_variables_at(&out, list, 2), TW_OUT_OF_RANGE);
  tw_checkpoint_variables_destroy(list);
  tw_checkpoint_variables_destroy(NULL);
  assert_int_equal(tw_checkpoint_list_variables(&list, "/nonexistent"), TW_NOT_FOUND);

  /* load_variable into a caller buffer */
  dst.name = "w";
  dst.dtype = TW_FLOAT32;
  dst.ndim = 2;
  dst.shape = g_w_shape;
  dst.data = w;
  assert_int_equal(tw_checkpoint_load_variable(first, &dst), TW_OK);
  assert_true(w[5] == 6.0f);
  dst.shape = wrong_shape;
  assert_int_equal(tw_checkpoint_load_variable(first, &dst), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "variable 'w' is float32[3,2]"));
  dst.shape = g_w_shape;
  dst.name = "nope";
  assert_int_equal(tw_checkpoint_load_variable(first, &dst), TW_NOT_FOUND);
  assert_non_null(strstr(tw_last_error_message(), "Key nope not found in checkpoint"));

  /* verify, then corrupt a byte of the data and verify again */
  assert_int_equal(tw_checkpoint_verify(first), TW_OK);
  {
    FILE *f = fopen(first, "r+b");
    int c;
    fseek(f, 17, SEEK_SET);
    c = fgetc(f);
    fseek(f, 17, SEEK_SET);
    fputc(c ^ 0x01, f);
    fclose(f);
  }
  assert_int_equal(tw_checkpoint_verify(first), TW_DATA_LOSS);
  assert_non_null(strstr(tw_last_error_message(), "tensor 'w'"));
  assert_non_null(strstr(tw_last_error_message(), first));
  fill(9);
  assert_int_equal(tw_saver_restore(saver, first), TW_DATA_LOSS);
  assert_true(g_w[0] == 9.0f); /* nothing half-written */
  assert_int_equal(tw_checkpoint_verify(NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_checkpoint_upgrade(NULL, first), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "from is NULL");
  assert_int_equal(tw_checkpoint_upgrade(first, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "to is NULL");

  /* C4 through the C API */
  assert_int_equal(tw_saver_save(&path, saver, "/nonexistent-dir/model.ckpt", 1), TW_NOT_FOUND);
  assert_string_equal(tw_last_error_message(),
                      "Parent directory of /nonexistent-dir/model.ckpt-00000001 doesn't exist, can't save.");
  assert_int_equal(tw_saver_save(&path, saver, "", 1), TW_INVALID_ARGUMENT);
  tw_saver_destroy(saver);

  /* latest_checkpoint of a directory without a state file */
  scratch_dir_join(&dir, "checkpoint", latest, sizeof(latest));
  remove(latest);
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), dir.path), TW_NOT_FOUND);
  scratch_dir_destroy(&dir);
}

static void empty_saver_writes_nothing(void **state) {
  scratch_dir dir;
  tw_saver *saver;
  const char *path = "unchanged";
  char prefix[600];
  (void)state;
  assert_int_equal(scratch_dir_create(&dir), 0);
  scratch_dir_join(&dir, "model.ckpt", prefix, sizeof(prefix));
  assert_int_equal(tw_saver_create(&saver, NULL, 0), TW_OK);
  assert_int_equal(tw_saver_save(&path, saver, prefix, 1), TW_OK);
  assert_null(path);
  assert_int_equal(scratch_dir_count_entries(&dir, ""), 0);
  tw_saver_destroy(saver);
  scratch_dir_destroy(&dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(create_checks_arguments),
      cmocka_unit_test(save_restore_list_load_verify),
      cmocka_unit_test(empty_saver_writes_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
