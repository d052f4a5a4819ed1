/* Restoring sharded checkpoints (docs/tf-semantics.md D16) with jobs of 1, 2, 3 or 4 ranks as
 * threads of thread_world.h, each rank running MonitoredTrainingSession (T2) over one checkpoint dir.
 * Every float dtype has a global [12, 5] tensor, each rank holding a slice of rows (tw_options_add_shard),
 * plus a replicated bias. A save job writes the checkpoints of steps 0 (creation, B21) and 3 (end, B23),
 * the tensors of step s holding bytes gen(s); a restore job saves nothing and is checked right after
 * creation: every rank must hold exactly its rows of gen(step) — bit-exact — whatever slicing wrote the
 * checkpoint (resharding), or fall back with every other rank to the previous checkpoint when one rank
 * cannot read the newest, or fail clearly with no byte written. Only the public C API is used. */
#define _GNU_SOURCE      /* RTLD_NEXT */
#include "scratch_dir.h" /* first after the feature macros: it selects the POSIX feature level */

#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "thread_world.h"

/* C20's fault: while g_failing_maps > 0, the memory the library reads a checkpoint or part into (an
 * anonymous MAP_NORESERVE mapping, checkpoint/io/private_file.h; a read-only private mapping of the file
 * before) fails with ENOMEM, as under RLIMIT_AS. This executable's mmap comes before
 * libc's for the library's calls (ELF interposition, as tests/distributed/fault_points.c does). */
static int g_failing_maps; /* atomics: every rank's thread maps */

