/* tw_session_save_checkpoint (docs/tf-semantics.md C27): TF's scaffold.saver.save(sess, …) inside a session,
 * through the session's own saver — beside its CheckpointSaverHook, in a session that only restores, and
 * refused where it cannot save. Written only against the public headers. */
#include "scratch_dir.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "trainwatch.h"

static scratch_dir g_scratch;
static char g_dir[300];    /* the sessions' checkpoint directory, "<scratch>/ckpt" */
static char g_prefix[320]; /* "<scratch>/ckpt/model.ckpt" */
static float g_w[2];

static int setup(void **state) {
  (void)state;
  if (scratch_dir_create(&g_scratch) != 0) return -1;
  snprintf(g_dir, sizeof(g_dir), "%s/ckpt", g_scratch.path);
  snprintf(g_prefix, sizeof(g_prefix), "%s/model.ckpt", g_dir);
  g_w[0] = g_w[1] = 0.0f;
  return mkdir(g_dir, 0700);
}

static int teardown(void **state) {
  (void)state;
  scratch_dir_destroy(&g_scratch);
  return 0;
}

static const int64_t g_w_shape[1] = {2};

/* A view of the variable w. */
static tw_tensor w_view(void) {
  tw_tensor w = TW_TENSOR_INIT;
  w.name = "w";
  w.dtype = TW_FLOAT32;
  w.ndim = 1;
  w.shape = g_w_shape;
  w.data = g_w;
  return w;
}

/* Options holding w and, unless dir is NULL, the checkpoint directory. */
static tw_options *options_with(const char *dir) {
  tw_options *opts = NULL;
  tw_tensor w = w_view();
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_add_variable(opts, &w), TW_OK);
  if (dir != NULL) assert_int_equal(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, dir), TW_OK);
  return opts;
}

static tw_status add_one(void *user_data, tw_step_context *ctx) {
  (void)user_data;
  (void)ctx;
  g_w[0] += 1.0f;
  return TW_OK;
}

static int exists(const char *name) {
  char path[400];
  snprintf(path, sizeof(path), "%s/%s", g_dir, name);
  return access(path, F_OK) == 0;
}

/* A hook that saves through the session in every after_run, as a TF1 hook calls scaffold.saver.save. */
static tw_status g_saved_status;
static char g_saved_path[400];
static tw_status save_after_run(void *user_data, tw_run_context *ctx) {
  const char *path = NULL;
  tw_session *session = tw_run_context_session(ctx);
  g_saved_status = tw_session_save_checkpoint(&path, session, (const char *)user_data, tw_session_global_step(session));
  if (g_saved_status == TW_OK) snprintf(g_saved_path, sizeof(g_saved_path), "%s", path);
  return g_saved_status;
}

/* A session over `opts` with a CheckpointSaverHook of g_dir saving every 100 steps (in the background
 * when async_save) and, after it, a hook saving to g_prefix through the session in every after_run. */
static tw_session *saving_session(tw_options *opts, int async_save, tw_hook *hooks[2]) {
  tw_options *every_100 = NULL;
  tw_session *s = NULL;
  tw_hook_callbacks callbacks = {sizeof(callbacks), NULL, NULL, NULL, save_after_run, NULL, NULL, NULL};
  assert_int_equal(tw_options_create(&every_100), TW_OK);
  assert_int_equal(tw_options_set_int64(every_100, TW_OPT_EVERY_N_STEPS, 100), TW_OK);
  assert_int_equal(tw_options_set_int64(every_100, TW_OPT_ASYNC_CHECKPOINT, async_save), TW_OK);
  assert_int_equal(tw_checkpoint_saver_hook_create(&hooks[0], g_dir, every_100, NULL, 0), TW_OK);
  assert_int_equal(tw_hook_create(&hooks[1], "saving", &callbacks, g_prefix), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, opts, hooks, 2), TW_OK);
  tw_options_destroy(every_100);
  return s;
}

/* The session holds its directory for its CheckpointSaverHook; a hook's save goes through the same saver:
 * one state file and one retention (max_to_keep 2 counts the saver hook's checkpoints and the hook's). */
