/* A restore that fails for a resource reason is not damage (C20). The restore at session creation
 * fails once for lack of memory (a decompression context that cannot be allocated) or because the
 * checkpoint cannot be mapped (RLIMIT_AS, in a forked child): creation fails with
 * TW_RESOURCE_EXHAUSTED naming the checkpoint, every file of the directory is byte-identical
 * afterwards, and a later creation restores step 2. Every checkpoint proven damaged: creation fails with
 * TW_DATA_LOSS naming each, and nothing is deleted or written. Against the public header only; the
 * allocation failure comes from this executable's ZSTD_createDCtx, which the library's call resolves
 * to before libzstd's (ELF interposition, as tests/distributed/fault_points.c does for write). */
#define _GNU_SOURCE      /* RTLD_NEXT */
#include "scratch_dir.h" /* first: it selects the POSIX feature level */

#include <dirent.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <trainwatch.h>

/* The sanitizers' runtimes reserve and map address space of their own: an RLIMIT_AS case cannot run
 * under them, so those builds leave it out rather than count a skip. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ADDRESS_SPACE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ADDRESS_SPACE_SANITIZED 1
#endif
#endif
#ifndef ADDRESS_SPACE_SANITIZED
#define ADDRESS_SPACE_SANITIZED 0
#endif

/* ---- the allocation fault: the next ZSTD_createDCtx calls fail while g_dctx_failures > 0 ---- */
typedef struct ZSTD_DCtx_s ZSTD_DCtx;
static int g_dctx_failures; /* atomics: the reader's worker threads call it */
static int g_dctx_calls;

ZSTD_DCtx *ZSTD_createDCtx(void);
ZSTD_DCtx *ZSTD_createDCtx(void) {
  ZSTD_DCtx *(*real)(void);
  void *symbol;
  __atomic_add_fetch(&g_dctx_calls, 1, __ATOMIC_SEQ_CST);
  for (int left = __atomic_load_n(&g_dctx_failures, __ATOMIC_SEQ_CST); left > 0;) {
    if (__atomic_compare_exchange_n(&g_dctx_failures, &left, left - 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
      return NULL; /* the library turns this into std::bad_alloc */
    }
  }
  /* POSIX's way to turn dlsym's object pointer into a function pointer (ISO C has none). */
  symbol = dlsym(RTLD_NEXT, "ZSTD_createDCtx");
  memcpy(&real, &symbol, sizeof(real));
  return real();
}

/* ---- the model: w moves by +1 each run; `table` (zeros) is stored zstd-coded, so a restore must
 * allocate a decompression context; `big` (pseudo-random bytes, stored raw) makes the file large
 * enough for the address-space limit to refuse its mapping ---- */
static scratch_dir g_scratch; /* each test's directory (tests/common/scratch_dir.h) */
static float g_w[2];
static int32_t g_table[16384];
static uint8_t *g_big;
static int64_t g_big_size;

static int setup_dir(void **state) {
  (void)state;
  tw_set_log_level(TW_LOG_ERROR); /* the warnings these tests provoke are expected */
  alarm(240);
  return scratch_dir_create(&g_scratch);
}
static int remove_dir(void **state) {
  (void)state;
  alarm(0);
  tw_set_log_level(TW_LOG_INFO);
  free(g_big);
  g_big = NULL;
  g_big_size = 0;
  scratch_dir_destroy(&g_scratch);
  return 0;
}

static void add_variable(tw_options *opts, const char *name, tw_dtype dtype, void *data, const int64_t *shape) {
  tw_tensor var = TW_TENSOR_INIT;
  var.name = name;
  var.dtype = dtype;
  var.data = data;
  var.ndim = 1;
  var.shape = shape;
  assert_int_equal(tw_options_add_variable(opts, &var), TW_OK);
}

static tw_options *mts_options(void) {
  static const int64_t w_shape[1] = {2}, table_shape[1] = {16384};
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, g_scratch.path), TW_OK);
  add_variable(opts, "w", TW_FLOAT32, g_w, w_shape);
  add_variable(opts, "table", TW_INT32, g_table, table_shape);
  if (g_big != NULL) add_variable(opts, "big", TW_UINT8, g_big, &g_big_size);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 0), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_ASYNC_CHECKPOINT, 0), TW_OK);
  return opts;
}