void *mmap(void *address, size_t length, int prot, int flags, int fd, off_t offset) {
  void *(*real)(void *, size_t, int, int, int, off_t);
  void *symbol;
  if ((fd >= 0 && prot == PROT_READ && flags == MAP_PRIVATE) ||
      (fd < 0 && flags == (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE))) {
    for (int left = __atomic_load_n(&g_failing_maps, __ATOMIC_SEQ_CST); left > 0;) {
      if (__atomic_compare_exchange_n(&g_failing_maps, &left, left - 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        errno = ENOMEM;
        return MAP_FAILED;
      }
    }
  }
  /* POSIX's way to turn dlsym's object pointer into a function pointer (ISO C has none). */
  symbol = dlsym(RTLD_NEXT, "mmap");
  memcpy(&real, &symbol, sizeof(real));
  return real(address, length, prot, flags, fd, offset);
}

enum { kMaxRanks = 4, kRows = 12, kCols = 5, kMaxCols = 6, kVars = 6, kBias = 7, kSentinel = 0xA5 };
enum { kMaxBytes = kRows * kMaxCols * 8 };

/* Every float dtype trainwatch has. */
static const tw_dtype kDtypes[kVars] = {TW_FLOAT8_E4M3FN, TW_FLOAT8_E5M2, TW_FLOAT16,
                                        TW_BFLOAT16,      TW_FLOAT32,     TW_FLOAT64};
static const char *const kNames[kVars] = {"w_f8e4m3", "w_f8e5m2", "w_f16", "w_bf16", "w_f32", "w_f64"};

/* Byte i of variable v's global tensor as saved at global step `step`: pseudo-random, different from
 * step to step and from variable to variable, every bit pattern but the top exponent bit, which is
 * cleared so that each value is finite (CheckpointSaverHook saves no NaN or Inf: trainwatch/hooks.h). */
static uint8_t gen(int v, uint64_t i, int64_t step) {
  uint64_t x = (uint64_t)v * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + (uint64_t)step * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86855D34Dull;
  x ^= x >> 29;
  const size_t size = tw_dtype_size(kDtypes[v]);
  const int top = i % size == size - 1; /* little-endian: the byte holding sign and top exponent bits */
  return (uint8_t)(top ? x & ~0x40u : x);
}

static float bias_value(int i, int64_t step) { return (float)i * 0.5f - 1.25f + (float)step; }

/* What each rank of a job declares. */
typedef struct declaration {
  tw_dtype dtype[kVars];
  int64_t cols[kVars];
  int sharded[kVars]; /* 0: an ordinary (replicated) variable of the whole global shape */
} declaration;

typedef struct rank_out {
  tw_status create;
  tw_status close;
  char message[1024];
  int64_t step;         /* right after creation */
  int64_t creations;    /* tw_session_creation_count at the end */
  int64_t inconsistent; /* runs that began with variables other than gen(their global step) */
  uint8_t data[kVars][kMaxBytes];
  float bias[kBias];
} rank_out;

typedef struct job {
  thread_world *world;
  int ranks;
  const char *dir;
  int saves; /* 1: CheckpointSaverHook (creation and end); 0: none */
  int64_t save_steps;
  int abort_rank; /* scribbles over its variables and returns TW_ABORTED in the run from step 2; -1: none */
  int runs;
  declaration decl;
  rank_out out[kMaxRanks];
} job;

static size_t row_bytes(const job *j, int v) { return (size_t)j->decl.cols[v] * tw_dtype_size(j->decl.dtype[v]); }

/* Rank r of n holds rows [first_row(r, n), first_row(r + 1, n)): uneven slices when n does not divide 12. */
static int64_t first_row(int rank, int ranks) { return (int64_t)rank * kRows / ranks; }

static void fill(job *j, int rank, int64_t step, uint8_t data[kVars][kMaxBytes], float *bias) {
  for (int v = 0; v < kVars; ++v) {
    const int64_t begin = j->decl.sharded[v] ? first_row(rank, j->ranks) : 0;
    const int64_t end = j->decl.sharded[v] ? first_row(rank + 1, j->ranks) : kRows;
    const size_t bytes = row_bytes(j, v);
    for (uint64_t i = 0; i < (uint64_t)(end - begin) * bytes; ++i)
      data[v][i] = gen(v, (uint64_t)begin * bytes + i, step);
  }
  for (int i = 0; i < kBias; ++i) bias[i] = bias_value(i, step);
}

typedef struct rank_state {
  job *j;
  int rank;
  int aborted;
  int64_t inconsistent;
  uint8_t data[kVars][kMaxBytes];
  float bias[kBias];
} rank_state;

/* The training step of a save job: the variables, gen(step) when it begins, become gen(step + 1). */
static tw_status step_fn(void *user_data, tw_step_context *ctx) {
  rank_state *st = (rank_state *)user_data;
  const int64_t step = tw_step_context_global_step(ctx);
  static uint8_t expected_data[kMaxRanks][kVars][kMaxBytes];
  float expected_bias[kBias];
  memcpy(expected_data[st->rank], st->data, sizeof st->data);
  fill(st->j, st->rank, step, expected_data[st->rank], expected_bias);
  if (memcmp(expected_data[st->rank], st->data, sizeof st->data) != 0 ||
      memcmp(expected_bias, st->bias, sizeof expected_bias) != 0) {
    ++st->inconsistent;
  }
  if (st->rank == st->j->abort_rank && step == 2 && !st->aborted) {
    st->aborted = 1;
    memset(st->data, 0xEE, sizeof st->data);
    return TW_ABORTED;
  }
  fill(st->j, st->rank, step + 1, st->data, st->bias);
  return TW_OK;
}

static void remember_error(rank_out *out) {
  if (out->message[0] == '\0') snprintf(out->message, sizeof out->message, "%s", tw_last_error_message());
}

static void run_rank(int rank, void *arg) {
  job *j = (job *)arg;
  rank_out *out = &j->out[rank];
  memset(out, 0, sizeof *out);
  rank_state *st = (rank_state *)calloc(1, sizeof *st);
  if (st == NULL) {
    out->create = TW_RESOURCE_EXHAUSTED;
    return;
  }
  st->j = j;
  st->rank = rank;
  if (j->saves) {
    fill(j, rank, 0, st->data, st->bias);
  } else {
    memset(st->data, kSentinel, sizeof st->data);
    memset(st->bias, kSentinel, sizeof st->bias);
  }
  tw_options *opts = NULL;
  tw_status s = thread_world_options(&opts, j->world, rank, 60.0);
  if (s == TW_OK) s = tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, j->dir);
  if (s == TW_OK && j->saves) s = tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, j->save_steps);
  if (s == TW_OK && !j->saves) s = tw_options_set_none(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS);
  if (s == TW_OK) s = tw_options_set_none(opts, TW_OPT_SUMMARY_EVERY_N_STEPS);
  int64_t shapes[kVars][2], global[kVars][2], offsets[kVars][2];
  for (int v = 0; v < kVars && s == TW_OK; ++v) {
    const int64_t begin = first_row(rank, j->ranks), end = first_row(rank + 1, j->ranks);
    tw_tensor t = TW_TENSOR_INIT;
    t.name = kNames[v];
    t.dtype = j->decl.dtype[v];
    t.ndim = 2;
    t.shape = shapes[v];
    t.data = st->data[v];
    global[v][0] = kRows;
    global[v][1] = j->decl.cols[v];
    shapes[v][1] = j->decl.cols[v];
    if (j->decl.sharded[v]) {
      shapes[v][0] = end - begin;
      offsets[v][0] = begin;
      offsets[v][1] = 0;
      s = tw_options_add_shard(opts, &t, global[v], offsets[v]);
    } else {
      shapes[v][0] = kRows;
      s = tw_options_add_variable(opts, &t);
    }
  }
  int64_t bias_shape[1] = {kBias};
  tw_tensor b = TW_TENSOR_INIT;
  b.name = "bias";
  b.dtype = TW_FLOAT32;
  b.ndim = 1;
  b.shape = bias_shape;
  b.data = st->bias;
  if (s == TW_OK) s = tw_options_add_variable(opts, &b);
  tw_session *session = NULL;
  if (s == TW_OK) s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0);
  out->create = s;
  if (s != TW_OK) remember_error(out);
  tw_options_destroy(opts);
  memcpy(out->data, st->data, sizeof out->data);
  memcpy(out->bias, st->bias, sizeof out->bias);
  if (session != NULL) {
    out->step = tw_session_global_step(session);
    for (int run = 0; run < j->runs; ++run) {
      if (tw_session_run(session, NULL, 0, step_fn, st) != TW_OK) {
        remember_error(out);
        break;
      }
    }
    out->creations = tw_session_creation_count(session);
    out->inconsistent = st->inconsistent;
    out->close = tw_session_close(session);
    if (out->close != TW_OK) remember_error(out);
    if (tw_session_destroy(session) != TW_OK) remember_error(out);
  }
  free(st);
}

