/* Sharded checkpoints of device shards (docs/checkpoint-format.md, "Device variables"; D16, D17,
 * V10–V13):
 * ranks as threads of one process (tests/distributed/thread_world.h), each holding its rows of global
 * tensors on the fake device (tests/common/fake_device.h) and a replicated device variable, saving with
 * tw_saver_create_from_options. Each rank stages its own shards; the checkpoint holds the global
 * tensors bit-exact; every rank restores its rows; a rank whose device copy fails fails every rank's
 * save, nothing is committed, and no rank is left waiting. Only the public C API is used. */
#include "device_checkpoint_fixture.h" /* first: it selects the POSIX feature level */

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
#include "thread_world.h"

enum { kRanks = 2, kRows = 8, kCols = 5, kVars = 3, kMaxBytes = kRows * kCols * 4 };
static const tw_dtype kDtypes[kVars] = {TW_BFLOAT16, TW_FLOAT32, TW_FLOAT16};
static const char *const kNames[kVars] = {"g_bf16", "g_f32", "r_f16"};
static const int kSharded[kVars] = {1, 1, 0}; /* r_f16: replicated, whole on every rank */
static const int64_t kGlobal[2] = {kRows, kCols};

/* Byte i of variable v's global tensor at generation g (finite values: the top exponent bit cleared). */
static uint8_t gen(int v, uint64_t i, int64_t g) { return generation_byte(kDtypes[v], v, i, g); }

typedef struct job {
  thread_world *world;
  int replicated; /* every variable whole on every rank (no shard): a job where only the chief saves */
  void *dev[kRanks][kVars];
  /* Standalone savers: */
  int64_t save_step;       /* the generation saved */
  const char *fail;        /* a device operation that fails once during the save, or NULL */
  tw_status saved[kRanks]; /* tw_saver_save's status on each rank */
  char message[kRanks][512];
  tw_status restored[kRanks];
  /* Sessions: */
  int runs;
  int64_t initial;    /* the generation each rank holds before creating its session */
  int no_dir[kRanks]; /* a rank without TW_OPT_CHECKPOINT_DIR */
  int via_broadcast;  /* TW_OPT_RESTORE_VIA_BROADCAST */
  int scribble_rank;  /* writes a NaN into g_f32 when its variables become generation scribble_gen */
  int64_t scribble_gen;
  tw_status created[kRanks];
  int64_t step_at_creation[kRanks];
  int held_at_creation[kRanks]; /* held generation step_at_creation, bit-exact */
  tw_status closed[kRanks];
} job;

static int sharded(const job *j, int v) { return kSharded[v] && !j->replicated; }
static int64_t rows_of(const job *j, int v) { return sharded(j, v) ? kRows / kRanks : kRows; }
static size_t bytes_of(const job *j, int v) { return (size_t)rows_of(j, v) * kCols * tw_dtype_size(kDtypes[v]); }
static uint64_t first_byte(const job *j, int v, int rank) {
  return sharded(j, v) ? (uint64_t)rank * bytes_of(j, v) : 0;
}

static void rank_fill(job *j, int rank, int64_t g) {
  uint8_t bytes[kMaxBytes];
  for (int v = 0; v < kVars; ++v) {
    for (size_t i = 0; i < bytes_of(j, v); ++i) bytes[i] = gen(v, first_byte(j, v, rank) + i, g);
    assert_int_equal(fake_device_write(j->dev[rank][v], bytes, bytes_of(j, v)), 0);
  }
}

static int rank_holds(job *j, int rank, int64_t g) {
  uint8_t bytes[kMaxBytes];
  for (int v = 0; v < kVars; ++v) {
    if (fake_device_read(bytes, j->dev[rank][v], bytes_of(j, v)) != 0) return 0;
    for (size_t i = 0; i < bytes_of(j, v); ++i) {
      if (bytes[i] != gen(v, first_byte(j, v, rank) + i, g)) return 0;
    }
  }
  return 1;
}

/* Rank `rank`'s device variables on `opts`: its rows of the sharded ones (tw_options_add_shard), the
 * others whole. */
static tw_status add_variables(job *j, int rank, tw_options *opts) {
  tw_status s = TW_OK;
  for (int v = 0; v < kVars && s == TW_OK; ++v) {
    int64_t shape[2] = {rows_of(j, v), kCols};
    int64_t offset[2] = {sharded(j, v) ? rank * rows_of(j, v) : 0, 0};
    tw_tensor t = TW_TENSOR_INIT;
    t.name = kNames[v];
    t.dtype = kDtypes[v];
    t.data = j->dev[rank][v];
    t.ndim = 2;
    t.shape = shape;
    t.device_type = TW_DEVICE_CUDA;
    s = sharded(j, v) ? tw_options_add_shard(opts, &t, kGlobal, offset) : tw_options_add_variable(opts, &t);
  }
  return s;
}

