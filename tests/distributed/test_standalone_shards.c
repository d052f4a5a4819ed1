/* A standalone saver without a collective (tw_saver_create_from_options over options holding shards,
 * trainwatch/distributed.h) restores each shard's own box of the checkpoint's global tensor — from a
 * sharded checkpoint written by two ranks (threads, thread_world.h) and from a single-process checkpoint
 * of the whole tensor — all or nothing, as a rank of a job does, and refuses to save a box (one process
 * holds only part of the tensor). */
#include "scratch_dir.h" /* first: it selects the POSIX feature level */

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

#include "thread_world.h"

enum { kRanks = 2, kRowsPerRank = 3, kRows = kRanks * kRowsPerRank, kCols = 4 };
static const float kSentinel = -7.0f;

/* Element (r, c) of the saved global tensor w [kRows, kCols], and element c of the replicated b
 * [kCols]: every one distinct. */
static float value(int64_t r, int64_t c) { return (float)(r * kCols + c) + 0.25f; }
static float bias(int64_t c) { return (float)c + 100.5f; }

/* A float32 view named `name` of `ndim` dimensions over `data`. */
static tw_tensor view(const char *name, int32_t ndim, int64_t *shape, float *data) {
  tw_tensor t = TW_TENSOR_INIT;
  t.name = name;
  t.dtype = TW_FLOAT32;
  t.ndim = ndim;
  t.shape = shape;
  t.data = data;
  return t;
}

typedef struct job {
  thread_world *world;
  const char *prefix;
  tw_status status[kRanks];
  char message[kRanks][512];
} job;

/* One rank of the writing job: its rows of w and the replicated b, saved as step 1. */
static void save_rank(int rank, void *arg) {
  job *j = (job *)arg;
  float rows[kRowsPerRank * kCols], b[kCols];
  for (int r = 0; r < kRowsPerRank; ++r) {
    for (int c = 0; c < kCols; ++c) rows[r * kCols + c] = value(rank * kRowsPerRank + r, c);
  }
  for (int c = 0; c < kCols; ++c) b[c] = bias(c);
  int64_t b_shape[1] = {kCols};
  const tw_tensor b_view = view("b", 1, b_shape, b);
  tw_options *opts = NULL;
  tw_saver *saver = NULL;
  tw_status s = thread_world_row_shard_options(&opts, j->world, rank, kRowsPerRank, kCols, rows, 30.0);
  if (s == TW_OK) s = tw_options_add_variable(opts, &b_view);
  if (s == TW_OK) s = tw_saver_create_from_options(&saver, opts);
  tw_options_destroy(opts);
  if (s == TW_OK) s = tw_saver_save(NULL, saver, j->prefix, 1);
  j->status[rank] = s;
  if (s != TW_OK) snprintf(j->message[rank], sizeof j->message[rank], "%s", tw_last_error_message());
  tw_saver_destroy(saver);
}

/* The checkpoints' directory (tests/common/scratch_dir.h); the tests get its path as their state. */
static scratch_dir g_scratch;

/* The test directory *state: "sharded/model.ckpt-1" (an index and one part per rank) and
 * "single/model.ckpt-1" (one file of whole tensors), both holding w and b. */
static int write_checkpoints(void **state) {
  if (scratch_dir_create(&g_scratch) != 0) return -1;
  const char *dir = g_scratch.path;
  char prefix[1024];
  snprintf(prefix, sizeof prefix, "mkdir '%s/sharded' '%s/single' '%s/saved'", dir, dir, dir);
  assert_int_equal(system(prefix), 0);

  job j;
  memset(&j, 0, sizeof j);
  snprintf(prefix, sizeof prefix, "%s/sharded/model.ckpt", dir);
  j.prefix = prefix;
  j.world = thread_world_create(kRanks);
  assert_non_null(j.world);
  assert_int_equal(thread_world_run(j.world, save_rank, &j), 0);
  thread_world_destroy(j.world);
  for (int r = 0; r < kRanks; ++r) {
    if (j.status[r] != TW_OK) print_message("rank %d: %s\n", r, j.message[r]);
    assert_int_equal(j.status[r], TW_OK);
  }

  float whole[kRows * kCols], b[kCols];
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) whole[r * kCols + c] = value(r, c);
  }
  for (int c = 0; c < kCols; ++c) b[c] = bias(c);
  int64_t shape[2] = {kRows, kCols}, b_shape[1] = {kCols};
  const tw_tensor variables[2] = {view("w", 2, shape, whole), view("b", 1, b_shape, b)};
  tw_saver *saver = NULL;
  assert_int_equal(tw_saver_create(&saver, variables, 2), TW_OK);
  snprintf(prefix, sizeof prefix, "%s/single/model.ckpt", dir);
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 1), TW_OK);
  tw_saver_destroy(saver);
  *state = g_scratch.path;
  return 0;
}