static declaration all_sharded(void) {
  declaration d;
  for (int v = 0; v < kVars; ++v) {
    d.dtype[v] = kDtypes[v];
    d.cols[v] = kCols;
    d.sharded[v] = 1;
  }
  return d;
}

static job *new_job(const char *dir, int ranks, int saves, declaration decl) {
  job *j = (job *)calloc(1, sizeof *j);
  assert_non_null(j);
  j->world = thread_world_create(ranks);
  assert_non_null(j->world);
  j->ranks = ranks;
  j->dir = dir;
  j->saves = saves;
  j->runs = saves ? 3 : 0;
  j->save_steps = 1000;
  j->abort_rank = -1;
  j->decl = decl;
  return j;
}

static void run_job(job *j) { assert_int_equal(thread_world_run(j->world, run_rank, j), 0); }

static void free_job(job *j) {
  thread_world_destroy(j->world);
  free(j);
}

/* A job of `ranks` writes the checkpoints of steps 0 and 3 into `dir`. */
static void save_job(const char *dir, int ranks) {
  job *j = new_job(dir, ranks, 1, all_sharded());
  run_job(j);
  for (int r = 0; r < ranks; ++r) {
    if (j->out[r].create != TW_OK || j->out[r].close != TW_OK || j->out[r].message[0] != '\0') {
      fail_msg("save job, rank %d of %d: %s", r, ranks, j->out[r].message);
    }
  }
  free_job(j);
}