static tw_status create_chief(tw_session **s) {
  tw_options *opts = mts_options();
  const tw_status status = tw_monitored_training_session_create(s, opts, NULL, 0, NULL, 0);
  tw_options_destroy(opts);
  return status;
}

static int64_t global_step(tw_session *s) {
  int64_t value = -1;
  value = tw_session_global_step(s);
  return value;
}

static tw_status step(void *user_data, tw_step_context *ctx) {
  (void)user_data;
  (void)ctx;
  g_w[0] += 1.0f;
  return TW_OK;
}

/* A run of two steps: model.ckpt-0 (saved at creation, B21), -1 and -2, and the state file. */
static void train_two_steps(void) {
  tw_session *s = NULL;
  g_w[0] = 0.0f;
  assert_int_equal(create_chief(&s), TW_OK);
  while (global_step(s) < 2) assert_int_equal(tw_session_run(s, NULL, 0, step, NULL), TW_OK);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* Every checkpoint file and the state file, with a hash of its bytes, sorted by name, as one text.
 * Event files are left out: CheckpointSaverHook's begin opens one before any restore, as TF's does
 * (B20). */
static char *directory_contents(void) {
  size_t size = 1, used = 0;
  char *text = calloc(1, 1);
  struct dirent **names = NULL;
  const int n = scandir(g_scratch.path, &names, NULL, alphasort);
  assert_true(n >= 0);
  for (int i = 0; i < n; ++i) {
    char path[512], line[600];
    uint64_t hash = 1469598103934665603ull; /* FNV-1a */
    int c;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", g_scratch.path, names[i]->d_name);
    f = names[i]->d_name[0] == '.' || strncmp(names[i]->d_name, "events.out", 10) == 0 ? NULL : fopen(path, "rb");
    if (f != NULL) {
      while ((c = getc(f)) != EOF) hash = (hash ^ (uint64_t)c) * 1099511628211ull;
      fclose(f);
      snprintf(line, sizeof(line), "%s %016llx\n", names[i]->d_name, (unsigned long long)hash);
      size += strlen(line);
      text = realloc(text, size);
      memcpy(text + used, line, strlen(line) + 1);
      used += strlen(line);
    }
    free(names[i]);
  }
  free(names);
  return text;
}

/* After the failed creation the job still restores: step 2, and the values of step 2. */
static void a_later_creation_restores_step_2(void) {
  tw_session *s = NULL;
  g_w[0] = -100.0f;
  assert_int_equal(create_chief(&s), TW_OK);
  assert_int_equal(global_step(s), 2);
  assert_true(g_w[0] == 2.0f);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
}

/* C20: an allocation of the restore fails once. Before, the checkpoint was skipped as damaged, every
 * one after it too, and the job started at step 0 over model.ckpt-0..2. */
static void an_allocation_failure_fails_creation_and_writes_nothing_c20(void **state) {
  tw_session *s = NULL;
  char *before, *after;
  tw_status status;
  (void)state;
  train_two_steps();
  before = directory_contents();
  g_w[0] = -100.0f;
  __atomic_store_n(&g_dctx_calls, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_dctx_failures, 1, __ATOMIC_SEQ_CST);
  status = create_chief(&s);
  __atomic_store_n(&g_dctx_failures, 0, __ATOMIC_SEQ_CST);
  assert_true(__atomic_load_n(&g_dctx_calls, __ATOMIC_SEQ_CST) > 0); /* the fault was reached */
  assert_int_equal(status, TW_RESOURCE_EXHAUSTED);
  assert_null(s);
  assert_non_null(strstr(tw_last_error_message(), "model.ckpt-2"));
  assert_non_null(strstr(tw_last_error_message(), "not a sign of damage"));
  assert_true(g_w[0] == -100.0f);
  after = directory_contents();
  assert_string_equal(after, before);
  free(before);
  free(after);
  a_later_creation_restores_step_2();
}

#if !ADDRESS_SPACE_SANITIZED
/* Address space in use by this process, from /proc/self/statm (pages). */
static uint64_t address_space_bytes(void) {
  unsigned long long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  assert_non_null(f);
  assert_int_equal(fscanf(f, "%llu", &pages), 1);
  fclose(f);
  return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* C20: `ulimit -v` too small to map the checkpoint. The child sets the limit between what it uses
 * and what mapping model.ckpt-2 needs, then creates the session: exit 0 when creation failed with
 * TW_RESOURCE_EXHAUSTED naming the checkpoint. */
static void an_address_space_limit_fails_creation_and_writes_nothing_c20(void **state) {
  char *before, *after;
  pid_t child;
  int wstatus = 0;
  (void)state;
  g_big_size = 48 << 20;
  g_big = malloc((size_t)g_big_size);
  assert_non_null(g_big);
  for (int64_t i = 0; i < g_big_size; ++i) g_big[i] = (uint8_t)((i * 2654435761u) >> 13);
  train_two_steps();
  before = directory_contents();
  child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    tw_session *s = NULL;
    struct rlimit limit;
    tw_status status;
    limit.rlim_cur = limit.rlim_max = address_space_bytes() + (uint64_t)g_big_size / 2;
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(10);
    status = create_chief(&s);
    if (status != TW_RESOURCE_EXHAUSTED) {
      fprintf(stderr, "creation under RLIMIT_AS returned %s: %s\n", tw_status_name(status), tw_last_error_message());
      _exit(11);
    }
    if (strstr(tw_last_error_message(), "model.ckpt-2") == NULL) _exit(12);
    _exit(0);
  }
  assert_int_equal(waitpid(child, &wstatus, 0), child);
  assert_true(WIFEXITED(wstatus));
  assert_int_equal(WEXITSTATUS(wstatus), 0);
  after = directory_contents();
  assert_string_equal(after, before);
  free(before);
  free(after);
  a_later_creation_restores_step_2();
}
#endif

static void flip_middle_byte(const char *name) {
  char path[512];
  FILE *f;
  long size;
  int byte;
  snprintf(path, sizeof(path), "%s/%s", g_scratch.path, name);
  f = fopen(path, "r+b");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, size / 2, SEEK_SET);
  byte = fgetc(f);
  fseek(f, size / 2, SEEK_SET);
  fputc(byte ^ 0x55, f);
  fclose(f);
}