static void rank_body(int rank, void *arg) {
  job *j = arg;
  tw_options *opts = NULL;
  tw_saver *saver = NULL;
  char prefix[512];
  const char *path = NULL;
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", g_scratch.path);
  tw_status s = thread_world_options(&opts, j->world, rank, 30.0);
  if (s == TW_OK) s = add_variables(j, rank, opts);
  if (s == TW_OK) s = tw_saver_create_from_options(&saver, opts);
  tw_options_destroy(opts);
  if (s != TW_OK) {
    j->saved[rank] = s;
    snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
    return;
  }
  rank_fill(j, rank, j->save_step);
  if (rank == kRanks - 1 && j->fail != NULL) fake_device_fail(j->fail, 1, TW_INTERNAL);
  j->saved[rank] = tw_saver_save(&path, saver, prefix, j->save_step);
  snprintf(j->message[rank], sizeof j->message[rank], "%s", j->saved[rank] == TW_OK ? "" : tw_last_error_message());
  if (j->saved[rank] == TW_OK) {
    char saved[512];
    snprintf(saved, sizeof saved, "%s", path);
    rank_fill(j, rank, j->save_step + 100);
    j->restored[rank] = tw_saver_restore(saver, saved);
  }
  tw_saver_destroy(saver);
}

static void alloc_job(job *j) {
  for (int r = 0; r < kRanks; ++r) {
    for (int v = 0; v < kVars; ++v) {
      j->dev[r][v] = fake_device_alloc(bytes_of(j, v));
      assert_non_null(j->dev[r][v]);
    }
  }
}

static void run_job(job *j) {
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
  alloc_job(j);
  assert_int_equal(thread_world_run(j->world, rank_body, j), 0);
  thread_world_destroy(j->world);
}

static void free_job(job *j) {
  for (int r = 0; r < kRanks; ++r) {
    for (int v = 0; v < kVars; ++v) fake_device_free(j->dev[r][v]);
  }
}

/* Every rank stages its own rows; the checkpoint holds the global tensors bit-exact (read back on the
 * host, whole); every rank restores its rows into the device. */
static void device_shards_save_and_restore_bit_exact(void **state) {
  (void)state;
  job j;
  memset(&j, 0, sizeof j);
  j.save_step = 7;
  run_job(&j);
  for (int r = 0; r < kRanks; ++r) {
    if (j.saved[r] != TW_OK) fail_msg("rank %d: save failed: %s", r, j.message[r]);
    assert_int_equal(j.restored[r], TW_OK);
    assert_true(rank_holds(&j, r, 7));
  }
  char path[512];
  snprintf(path, sizeof path, "%s/model.ckpt-7", g_scratch.path);
  assert_int_equal(tw_checkpoint_verify(path), TW_OK);
  for (int v = 0; v < kVars; ++v) {
    uint8_t whole[kMaxBytes];
    tw_tensor t = TW_TENSOR_INIT;
    t.name = kNames[v];
    t.dtype = kDtypes[v];
    t.data = whole;
    t.ndim = 2;
    t.shape = kGlobal;
    assert_int_equal(tw_checkpoint_load_variable(path, &t), TW_OK);
    const size_t size = (size_t)kRows * kCols * tw_dtype_size(kDtypes[v]);
    for (size_t i = 0; i < size; ++i) {
      if (whole[i] != gen(v, i, 7)) fail_msg("%s: byte %zu differs from the saved one", kNames[v], i);
    }
  }
  free_job(&j);
}

/* D17: one rank's device copy fails; every rank's save fails (no rank waits for it), the failing
 * rank's message names the operation, and nothing is committed. */
static void check_failing_rank(const char *operation) {
  job j;
  memset(&j, 0, sizeof j);
  j.save_step = 3;
  j.fail = operation;
  tw_set_log_level(TW_LOG_ERROR + 1);
  run_job(&j);
  tw_set_log_level(TW_LOG_INFO);
  int named = 0;
  for (int r = 0; r < kRanks; ++r) {
    assert_int_not_equal(j.saved[r], TW_OK);
    named += strstr(j.message[r], operation) != NULL;
  }
  assert_true(named > 0);
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/model.ckpt-3", g_scratch.path);
  assert_int_not_equal(stat(path, &st), 0);
  snprintf(path, sizeof path, "%s/checkpoint", g_scratch.path);
  assert_int_not_equal(stat(path, &st), 0);
  free_job(&j);
}

static void D17_a_failing_copy_to_host_fails_every_ranks_save(void **state) {
  (void)state;
  check_failing_rank("copy_to_host");
}

static void D17_a_failing_pinned_allocation_fails_every_ranks_save(void **state) {
  (void)state;
  check_failing_rank("alloc_pinned");
}

/* ---- sessions of a job: every rank's CheckpointSaverHook, the restore vote, restore via broadcast -- */

typedef struct rank_run {
  job *j;
  int rank;
} rank_run;

/* The variables of step s are generation s on every rank (its rows of them). */
static tw_status train_step(void *user_data, tw_step_context *ctx) {
  rank_run *r = user_data;
  const int64_t next = tw_step_context_global_step(ctx) + 1;
  rank_fill(r->j, r->rank, next);
  if (r->rank == r->j->scribble_rank && next == r->j->scribble_gen) {
    const float nan = __builtin_nanf("");
    assert_int_equal(fake_device_write(r->j->dev[r->rank][1], &nan, sizeof nan), 0);
  }
  return TW_OK;
}