/* Every rank of a restore job holds exactly its rows of gen(step), the bias and global step of `step`. */
static void expect_restored(const job *j, int64_t step) {
  for (int r = 0; r < j->ranks; ++r) {
    const rank_out *out = &j->out[r];
    if (out->create != TW_OK) fail_msg("rank %d of %d: creation failed: %s", r, j->ranks, out->message);
    assert_int_equal(out->close, TW_OK);
    if (out->step != step)
      fail_msg("rank %d of %d restored step %lld, not %lld", r, j->ranks, (long long)out->step, (long long)step);
    for (int v = 0; v < kVars; ++v) {
      const int64_t begin = j->decl.sharded[v] ? first_row(r, j->ranks) : 0;
      const int64_t end = j->decl.sharded[v] ? first_row(r + 1, j->ranks) : kRows;
      const size_t bytes = row_bytes(j, v);
      for (uint64_t i = 0; i < (uint64_t)(end - begin) * bytes; ++i) {
        if (out->data[v][i] != gen(v, (uint64_t)begin * bytes + i, step)) {
          fail_msg("rank %d of %d: '%s' byte %llu differs from step %lld's", r, j->ranks, kNames[v],
                   (unsigned long long)i, (long long)step);
        }
      }
      /* Nothing past the rank's rows was written. */
      for (size_t i = (size_t)(end - begin) * bytes; i < kMaxBytes; ++i) assert_int_equal(out->data[v][i], kSentinel);
    }
    for (int i = 0; i < kBias; ++i) assert_true(out->bias[i] == bias_value(i, step));
  }
}

/* A restore job of `ranks` over `dir`, declaring `decl`. */
static job *restore_job(const char *dir, int ranks, declaration decl) {
  job *j = new_job(dir, ranks, 0, decl);
  run_job(j);
  return j;
}

static void expect_resharded(const char *dir, int ranks, int64_t step) {
  job *j = restore_job(dir, ranks, all_sharded());
  expect_restored(j, step);
  free_job(j);
}

/* D16: shards of every float dtype (fp8 e4m3fn and e5m2, f16, bf16, f32, f64) round-trip through
 * a checkpoint of 4 parts into 4 ranks, bit-exact (D16). */
static void shards_of_every_float_dtype_round_trip_on_4_ranks(void **state) {
  (void)state;
  scratch_dir scratch;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  expect_resharded(dir, 4, 3);
  scratch_dir_destroy(&scratch);
}

/* D16 resharding: the checkpoint of 4 ranks restores into 2, 3 (uneven slices) and 1 rank. */
static void four_ranks_reshard_into_2_3_and_1(void **state) {
  (void)state;
  scratch_dir scratch;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  expect_resharded(dir, 2, 3);
  expect_resharded(dir, 3, 3);
  expect_resharded(dir, 1, 3);
  scratch_dir_destroy(&scratch);
}

/* D16 resharding: checkpoints of 2 ranks and of 1 rank (a sharded checkpoint of one part) restore into 4. */
static void two_ranks_and_one_rank_reshard_into_4(void **state) {
  (void)state;
  scratch_dir scratch;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 2);
  expect_resharded(dir, 4, 3);
  scratch_dir_destroy(&scratch);
  assert_int_equal(scratch_dir_create(&scratch), 0);
  save_job(dir, 1);
  expect_resharded(dir, 4, 3);
  scratch_dir_destroy(&scratch);
}

/* A single-process checkpoint (tw_saver, whole tensors: the 1-part case of D16) restores as shards of 4
 * ranks; its step comes from global_step (D16, C1). */
static void a_single_process_checkpoint_restores_as_shards(void **state) {
  (void)state;
  scratch_dir scratch;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  static uint8_t whole[kVars][kMaxBytes];
  tw_tensor vars[kVars + 2];
  int64_t shape[2] = {kRows, kCols}, bias_shape[1] = {kBias}, step = 3;
  float bias[kBias];
  for (int v = 0; v < kVars; ++v) {
    const size_t bytes = (size_t)kCols * tw_dtype_size(kDtypes[v]);
    for (uint64_t i = 0; i < (uint64_t)kRows * bytes; ++i) whole[v][i] = gen(v, i, step);
    vars[v] = (tw_tensor)TW_TENSOR_INIT;
    vars[v].name = kNames[v];
    vars[v].dtype = kDtypes[v];
    vars[v].ndim = 2;
    vars[v].shape = shape;
    vars[v].data = whole[v];
  }
  for (int i = 0; i < kBias; ++i) bias[i] = bias_value(i, step);
  vars[kVars] = (tw_tensor)TW_TENSOR_INIT;
  vars[kVars].name = "bias";
  vars[kVars].dtype = TW_FLOAT32;
  vars[kVars].ndim = 1;
  vars[kVars].shape = bias_shape;
  vars[kVars].data = bias;
  vars[kVars + 1] = (tw_tensor)TW_TENSOR_INIT;
  vars[kVars + 1].name = "global_step";
  vars[kVars + 1].dtype = TW_INT64;
  vars[kVars + 1].data = &step;
  tw_saver *saver = NULL;
  assert_int_equal(tw_saver_create(&saver, vars, kVars + 2), TW_OK);
  char prefix[300];
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", dir);
  const char *written = NULL;
  assert_int_equal(tw_saver_save(&written, saver, prefix, step), TW_OK);
  tw_saver_destroy(saver);
  expect_resharded(dir, 4, 3);
  scratch_dir_destroy(&scratch);
}