static void C27_saves_beside_the_checkpoint_saver_hook(void **state) {
  (void)state;
  tw_options *opts = options_with(g_dir);
  tw_hook *hooks[2];
  tw_session *s = NULL;
  char latest[400];
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_MAX_TO_KEEP, 2), TW_OK);
  s = saving_session(opts, 1, hooks);
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(tw_session_run(s, NULL, 0, add_one, NULL), TW_OK);
    assert_int_equal(g_saved_status, TW_OK);
    /* The saver hook's save at creation (B21), written in the background, was waited for. */
    if (i == 0) assert_true(exists("model.ckpt-0") && exists("model.ckpt-1"));
  }
  assert_true(strstr(g_saved_path, "/model.ckpt-4") != NULL);
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), g_dir), TW_OK);
  assert_string_equal(latest, g_saved_path);
  assert_false(exists("model.ckpt-0")); /* retention: the session's, over every save */
  assert_false(exists("model.ckpt-2"));
  assert_true(exists("model.ckpt-3"));
  assert_true(exists("model.ckpt-4"));
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);

  /* A restart restores the newest, the hook's, with its step. */
  g_w[0] = 0.0f;
  assert_int_equal(tw_monitored_session_create(&s, opts, NULL, 0), TW_OK);
  assert_int_equal(tw_session_global_step(s), 4);
  assert_true(g_w[0] == 4.0f);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
  tw_options_destroy(opts);
}

/* A session created without a checkpoint directory whose CheckpointSaverHook has one saves there on
 * request too: the hook's directory is where the session's saver writes (its lock, state file, retention);
 * the same session refuses any other directory, naming the hook's. */
static void C27_saves_into_the_directory_of_its_saver_hook_without_its_own(void **state) {
  (void)state;
  tw_options *no_dir = options_with(NULL);
  tw_hook *hooks[2];
  tw_session *s = NULL;
  tw_saver *other = NULL;
  const char *path = NULL;
  char latest[400], elsewhere[320];
  tw_tensor w = w_view();
  snprintf(elsewhere, sizeof(elsewhere), "%s/model.ckpt", g_scratch.path);
  assert_int_equal(tw_options_set_int64(no_dir, TW_OPT_MAX_TO_KEEP, 2), TW_OK);
  s = saving_session(no_dir, 0, hooks);
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(tw_session_run(s, NULL, 0, add_one, NULL), TW_OK);
    assert_int_equal(g_saved_status, TW_OK);
  }
  assert_true(strstr(g_saved_path, "/ckpt/model.ckpt-3") != NULL);
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), g_dir), TW_OK);
  assert_string_equal(latest, g_saved_path);
  assert_false(exists("model.ckpt-0")); /* one retention over the hook's save at creation and the three */
  assert_false(exists("model.ckpt-1"));
  assert_true(exists("model.ckpt-2") && exists("model.ckpt-3"));
  assert_int_equal(tw_session_save_checkpoint(&path, s, elsewhere, 3), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), g_dir));
  assert_int_equal(tw_saver_create(&other, &w, 1), TW_OK); /* the session's saver holds the directory */
  assert_int_equal(tw_saver_save(&path, other, g_prefix, 9), TW_FAILED_PRECONDITION);
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_saver_destroy(other);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
  tw_options_destroy(no_dir);
}

/* C24: a session that only restores leaves the directory to other writers until its own first save,
 * which locks it until close; any spelling of the directory (a symbolic link) is the same directory. */
static void C27_C24_a_restoring_session_locks_at_its_first_save(void **state) {
  (void)state;
  tw_options *opts = options_with(g_dir);
  tw_session *s = NULL;
  tw_saver *other = NULL;
  const char *path = NULL;
  char link[320], linked_prefix[340];
  tw_tensor w = w_view();
  assert_int_equal(tw_saver_create(&other, &w, 1), TW_OK);
  assert_int_equal(tw_monitored_session_create(&s, opts, NULL, 0), TW_OK);
  assert_int_equal(tw_saver_save(&path, other, g_prefix, 1), TW_OK); /* no lock held by the session */
  tw_saver_destroy(other);

  snprintf(link, sizeof(link), "%s/link", g_scratch.path);
  assert_int_equal(symlink(g_dir, link), 0);
  snprintf(linked_prefix, sizeof(linked_prefix), "%s/model.ckpt", link);
  assert_int_equal(tw_session_run(s, NULL, 0, add_one, NULL), TW_OK);
  assert_int_equal(tw_session_save_checkpoint(&path, s, linked_prefix, 7), TW_OK);
  assert_true(strstr(path, "model.ckpt-7") != NULL);
  assert_true(exists("model.ckpt-1")); /* the list read from the state file, not evicted */

  assert_int_equal(tw_saver_create(&other, &w, 1), TW_OK);
  assert_int_equal(tw_saver_save(&path, other, g_prefix, 8), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "tw_session_save_checkpoint"));
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_saver_save(&path, other, g_prefix, 8), TW_OK); /* released at close */
  tw_saver_destroy(other);
  assert_int_equal(tw_session_destroy(s), TW_OK);
  tw_options_destroy(opts);
}

