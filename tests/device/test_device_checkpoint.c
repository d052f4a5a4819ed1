/* Checkpoints of variables on a device (trainwatch/device.h; docs/tf-semantics.md V10–V12;
 * docs/checkpoint-format.md, "Device variables") through the public API, on the fake device of
 * tests/common/fake_device.h: its memory cannot be read by the host (a library that touches it
 * crashes), its copies complete late on a worker thread (a library that reads a staging buffer before
 * waiting reads poison), and each operation can be made to fail. Every float dtype is a device
 * variable, next to a host variable; saves must be bit-exact, synchronous or asynchronous, a failing
 * device operation must write nothing and say which operation and tensor failed, a failing restore
 * must leave the checkpoint intact and the next restore must work, and the staging buffers must be
 * reused from save to save. */
#include "device_checkpoint_fixture.h" /* first: it selects the POSIX feature level */

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "fake_device.h"

enum { kVars = 6, kCount = 301 }; /* an odd element count: no size is a multiple of a vector */
static const tw_dtype kDtypes[kVars] = {TW_FLOAT8_E4M3FN, TW_FLOAT8_E5M2, TW_FLOAT16,
                                        TW_BFLOAT16,      TW_FLOAT32,     TW_FLOAT64};
static const char *const kNames[kVars] = {"w_f8e4m3", "w_f8e5m2", "w_f16", "w_bf16", "w_f32", "w_f64"};
static const int64_t kShape[1] = {kCount};
static const int64_t kBiasShape[1] = {3};

/* Byte i of variable v at generation g: finite values (generation_byte). */
static uint8_t gen(int v, uint64_t i, int64_t g) { return generation_byte(kDtypes[v], v, i, g); }

static size_t var_bytes(int v) { return (size_t)kCount * tw_dtype_size(kDtypes[v]); }

static size_t total_bytes(void) {
  size_t total = 0;
  for (int v = 0; v < kVars; ++v) total += var_bytes(v);
  return total;
}

/* The model: one device variable per float dtype and a host float32 bias. */
typedef struct model {
  void *dev[kVars];
  float bias[3];
  int64_t scribble_on_step; /* step_fn writes NaN into w_f32 (on the device) when it begins this step */
  int64_t nan_loss_on_step; /* step_fn publishes a NaN loss in the run from this step */
  float loss;
} model;

static void model_init(model *m) {
  memset(m, 0, sizeof *m);
  m->scribble_on_step = -1;
  m->nan_loss_on_step = -1;
  for (int v = 0; v < kVars; ++v) {
    m->dev[v] = fake_device_alloc(var_bytes(v));
    assert_non_null(m->dev[v]);
  }
}

static void model_free(model *m) {
  for (int v = 0; v < kVars; ++v) fake_device_free(m->dev[v]);
}

static void model_fill(model *m, int64_t g) {
  uint8_t bytes[kCount * 8];
  for (int v = 0; v < kVars; ++v) {
    for (size_t i = 0; i < var_bytes(v); ++i) bytes[i] = gen(v, i, g);
    assert_int_equal(fake_device_write(m->dev[v], bytes, var_bytes(v)), 0);
  }
  for (int i = 0; i < 3; ++i) m->bias[i] = (float)g + 0.25f * (float)i;
}

/* Asserts that device variable v holds generation g, bit for bit. */
static void variable_expect(const model *m, int v, int64_t g) {
  uint8_t bytes[kCount * 8];
  assert_int_equal(fake_device_read(bytes, m->dev[v], var_bytes(v)), 0);
  for (size_t i = 0; i < var_bytes(v); ++i) {
    if (bytes[i] != gen(v, i, g)) fail_msg("%s: byte %zu is not of generation %lld", kNames[v], i, (long long)g);
  }
}

/* Asserts that every variable holds generation g, bit for bit. */
static void model_expect(const model *m, int64_t g) {
  for (int v = 0; v < kVars; ++v) variable_expect(m, v, g);
  for (int i = 0; i < 3; ++i) assert_true(m->bias[i] == (float)g + 0.25f * (float)i);
}