/* A single process's tw_saver restores the whole tensors of the checkpoint at `path` (sharded or not),
 * each byte step 3's, and global step 3. */
static void expect_whole_tensors_of_step_3(const char *path) {
  static uint8_t whole[kVars][kMaxBytes];
  memset(whole, kSentinel, sizeof whole);
  tw_tensor vars[kVars + 1];
  int64_t shape[2] = {kRows, kCols}, step = -1;
  for (int v = 0; v < kVars; ++v) {
    vars[v] = (tw_tensor)TW_TENSOR_INIT;
    vars[v].name = kNames[v];
    vars[v].dtype = kDtypes[v];
    vars[v].ndim = 2;
    vars[v].shape = shape;
    vars[v].data = whole[v];
  }
  vars[kVars] = (tw_tensor)TW_TENSOR_INIT;
  vars[kVars].name = "global_step";
  vars[kVars].dtype = TW_INT64;
  vars[kVars].data = &step;
  tw_saver *saver = NULL;
  assert_int_equal(tw_saver_create(&saver, vars, kVars + 1), TW_OK);
  if (tw_saver_restore(saver, path) != TW_OK) fail_msg("%s", tw_last_error_message());
  tw_saver_destroy(saver);
  assert_int_equal(step, 3);
  for (int v = 0; v < kVars; ++v) {
    const size_t bytes = (size_t)kCols * tw_dtype_size(kDtypes[v]);
    for (uint64_t i = 0; i < (uint64_t)kRows * bytes; ++i) assert_int_equal(whole[v][i], gen(v, i, 3));
  }
}

/* A sharded checkpoint restores whole tensors: into ordinary (replicated) variables of a 2-rank job next
 * to shards, and into a single process's tw_saver (D16: "restored into a non-sharded
 * variable = the whole tensor"). */
static void a_sharded_checkpoint_restores_whole_tensors_into_replicated_variables(void **state) {
  (void)state;
  scratch_dir scratch;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  declaration mixed = all_sharded();
  mixed.sharded[1] = mixed.sharded[4] = 0;
  job *j = restore_job(dir, 2, mixed);
  expect_restored(j, 3);
  free_job(j);

  char path[300];
  snprintf(path, sizeof path, "%s/model.ckpt-3", dir);
  expect_whole_tensors_of_step_3(path);
  scratch_dir_destroy(&scratch);
}

static void part_path(char *out, size_t size, const char *dir, int64_t step, int part, int parts) {
  snprintf(out, size, "%s/model.ckpt-%lld.part-%05d-of-%05d", dir, (long long)step, part, parts);
}

/* D16: one byte flipped in the stored chunks of part 1 of the newest checkpoint. Only the rank reading
 * those rows can notice; the vote makes every rank restore step 0 instead, bit-exact, and no rank keeps
 * anything of step 3. */
static void a_corrupt_part_makes_every_rank_fall_back_together(void **state) {
  (void)state;
  scratch_dir scratch;
  char part[400];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  part_path(part, sizeof part, dir, 3, 1, 4);
  FILE *f = fopen(part, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, 16, SEEK_SET), 0); /* the first stored byte after the 16-byte header */
  const int byte = fgetc(f);
  assert_true(byte != EOF);
  assert_int_equal(fseek(f, 16, SEEK_SET), 0);
  assert_int_equal(fputc(byte ^ 0x40, f), byte ^ 0x40);
  assert_int_equal(fclose(f), 0);
  expect_resharded(dir, 4, 0);
  expect_resharded(dir, 2, 0);
  scratch_dir_destroy(&scratch);
}