/* C20: every checkpoint proven damaged. Before, the job started at step 0 and its saves replaced
 * them; TF's restore raises DataLossError on a corrupt newest checkpoint. */
static void every_checkpoint_damaged_fails_creation_with_data_loss_c20(void **state) {
  tw_session *s = NULL;
  char *before, *after;
  (void)state;
  train_two_steps();
  flip_middle_byte("model.ckpt-0");
  flip_middle_byte("model.ckpt-1");
  flip_middle_byte("model.ckpt-2");
  before = directory_contents();
  g_w[0] = -100.0f;
  assert_int_equal(create_chief(&s), TW_DATA_LOSS);
  assert_null(s);
  assert_non_null(strstr(tw_last_error_message(), "model.ckpt-0: "));
  assert_non_null(strstr(tw_last_error_message(), "model.ckpt-1: "));
  assert_non_null(strstr(tw_last_error_message(), "model.ckpt-2: "));
  assert_non_null(strstr(tw_last_error_message(), "move them out of"));
  assert_true(g_w[0] == -100.0f);
  after = directory_contents();
  assert_string_equal(after, before);
  free(before);
  free(after);
}

int main(void) {
  const struct CMUnitTest tests[] = {
  /* First: before any restore in this process leaves the reader's spare buffer (private_file.h),
   * which the forked child would reuse instead of asking for address space. */
#if !ADDRESS_SPACE_SANITIZED
    cmocka_unit_test_setup_teardown(an_address_space_limit_fails_creation_and_writes_nothing_c20, setup_dir,
                                    remove_dir),
#endif
    cmocka_unit_test_setup_teardown(an_allocation_failure_fails_creation_and_writes_nothing_c20, setup_dir, remove_dir),
    cmocka_unit_test_setup_teardown(every_checkpoint_damaged_fails_creation_with_data_loss_c20, setup_dir, remove_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