static int remove_checkpoints(void **state) {
  (void)state;
  scratch_dir_destroy(&g_scratch);
  return 0;
}

/* A box of w: where it starts and its extent. */
typedef struct box {
  int64_t offset[2], extent[2];
} box;

/* Rows across both parts; rows and columns cut (an N-d box inside rank 1's part); an empty box. */
static const box kBoxes[] = {
    {{1, 0}, {4, kCols}},
    {{4, 1}, {2, 2}},
    {{kRows, 0}, {0, kCols}},
};

/* A saver without a collective over w's box `b` (its data `data`, kRows × kCols floats filled with
 * kSentinel), and, when `b_rows` > 0, b as a shard of global shape [b_rows] (its box [0, kCols) in
 * `b_data`, filled with kSentinel). */
static tw_saver *standalone_saver(const box *b, float *data, int64_t b_rows, float *b_data) {
  for (int k = 0; k < kRows * kCols; ++k) data[k] = kSentinel;
  for (int k = 0; k < kCols; ++k) b_data[k] = kSentinel;
  int64_t extent[2] = {b->extent[0], b->extent[1]}, b_extent[1] = {kCols};
  const int64_t global_shape[2] = {kRows, kCols}, b_global[1] = {b_rows}, b_offset[1] = {0};
  const tw_tensor w = view("w", 2, extent, data), bv = view("b", 1, b_extent, b_data);
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_add_shard(opts, &w, global_shape, b->offset), TW_OK);
  if (b_rows > 0) assert_int_equal(tw_options_add_shard(opts, &bv, b_global, b_offset), TW_OK);
  tw_saver *saver = NULL;
  assert_int_equal(tw_saver_create_from_options(&saver, opts), TW_OK);
  tw_options_destroy(opts);
  return saver;
}

/* `data` holds the box b of w, element by element in C order, and nothing past it was written. */
static void expect_box(const box *b, const float *data) {
  for (int64_t r = 0; r < b->extent[0]; ++r) {
    for (int64_t c = 0; c < b->extent[1]; ++c) {
      const float got = data[r * b->extent[1] + c];
      const float want = value(b->offset[0] + r, b->offset[1] + c);
      if (got != want) print_message("element (%lld, %lld): %g, not %g\n", (long long)r, (long long)c, got, want);
      assert_true(got == want);
    }
  }
  for (int64_t k = b->extent[0] * b->extent[1]; k < kRows * kCols; ++k) assert_true(data[k] == kSentinel);
}

/* Restores each of kBoxes, and b as the whole of its tensor, from "<*state>/<source>/model.ckpt-1". */
static void restore_each_box_from(void **state, const char *source) {
  char path[320];
  snprintf(path, sizeof path, "%s/%s/model.ckpt-1", (const char *)*state, source);
  for (size_t i = 0; i < sizeof kBoxes / sizeof kBoxes[0]; ++i) {
    float data[kRows * kCols], b[kCols];
    tw_saver *saver = standalone_saver(&kBoxes[i], data, kCols, b);
    const tw_status s = tw_saver_restore(saver, path);
    if (s != TW_OK) print_message("%s, box %zu: %s\n", source, i, tw_last_error_message());
    assert_int_equal(s, TW_OK);
    expect_box(&kBoxes[i], data);
    for (int c = 0; c < kCols; ++c) assert_true(b[c] == bias(c));
    tw_saver_destroy(saver);
  }
}