/* The checksum, size and name of every checkpoint file and the state file of `dir`, as one text. */
static void directory_contents(const char *dir, char *out, size_t size) {
  char command[400];
  snprintf(command, sizeof command, "cd '%s' && for f in model.ckpt* checkpoint; do cksum \"$f\"; done", dir);
  FILE *p = popen(command, "r");
  assert_non_null(p);
  const size_t n = fread(out, 1, size - 1, p);
  out[n] = '\0';
  assert_int_equal(pclose(p), 0);
}

static void flip_stored_byte(const char *dir, int64_t step, int part) {
  char path[400];
  part_path(path, sizeof path, dir, step, part, 4);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, 16, SEEK_SET), 0); /* the first stored byte after the 16-byte header */
  const int byte = fgetc(f);
  assert_true(byte != EOF);
  assert_int_equal(fseek(f, 16, SEEK_SET), 0);
  assert_int_equal(fputc(byte ^ 0x40, f), byte ^ 0x40);
  assert_int_equal(fclose(f), 0);
}

/* C20 in a job: one rank cannot map a part (ENOMEM, as under RLIMIT_AS). That proves nothing about
 * the checkpoint: no rank skips it, every rank fails creation with that rank's TW_RESOURCE_EXHAUSTED,
 * no variable and no file is written, and a later job restores step 3. Before, every rank fell back to
 * step 0 and the chief's saves went on over the intact checkpoints. */
static void a_rank_out_of_address_space_fails_every_rank_c20(void **state) {
  (void)state;
  scratch_dir scratch;
  char before[2048], after[2048];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  directory_contents(dir, before, sizeof before);
  __atomic_store_n(&g_failing_maps, 1, __ATOMIC_SEQ_CST);
  job *j = new_job(dir, 2, 1, all_sharded()); /* with CheckpointSaverHook: it must not save */
  run_job(j);
  __atomic_store_n(&g_failing_maps, 0, __ATOMIC_SEQ_CST);
  for (int r = 0; r < j->ranks; ++r) {
    const rank_out *out = &j->out[r];
    if (out->create != TW_RESOURCE_EXHAUSTED || strstr(out->message, "not a sign of damage") == NULL ||
        strstr(out->message, "model.ckpt-3") == NULL) {
      fail_msg("rank %d: expected TW_RESOURCE_EXHAUSTED naming model.ckpt-3, got %d: %s", r, out->create, out->message);
    }
    uint8_t initial[kVars][kMaxBytes];
    float bias[kBias];
    memset(initial, 0, sizeof initial);
    fill(j, r, 0, initial, bias); /* what the rank held before creation */
    assert_memory_equal(out->data, initial, sizeof initial);
  }
  free_job(j);
  directory_contents(dir, after, sizeof after);
  assert_string_equal(after, before);
  expect_resharded(dir, 2, 3);
  scratch_dir_destroy(&scratch);
}

/* C20 in a job: every checkpoint has a damaged part. Every rank fails creation with TW_DATA_LOSS naming
 * both, and nothing is written; before, every rank started over at step 0. */
static void every_checkpoint_damaged_fails_every_rank_c20(void **state) {
  (void)state;
  scratch_dir scratch;
  char before[2048], after[2048];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  flip_stored_byte(dir, 3, 1);
  flip_stored_byte(dir, 0, 1);
  directory_contents(dir, before, sizeof before);
  job *j = new_job(dir, 2, 1, all_sharded());
  run_job(j);
  for (int r = 0; r < j->ranks; ++r) {
    const rank_out *out = &j->out[r];
    if (out->create != TW_DATA_LOSS || strstr(out->message, "model.ckpt-3: ") == NULL ||
        strstr(out->message, "model.ckpt-0: ") == NULL || strstr(out->message, "move them out of") == NULL) {
      fail_msg("rank %d: expected TW_DATA_LOSS naming both checkpoints, got %d: %s", r, out->create, out->message);
    }
  }
  free_job(j);
  directory_contents(dir, after, sizeof after);
  assert_string_equal(after, before);
  scratch_dir_destroy(&scratch);
}