static tw_tensor device_view(const model *m, int v) {
  tw_tensor t = TW_TENSOR_INIT;
  t.name = kNames[v];
  t.dtype = kDtypes[v];
  t.data = m->dev[v];
  t.ndim = 1;
  t.shape = kShape;
  t.device_type = TW_DEVICE_CUDA;
  t.device_id = 0;
  return t;
}

static tw_tensor bias_view(model *m) {
  tw_tensor t = TW_TENSOR_INIT;
  t.name = "bias";
  t.dtype = TW_FLOAT32;
  t.data = m->bias;
  t.ndim = 1;
  t.shape = kBiasShape;
  return t;
}

static tw_saver *saver_of(model *m) {
  tw_tensor views[kVars + 1];
  tw_saver *saver = NULL;
  for (int v = 0; v < kVars; ++v) views[v] = device_view(m, v);
  views[kVars] = bias_view(m);
  assert_int_equal(tw_saver_create(&saver, views, kVars + 1), TW_OK);
  return saver;
}

static int exists(const char *name) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", g_scratch.path, name);
  return stat(path, &st) == 0;
}

/* Names in the scratch directory that are not hidden (checkpoints, parts, the state file). */
static int visible_files(void) {
  int n = 0;
  DIR *dir = opendir(g_scratch.path);
  assert_non_null(dir);
  for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

static void prefix_in_scratch(char *out, size_t size) { snprintf(out, size, "%s/model.ckpt", g_scratch.path); }

/* A model holding generation g, a saver of its variables, and the checkpoints' prefix in prefix[512]. */
static tw_saver *model_and_saver(model *m, char *prefix, int64_t g) {
  model_init(m);
  prefix_in_scratch(prefix, 512);
  tw_saver *saver = saver_of(m);
  model_fill(m, g);
  return saver;
}

/* Saves `step`, and copies the checkpoint's path (the saver's to reuse) into saved[512]. */
static void save_step(tw_saver *saver, const char *prefix, int64_t step, char *saved) {
  const char *path = NULL;
  assert_int_equal(tw_saver_save(&path, saver, prefix, step), TW_OK);
  snprintf(saved, 512, "%s", path);
}

/* Asserts that checkpoint `path` holds variable v at generation g, read back on the host. */
static void expect_checkpoint_holds(const char *path, const model *m, int v, int64_t g) {
  uint8_t host[kCount * 8];
  tw_tensor t = device_view(m, v);
  t.data = host;
  t.device_type = TW_DEVICE_HOST;
  assert_int_equal(tw_checkpoint_load_variable(path, &t), TW_OK);
  for (size_t i = 0; i < var_bytes(v); ++i) assert_int_equal(host[i], gen(v, i, g));
}

/* The failed call's message names the failing device operation and a variable. */
static void expect_message_names(const char *operation) {
  const char *message = tw_last_error_message();
  if (strstr(message, operation) == NULL || strstr(message, "'w_") == NULL) {
    fail_msg("%s: the message names no operation or tensor: %s", operation, message);
  }
}

/* A failed record leaves the copies enqueued but unawaitable: their buffers are abandoned, never freed
 * or reused (the fake reclaims them); any other failure leaves nothing behind. */
static void expect_buffers_abandoned_only_by_record(const char *operation) {
  const int64_t abandoned = fake_device_reclaim_pinned();
  if (strcmp(operation, "record") == 0) {
    assert_true(abandoned >= (int64_t)total_bytes());
  } else {
    assert_int_equal(abandoned, 0);
  }
}

/* A model whose generation g is saved as step g by its own saver: how the standalone saver tests start. */
typedef struct saved_model {
  model m;
  tw_saver *saver;
  char prefix[512]; /* the checkpoints' prefix */
  char saved[512];  /* the path of the newest checkpoint */
} saved_model;

static void saved_model_create(saved_model *s, int64_t g) {
  s->saver = model_and_saver(&s->m, s->prefix, g);
  save_step(s->saver, s->prefix, g, s->saved);
}

static void saved_model_destroy(saved_model *s) {
  tw_saver_destroy(s->saver);
  model_free(&s->m);
}

/* ---- the standalone saver: synchronous saves and restores -------------------------------------- */

/* The checkpoint holds the device bytes (read back on the host by load_variable), and a restore
 * copies them back bit-exact, for every float dtype. */
static void saver_save_and_restore_are_bit_exact_for_every_float_dtype(void **state) {
  (void)state;
  saved_model s;
  saved_model_create(&s, 1);
  assert_int_equal(tw_checkpoint_verify(s.saved), TW_OK);
  for (int v = 0; v < kVars; ++v) expect_checkpoint_holds(s.saved, &s.m, v, 1); /* the file holds the device bytes */
  model_fill(&s.m, 2);
  assert_int_equal(tw_saver_restore(s.saver, s.saved), TW_OK);
  model_expect(&s.m, 1);
  saved_model_destroy(&s);
}

/* Restoring some variables copies only those to the device: the others keep their values (the
 * staging buffers of the others still hold the saved bytes, which must not reach them). */
static void restore_variables_copies_only_the_named_ones(void **state) {
  (void)state;
  saved_model s;
  const char *names[] = {"w_f16", "bias"};
  saved_model_create(&s, 1);
  model_fill(&s.m, 2);
  assert_int_equal(tw_saver_restore_variables(s.saver, s.saved, names, 2), TW_OK);
  for (int v = 0; v < kVars; ++v) variable_expect(&s.m, v, strcmp(kNames[v], "w_f16") == 0 ? 1 : 2);
  assert_true(s.m.bias[0] == 1.0f);
  saved_model_destroy(&s);
}

/* load_variable into a device view: decoded on the host, copied to the device. */
static void load_variable_into_a_device_view(void **state) {
  (void)state;
  saved_model s;
  saved_model_create(&s, 3);
  model_fill(&s.m, 4);
  for (int v = 0; v < kVars; ++v) {
    tw_tensor t = device_view(&s.m, v);
    assert_int_equal(tw_checkpoint_load_variable(s.saved, &t), TW_OK);
  }
  s.m.bias[0] = 3.0f, s.m.bias[1] = 3.25f, s.m.bias[2] = 3.5f;
  model_expect(&s.m, 3);
  saved_model_destroy(&s);
}

/* One pinned copy of the state at most, reused: the first save allocates the staging buffers, later
 * saves and restores allocate none. */
static void staging_buffers_are_reused_from_save_to_save(void **state) {
  (void)state;
  saved_model s;
  saved_model_create(&s, 1);
  const int64_t allocations = fake_device_counts("alloc_pinned").calls;
  const int64_t pinned = fake_device_pinned_in_use();
  assert_true(allocations > 0);
  assert_true(pinned >= (int64_t)total_bytes());
  for (int64_t step = 2; step <= 5; ++step) {
    model_fill(&s.m, step);
    save_step(s.saver, s.prefix, step, s.saved);
  }
  model_fill(&s.m, 9);
  assert_int_equal(tw_saver_restore(s.saver, s.saved), TW_OK);
  model_expect(&s.m, 5);
  assert_int_equal(fake_device_counts("alloc_pinned").calls, allocations);
  assert_int_equal(fake_device_pinned_in_use(), pinned);
  saved_model_destroy(&s);
  assert_int_equal(fake_device_pinned_in_use(), 0); /* the saver's buffers go with it */
}

/* Each device operation of a save, failing: nothing is written, and the message names the operation
 * and a tensor; once the failure is gone the same saver saves. */
static void a_failing_device_operation_fails_the_save_and_writes_nothing(void **state) {
  (void)state;
  static const char *const kOperations[] = {"alloc_pinned", "copy_to_host", "record", "wait"};
  for (size_t k = 0; k < sizeof kOperations / sizeof kOperations[0]; ++k) {
    model m;
    char prefix[512];
    const char *path = NULL;
    tw_saver *saver = model_and_saver(&m, prefix, 1); /* a new saver: its first save allocates */
    fake_device_fail(kOperations[k], 1, TW_INTERNAL);
    assert_int_equal(tw_saver_save(&path, saver, prefix, 1), TW_INTERNAL);
    expect_message_names(kOperations[k]);
    assert_int_equal(visible_files(), 0); /* no checkpoint, no state file */
    fake_device_clear_failures();
    assert_int_equal(tw_saver_save(&path, saver, prefix, 1), TW_OK);
    assert_true(exists("model.ckpt-1"));
    model_fill(&m, 2);
    assert_int_equal(tw_saver_restore(saver, path), TW_OK);
    model_expect(&m, 1);
    tw_saver_destroy(saver);
    expect_buffers_abandoned_only_by_record(kOperations[k]);
    model_free(&m);
    scratch_dir_destroy(&g_scratch);
    assert_int_equal(scratch_dir_create(&g_scratch), 0);
  }
}

/* Each device operation of a restore, failing: the restore fails naming it, the checkpoint is intact
 * and the next restore works. A failure before the copies to the device leaves every variable as it
 * was. */
static void a_failing_device_operation_fails_the_restore_and_the_next_works(void **state) {
  (void)state;
  static const char *const kOperations[] = {"alloc_pinned", "copy_to_device", "record", "wait"};
  for (size_t k = 0; k < sizeof kOperations / sizeof kOperations[0]; ++k) {
    model m;
    char prefix[512], saved[512];
    tw_saver *writer = model_and_saver(&m, prefix, 1);
    save_step(writer, prefix, 1, saved);
    tw_saver_destroy(writer);
    tw_saver *saver = saver_of(&m); /* a new saver: its first restore allocates */
    model_fill(&m, 2);
    fake_device_fail(kOperations[k], 1, TW_INTERNAL);
    assert_int_equal(tw_saver_restore(saver, saved), TW_INTERNAL);
    expect_message_names(kOperations[k]);
    if (strcmp(kOperations[k], "alloc_pinned") == 0) model_expect(&m, 2); /* nothing was written */
    fake_device_clear_failures();
    assert_int_equal(tw_checkpoint_verify(saved), TW_OK);
    assert_int_equal(tw_saver_restore(saver, saved), TW_OK);
    model_expect(&m, 1);
    tw_saver_destroy(saver);
    expect_buffers_abandoned_only_by_record(kOperations[k]);
    model_free(&m);
  }
}

/* ---- sessions: CheckpointSaverHook, asynchronous saves, NaN before save, rollback ------------------ */

static tw_status train_step(void *user_data, tw_step_context *ctx) {
  model *m = user_data;
  const int64_t step = tw_step_context_global_step(ctx);
  model_fill(m, step + 1); /* the variables of step s are generation s */
  if (step == m->scribble_on_step) {
    const float nan = __builtin_nanf("");
    assert_int_equal(fake_device_write((uint8_t *)m->dev[4] + 4 * 7, &nan, sizeof nan), 0);
  }
  m->loss = step == m->nan_loss_on_step ? __builtin_nanf("") : 1.0f;
  tw_tensor loss = TW_TENSOR_INIT;
  loss.name = "loss";
  loss.dtype = TW_FLOAT32;
  loss.data = &m->loss;
  return tw_step_context_publish(ctx, &loss);
}

static tw_options *session_options(model *m, int async) {
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  for (int v = 0; v < kVars; ++v) {
    tw_tensor t = device_view(m, v);
    assert_int_equal(tw_options_add_variable(opts, &t), TW_OK);
  }
  tw_tensor bias = bias_view(m);
  assert_int_equal(tw_options_add_variable(opts, &bias), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, g_scratch.path), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, async), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_MAX_TO_KEEP, 100), TW_OK);
  return opts;
}