/* D16 (restore, resharding 2 → 1): a checkpoint written by two ranks restores into boxes of
 * another slicing in a process without a job, by path and as the newest of its directory. */
static void a_standalone_saver_restores_boxes_of_a_two_rank_checkpoint(void **state) {
  restore_each_box_from(state, "sharded");
  char dir[300];
  snprintf(dir, sizeof dir, "%s/sharded", (const char *)*state);
  float data[kRows * kCols], b[kCols];
  tw_saver *saver = standalone_saver(&kBoxes[1], data, kCols, b);
  const char *restored = NULL;
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, dir), TW_OK);
  assert_non_null(strstr(restored, "sharded/model.ckpt-1"));
  expect_box(&kBoxes[1], data);
  tw_saver_destroy(saver);
}

/* D16 (the 1-part case): a single process's checkpoint of whole tensors restores into boxes. */
static void a_standalone_saver_restores_boxes_of_a_single_process_checkpoint(void **state) {
  restore_each_box_from(state, "single");
}

/* All or nothing: b declared a shard of another global shape is refused naming it, and w's box, which
 * fits, is not written either. */
static void a_shard_that_does_not_fit_leaves_every_variable_untouched(void **state) {
  static const char *const kSources[] = {"sharded", "single"};
  for (int k = 0; k < 2; ++k) {
    char path[320];
    snprintf(path, sizeof path, "%s/%s/model.ckpt-1", (const char *)*state, kSources[k]);
    float data[kRows * kCols], b[kCols];
    tw_saver *saver = standalone_saver(&kBoxes[0], data, kCols + 1, b);
    assert_int_equal(tw_saver_restore(saver, path), TW_INVALID_ARGUMENT);
    assert_non_null(strstr(tw_last_error_message(), "variable 'b' is a shard of float32[5]"));
    for (int i = 0; i < kRows * kCols; ++i) assert_true(data[i] == kSentinel);
    for (int c = 0; c < kCols; ++c) assert_true(b[c] == kSentinel);
    tw_saver_destroy(saver);
  }
}

static int entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int count = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    count += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return count;
}

/* distributed.h: without a collective a box is not saved (it would stand for the whole tensor) — the
 * save fails naming it before writing anything, not even the directory's lock — while a shard that is
 * its whole global tensor saves as an ordinary variable. */
static void a_standalone_saver_refuses_to_save_a_box(void **state) {
  char dir[300], prefix[320];
  snprintf(dir, sizeof dir, "%s/saved", (const char *)*state);
  snprintf(prefix, sizeof prefix, "%s/model.ckpt", dir);
  float data[kRows * kCols], b[kCols];
  tw_saver *saver = standalone_saver(&kBoxes[0], data, kCols, b);
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 1), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "variable 'w' holds only a box of its global tensor"));
  assert_non_null(strstr(tw_last_error_message(), "collective"));
  assert_int_equal(entries(dir), 0);
  tw_saver_destroy(saver);

  const box all = {{0, 0}, {kRows, kCols}};
  saver = standalone_saver(&all, data, kCols, b);
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) data[r * kCols + c] = value(r, c);
  }
  for (int c = 0; c < kCols; ++c) b[c] = bias(c);
  const char *path = NULL;
  assert_int_equal(tw_saver_save(&path, saver, prefix, 2), TW_OK);
  float loaded[kRows * kCols];
  int64_t shape[2] = {kRows, kCols};
  const tw_tensor w = view("w", 2, shape, loaded);
  assert_int_equal(tw_checkpoint_load_variable(path, &w), TW_OK);
  expect_box(&all, loaded);
  tw_saver_destroy(saver);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_standalone_saver_restores_boxes_of_a_two_rank_checkpoint),
      cmocka_unit_test(a_standalone_saver_restores_boxes_of_a_single_process_checkpoint),
      cmocka_unit_test(a_shard_that_does_not_fit_leaves_every_variable_untouched),
      cmocka_unit_test(a_standalone_saver_refuses_to_save_a_box),
  };
  return cmocka_run_group_tests(tests, write_checkpoints, remove_checkpoints);
}