/* D16: a part of the newest checkpoint is gone: every rank of a 2-rank job restores step 0. */
static void a_missing_part_makes_every_rank_fall_back_together(void **state) {
  (void)state;
  scratch_dir scratch;
  char part[400];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  part_path(part, sizeof part, dir, 3, 2, 4);
  assert_int_equal(unlink(part), 0);
  expect_resharded(dir, 2, 0);
  scratch_dir_destroy(&scratch);
}

/* D8 with D16 in a sharded job: rank 2's step aborts (after scribbling over its rows) in the run from
 * step 2, after the other ranks' steps moved theirs to gen(3); every rank re-creates its session and
 * restores its rows of step 2 by the vote, so the retried run begins from gen(2) everywhere. */
static void a_recovery_restores_every_ranks_rows_of_the_same_checkpoint(void **state) {
  (void)state;
  scratch_dir scratch;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  job *j = new_job(dir, 4, 1, all_sharded());
  j->save_steps = 2;
  j->abort_rank = 2;
  run_job(j);
  for (int r = 0; r < 4; ++r) {
    const rank_out *out = &j->out[r];
    if (out->create != TW_OK || out->close != TW_OK || out->message[0] != '\0') {
      fail_msg("rank %d: %s", r, out->message);
    }
    assert_int_equal(out->creations, 2);
    if (out->inconsistent != 0) fail_msg("rank %d: %lld runs began from other rows", r, (long long)out->inconsistent);
  }
  free_job(j);
  expect_resharded(dir, 4, 3);
  scratch_dir_destroy(&scratch);
}

/* D16 with C12: without a state file the chief lists the sharded checkpoints found by name (their
 * indexes; parts are not checkpoints of their own), and every rank restores the newest. */
static void sharded_checkpoints_are_found_by_name_without_a_state_file(void **state) {
  (void)state;
  scratch_dir scratch;
  char state_file[300];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  snprintf(state_file, sizeof state_file, "%s/checkpoint", dir);
  assert_int_equal(unlink(state_file), 0);
  expect_resharded(dir, 2, 3);
  scratch_dir_destroy(&scratch);
}

/* D16: a restore job declaring `decl` over a checkpoint that does not fit it fails on every rank with
 * TW_INVALID_ARGUMENT naming `variable`, and no rank's variable — not even those that fit — is written. */
static void expect_refused(const char *dir, declaration decl, const char *variable) {
  job *j = restore_job(dir, 2, decl);
  char needle[64];
  snprintf(needle, sizeof needle, "'%s'", variable);
  for (int r = 0; r < j->ranks; ++r) {
    const rank_out *out = &j->out[r];
    if (out->create != TW_INVALID_ARGUMENT || strstr(out->message, needle) == NULL) {
      fail_msg("rank %d: expected TW_INVALID_ARGUMENT naming %s, got %d: %s", r, needle, out->create, out->message);
    }
    for (int v = 0; v < kVars; ++v) {
      for (size_t i = 0; i < kMaxBytes; ++i) assert_int_equal(out->data[v][i], kSentinel);
    }
    const uint8_t *bias = (const uint8_t *)out->bias;
    for (size_t i = 0; i < sizeof out->bias; ++i) assert_int_equal(bias[i], kSentinel);
  }
  free_job(j);
}