/* A model at generation 0, and session options for it. */
static tw_options *model_and_options(model *m, int async) {
  model_init(m);
  model_fill(m, 0);
  return session_options(m, async);
}

/* Destroys the session, the options and the model. */
static void session_end(tw_session *s, tw_options *opts, model *m) {
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
  model_free(m);
}

/* MonitoredTrainingSession with its CheckpointSaverHook (T6), and `hooks`. */
static tw_status open_session(tw_session **out, const tw_options *opts, tw_hook *const *hooks, size_t n_hooks) {
  return tw_monitored_training_session_create(out, opts, hooks, n_hooks, NULL, 0);
}

static void run_n(tw_session *s, model *m, int n) {
  for (int i = 0; i < n; ++i) assert_int_equal(tw_session_run(s, NULL, 0, train_step, m), TW_OK);
}

/* A session saves every step (at creation, after each run, at the end); a new session restores the
 * newest checkpoint into the device variables, bit-exact; each checkpoint holds its step's values. */
static void check_session_saves_and_restores(int async) {
  model m;
  tw_session *s = NULL;
  tw_options *opts = model_and_options(&m, async);
  assert_int_equal(open_session(&s, opts, NULL, 0), TW_OK);
  run_n(s, &m, 1);
  const int64_t allocations = fake_device_counts("alloc_pinned").calls;
  run_n(s, &m, 3);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  /* The staging buffers of the first saves served every later one. */
  assert_int_equal(fake_device_counts("alloc_pinned").calls, allocations);
  for (int64_t step = 0; step <= 4; ++step) { /* each checkpoint holds its step's values */
    char path[512];
    snprintf(path, sizeof path, "%s/model.ckpt-%lld", g_scratch.path, (long long)step);
    expect_checkpoint_holds(path, &m, 3, step);
  }
  model_fill(&m, 77);
  assert_int_equal(open_session(&s, opts, NULL, 0), TW_OK);
  assert_int_equal(tw_session_global_step(s), 4);
  model_expect(&m, 4);
  session_end(s, opts, &m);
}