static void C27_refuses_bad_arguments_and_other_directories(void **state) {
  (void)state;
  tw_options *opts = options_with(g_dir);
  tw_options *no_dir = options_with(NULL);
  tw_session *s = NULL, *without = NULL;
  const char *path = "untouched";
  char elsewhere[320], missing[340];
  snprintf(elsewhere, sizeof(elsewhere), "%s/model.ckpt", g_scratch.path);
  snprintf(missing, sizeof(missing), "%s/nope/model.ckpt", g_dir);
  assert_int_equal(tw_monitored_session_create(&s, opts, NULL, 0), TW_OK);
  assert_int_equal(tw_monitored_session_create(&without, no_dir, NULL, 0), TW_OK);

  assert_int_equal(tw_session_save_checkpoint(NULL, s, g_prefix, 1), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "out_path"));
  assert_int_equal(tw_session_save_checkpoint(&path, NULL, g_prefix, 1), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_session_save_checkpoint(&path, s, NULL, 1), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "prefix"));
  assert_int_equal(tw_session_save_checkpoint(&path, s, "", 1), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_session_save_checkpoint(&path, s, elsewhere, 1), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "not in the session's checkpoint directory"));
  assert_int_equal(tw_session_save_checkpoint(&path, s, missing, 1), TW_NOT_FOUND);
  assert_int_equal(tw_session_save_checkpoint(&path, without, elsewhere, 1), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "no checkpoint directory"));
  assert_string_equal(path, "untouched"); /* failed calls leave it */
  assert_false(exists("model.ckpt-1"));

  assert_int_equal(tw_session_save_checkpoint(&path, s, g_prefix, TW_UNSET), TW_OK); /* the prefix itself */
  assert_true(exists("model.ckpt"));
  assert_int_equal(tw_session_close(s), TW_OK);
  assert_int_equal(tw_session_save_checkpoint(&path, s, g_prefix, 2), TW_FAILED_PRECONDITION);
  assert_false(exists("model.ckpt-2"));
  assert_int_equal(tw_session_destroy(s), TW_OK);
  assert_int_equal(tw_session_destroy(without), TW_OK);
  tw_options_destroy(opts);
  tw_options_destroy(no_dir);
}

/* A progress sink runs inside a save: the session refuses to save from it (C26's rule, now checked). */
static tw_session *g_sink_session;
static tw_status g_sink_status = TW_OK;
static int g_sink_calls;
static void saving_sink(void *user_data, tw_progress_kind kind, const char *path, int64_t done, int64_t total,
                        double secs, int finished) {
  const char *saved = NULL;
  (void)user_data, (void)kind, (void)path, (void)done, (void)total, (void)secs, (void)finished;
  ++g_sink_calls;
  g_sink_status = tw_session_save_checkpoint(&saved, g_sink_session, g_prefix, 99);
}

static void C27_C26_refused_from_a_progress_sink(void **state) {
  (void)state;
  tw_options *opts = options_with(g_dir);
  const char *path = NULL;
  assert_int_equal(tw_monitored_session_create(&g_sink_session, opts, NULL, 0), TW_OK);
  assert_int_equal(tw_set_progress_sink(0.0, saving_sink, NULL), TW_OK);
  const tw_status saved = tw_session_save_checkpoint(&path, g_sink_session, g_prefix, 1);
  assert_int_equal(tw_set_progress_sink(2.0, NULL, NULL), TW_OK);
  assert_int_equal(saved, TW_OK);
  assert_true(g_sink_calls > 0);
  assert_int_equal(g_sink_status, TW_FAILED_PRECONDITION);
  assert_false(exists("model.ckpt-99"));
  assert_int_equal(tw_session_destroy(g_sink_session), TW_OK);
  tw_options_destroy(opts);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(C27_saves_beside_the_checkpoint_saver_hook, setup, teardown),
      cmocka_unit_test_setup_teardown(C27_saves_into_the_directory_of_its_saver_hook_without_its_own, setup, teardown),
      cmocka_unit_test_setup_teardown(C27_C24_a_restoring_session_locks_at_its_first_save, setup, teardown),
      cmocka_unit_test_setup_teardown(C27_refuses_bad_arguments_and_other_directories, setup, teardown),
      cmocka_unit_test_setup_teardown(C27_C26_refused_from_a_progress_sink, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