static void a_global_shape_or_dtype_mismatch_is_a_clear_error_and_writes_nothing(void **state) {
  (void)state;
  scratch_dir scratch;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  declaration wider = all_sharded();
  wider.cols[4] = kMaxCols; /* w_f32 declared [12, 6]: the checkpoint holds [12, 5] */
  expect_refused(dir, wider, "w_f32");
  declaration retyped = all_sharded();
  retyped.dtype[2] = TW_BFLOAT16; /* w_f16 declared bfloat16 */
  expect_refused(dir, retyped, "w_f16");
  declaration whole = all_sharded();
  whole.sharded[5] = 0;
  whole.cols[5] = kMaxCols; /* a replicated w_f64 of another shape */
  expect_refused(dir, whole, "w_f64");
  scratch_dir_destroy(&scratch);
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* A job of 2 ranks restores the 4 ranks' step 3 and saves step 3 again at creation (B21) with 2 parts:
 * the 4 parts of the replaced save are removed with the commit (no index keeps them alive), the parts
 * of step 0 (still listed) stay, and the newest checkpoint restores into 4 ranks (D16). */
static void a_resave_with_fewer_parts_removes_the_replaced_parts(void **state) {
  (void)state;
  scratch_dir scratch;
  char path[400];
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  save_job(dir, 4);
  save_job(dir, 2);
  for (int part = 0; part < 4; ++part) {
    part_path(path, sizeof path, dir, 3, part, 4);
    if (exists(path)) fail_msg("%s of the replaced save is still there", path);
    part_path(path, sizeof path, dir, 0, part, 4);
    assert_true(exists(path));
  }
  for (int part = 0; part < 2; ++part) {
    part_path(path, sizeof path, dir, 3, part, 2);
    assert_true(exists(path));
  }
  expect_resharded(dir, 4, 6);
  scratch_dir_destroy(&scratch);
}

/* trainwatch-ckpt upgrade (tw_checkpoint_upgrade) of a sharded checkpoint writes one file of the current
 * format with its whole tensors, bit for bit (docs/checkpoint-format.md, "Versioning"): a single file
 * (header flags 0, version 6, no parts of its own) that a single process restores whole. */
static void a_sharded_checkpoint_upgrades_to_one_file_of_whole_tensors(void **state) {
  (void)state;
  scratch_dir scratch;
  assert_int_equal(scratch_dir_create(&scratch), 0);
  const char *dir = scratch.path;
  char index[300], upgraded[300], part[350];
  save_job(dir, 4);
  snprintf(index, sizeof index, "%s/model.ckpt-3", dir);
  snprintf(upgraded, sizeof upgraded, "%s/upgraded", dir);
  if (tw_checkpoint_upgrade(index, upgraded) != TW_OK) fail_msg("%s", tw_last_error_message());
  uint32_t header[4] = {0};
  FILE *f = fopen(upgraded, "rb");
  assert_non_null(f);
  assert_int_equal(fread(header, sizeof header, 1, f), 1);
  fclose(f);
  assert_int_equal(header[2], 6); /* version */
  assert_int_equal(header[3], 0); /* flags: a checkpoint file, not an index */
  part_path(part, sizeof part, dir, 3, 0, 4);
  assert_true(exists(part)); /* the source's parts stay */
  snprintf(part, sizeof part, "%s.part-00000-of-00004", upgraded);
  assert_false(exists(part));
  expect_whole_tensors_of_step_3(upgraded);
  scratch_dir_destroy(&scratch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shards_of_every_float_dtype_round_trip_on_4_ranks),
      cmocka_unit_test(four_ranks_reshard_into_2_3_and_1),
      cmocka_unit_test(two_ranks_and_one_rank_reshard_into_4),
      cmocka_unit_test(a_single_process_checkpoint_restores_as_shards),
      cmocka_unit_test(a_sharded_checkpoint_restores_whole_tensors_into_replicated_variables),
      cmocka_unit_test(a_corrupt_part_makes_every_rank_fall_back_together),
      cmocka_unit_test(a_rank_out_of_address_space_fails_every_rank_c20),
      cmocka_unit_test(every_checkpoint_damaged_fails_every_rank_c20),
      cmocka_unit_test(a_missing_part_makes_every_rank_fall_back_together),
      cmocka_unit_test(sharded_checkpoints_are_found_by_name_without_a_state_file),
      cmocka_unit_test(a_recovery_restores_every_ranks_rows_of_the_same_checkpoint),
      cmocka_unit_test(a_global_shape_or_dtype_mismatch_is_a_clear_error_and_writes_nothing),
      cmocka_unit_test(a_resave_with_fewer_parts_removes_the_replaced_parts),
      cmocka_unit_test(a_sharded_checkpoint_upgrades_to_one_file_of_whole_tensors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