static void sync_session_saves_and_restores_device_variables(void **state) {
  (void)state;
  check_session_saves_and_restores(0);
}

static void async_session_saves_and_restores_device_variables(void **state) {
  (void)state;
  check_session_saves_and_restores(1);
}

/* B24, V11: a device variable holding NaN skips the save, found by one count over every device variable. */
static void nan_in_a_device_variable_skips_the_save(void **state) {
  (void)state;
  model m;
  tw_session *s = NULL;
  tw_options *opts = model_and_options(&m, 0);
  m.scribble_on_step = 2; /* the variables of step 3 hold a NaN */
  assert_int_equal(open_session(&s, opts, NULL, 0), TW_OK);
  const int64_t counts = fake_device_counts("count_nonfinite").calls;
  tw_set_log_level(TW_LOG_ERROR);
  run_n(s, &m, 4);
  tw_set_log_level(TW_LOG_INFO);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  /* One count per save attempt (steps 1..4, then none at the end: the step did not move). */
  assert_int_equal(fake_device_counts("count_nonfinite").calls - counts, 4);
  assert_true(exists("model.ckpt-2") && exists("model.ckpt-4"));
  assert_false(exists("model.ckpt-3"));
  tw_options_destroy(opts);
  model_free(&m);
}

/* A count that fails is never "all finite": the save fails, naming the operation. */
static void a_failing_count_fails_the_save(void **state) {
  (void)state;
  model m;
  tw_session *s = NULL;
  tw_options *opts = model_and_options(&m, 0);
  assert_int_equal(open_session(&s, opts, NULL, 0), TW_OK);
  fake_device_fail("count_nonfinite", 1, TW_INTERNAL);
  tw_set_log_level(TW_LOG_ERROR + 1);
  assert_int_equal(tw_session_run(s, NULL, 0, train_step, &m), TW_INTERNAL);
  tw_set_log_level(TW_LOG_INFO);
  assert_non_null(strstr(tw_last_error_message(), "count_nonfinite"));
  assert_false(exists("model.ckpt-1"));
  fake_device_clear_failures();
  session_end(s, opts, &m);
}