static void session_rank(int rank, void *arg) {
  job *j = arg;
  rank_run run = {j, rank};
  tw_options *opts = NULL;
  tw_session *session = NULL;
  tw_status s = thread_world_options(&opts, j->world, rank, 30.0);
  if (s == TW_OK) s = add_variables(j, rank, opts);
  if (s == TW_OK && !j->no_dir[rank]) s = tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, g_scratch.path);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 1);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_MAX_TO_KEEP, 100);
  if (s == TW_OK) s = tw_options_set_none(opts, TW_OPT_SUMMARY_EVERY_N_STEPS);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 0);
  if (s == TW_OK) s = tw_options_set_int64(opts, TW_OPT_RESTORE_VIA_BROADCAST, j->via_broadcast);
  rank_fill(j, rank, j->initial);
  if (s == TW_OK) s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0);
  tw_options_destroy(opts);
  j->created[rank] = s;
  if (s != TW_OK) {
    snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
    return;
  }
  j->step_at_creation[rank] = tw_session_global_step(session);
  j->held_at_creation[rank] = rank_holds(j, rank, j->step_at_creation[rank]);
  for (int i = 0; i < j->runs && s == TW_OK; ++i) s = tw_session_run(session, NULL, 0, train_step, &run);
  if (s == TW_OK) s = tw_session_close(session);
  j->closed[rank] = s;
  if (s != TW_OK) snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
  if (tw_session_destroy(session) != TW_OK && j->closed[rank] == TW_OK) j->closed[rank] = TW_INTERNAL;
}

static void run_sessions(job *j) {
  j->world = thread_world_create(kRanks);
  assert_non_null(j->world);
  tw_set_log_level(TW_LOG_WARNING);
  assert_int_equal(thread_world_run(j->world, session_rank, j), 0);
  tw_set_log_level(TW_LOG_INFO);
  thread_world_destroy(j->world);
  for (int r = 0; r < kRanks; ++r) {
    if (j->created[r] != TW_OK) fail_msg("rank %d: creation failed: %s", r, j->message[r]);
    if (j->closed[r] != TW_OK) fail_msg("rank %d: training failed: %s", r, j->message[r]);
  }
}

static int exists(const char *name) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", g_scratch.path, name);
  return stat(path, &st) == 0;
}

/* D17 and D16 with device shards: every rank's hook saves its rows (each rank staging its own); a NaN
 * in one rank's device shard skips the save on every rank (one count per rank over its device
 * variables, then the job's allreduce); a new job restores through the vote, every rank its rows,
 * bit-exact. */
static void D16_D17_sessions_save_and_restore_device_shards(void **state) {
  (void)state;
  job j;
  memset(&j, 0, sizeof j);
  alloc_job(&j);
  j.runs = 3;
  j.scribble_rank = 1;
  j.scribble_gen = 2;
  run_sessions(&j);
  assert_true(exists("model.ckpt-0") && exists("model.ckpt-1") && exists("model.ckpt-3"));
  assert_false(exists("model.ckpt-2")); /* rank 1's shard held a NaN: no rank saved */
  j.initial = 1000;                     /* what the restore must overwrite */
  j.runs = 0;
  j.scribble_rank = -1;
  run_sessions(&j);
  for (int r = 0; r < kRanks; ++r) {
    assert_int_equal(j.step_at_creation[r], 3);
    assert_true(j.held_at_creation[r]);
  }
  free_job(&j);
}

/* D13, V13: the chief restores its device variables and broadcasts their bytes; the other ranks, without a
 * checkpoint directory, receive them into their staging buffers and copy them to their devices. */
static void D13_restore_via_broadcast_fills_every_ranks_device_variables(void **state) {
  (void)state;
  job j;
  memset(&j, 0, sizeof j);
  j.replicated = 1;
  j.scribble_rank = -1;
  alloc_job(&j);
  j.runs = 3;
  run_sessions(&j); /* the chief saves model.ckpt-0 … -3 */
  assert_true(exists("model.ckpt-3"));
  j.initial = 1000;
  j.runs = 0;
  j.via_broadcast = 1;
  for (int r = 1; r < kRanks; ++r) j.no_dir[r] = 1;
  run_sessions(&j);
  for (int r = 0; r < kRanks; ++r) {
    assert_int_equal(j.step_at_creation[r], 3);
    assert_true(j.held_at_creation[r]);
  }
  free_job(&j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      CHECKPOINT_TEST(device_shards_save_and_restore_bit_exact),
      CHECKPOINT_TEST(D17_a_failing_copy_to_host_fails_every_ranks_save),
      CHECKPOINT_TEST(D17_a_failing_pinned_allocation_fails_every_ranks_save),
      CHECKPOINT_TEST(D16_D17_sessions_save_and_restore_device_shards),
      CHECKPOINT_TEST(D13_restore_via_broadcast_fills_every_ranks_device_variables),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