/* An asynchronous save whose copy to the host fails: the session's run fails naming it, nothing is
 * written. */
static void a_failing_copy_fails_an_async_save(void **state) {
  (void)state;
  model m;
  tw_session *s = NULL;
  tw_options *opts = model_and_options(&m, 1);
  assert_int_equal(open_session(&s, opts, NULL, 0), TW_OK);
  run_n(s, &m, 1);
  fake_device_fail("copy_to_host", 1, TW_INTERNAL);
  tw_set_log_level(TW_LOG_ERROR + 1);
  tw_status status = tw_session_run(s, NULL, 0, train_step, &m);
  if (status == TW_OK) status = tw_session_run(s, NULL, 0, train_step, &m); /* taken at the next run */
  tw_set_log_level(TW_LOG_INFO);
  assert_int_equal(status, TW_INTERNAL);
  assert_non_null(strstr(tw_last_error_message(), "copy_to_host of 'w_"));
  assert_false(exists("model.ckpt-2"));
  fake_device_clear_failures();
  session_end(s, opts, &m);
}

/* B48, V12: a NaN loss rolls the device variables back to the newest checkpoint before that run. */
static void check_rollback(int async) {
  model m;
  tw_session *s = NULL;
  tw_hook *guard = NULL;
  const char *watch[] = {"loss"};
  tw_options *opts = model_and_options(&m, async);
  m.nan_loss_on_step = 3;
  m.scribble_on_step = 3; /* the diverged run leaves a NaN on the device too */
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_ROLLBACK), TW_OK);
  assert_int_equal(tw_nan_tensor_hook_create_with_options(&guard, watch, 1, opts, NULL, NULL, NULL), TW_OK);
  assert_int_equal(open_session(&s, opts, &guard, 1), TW_OK);
  tw_hook_destroy(guard);
  tw_set_log_level(TW_LOG_ERROR);
  run_n(s, &m, 4); /* the run from step 3 diverges: back to step 3 */
  tw_set_log_level(TW_LOG_INFO);
  assert_int_equal(tw_session_global_step(s), 3);
  model_expect(&m, 3);
  m.nan_loss_on_step = -1;
  m.scribble_on_step = -1;
  run_n(s, &m, 2);
  assert_int_equal(tw_session_global_step(s), 5);
  assert_int_equal(tw_session_close(s), TW_OK);
  session_end(s, opts, &m);
}

static void B48_rollback_restores_device_variables_sync(void **state) {
  (void)state;
  check_rollback(0);
}

static void B48_rollback_restores_device_variables_async(void **state) {
  (void)state;
  check_rollback(1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      CHECKPOINT_TEST(saver_save_and_restore_are_bit_exact_for_every_float_dtype),
      CHECKPOINT_TEST(restore_variables_copies_only_the_named_ones),
      CHECKPOINT_TEST(load_variable_into_a_device_view),
      CHECKPOINT_TEST(staging_buffers_are_reused_from_save_to_save),
      CHECKPOINT_TEST(a_failing_device_operation_fails_the_save_and_writes_nothing),
      CHECKPOINT_TEST(a_failing_device_operation_fails_the_restore_and_the_next_works),
      CHECKPOINT_TEST(sync_session_saves_and_restores_device_variables),
      CHECKPOINT_TEST(async_session_saves_and_restores_device_variables),
      CHECKPOINT_TEST(nan_in_a_device_variable_skips_the_save),
      CHECKPOINT_TEST(a_failing_count_fails_the_save),
      CHECKPOINT_TEST(a_failing_copy_fails_an_async_save),
      CHECKPOINT_TEST(B48_rollback_restores_device_variables_sync),
      CHECKPOINT_TEST(B48_rollback_restores_device_variables_async),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
