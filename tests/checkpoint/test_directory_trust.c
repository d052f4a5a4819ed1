/* A checkpoint directory that cannot be lost or abused, through the C API (C16, C19, C20):
 * a crafted state file never makes retention delete outside the directory (C9/C12 deletions); a
 * damaged state file is a hint, not the truth (C7, S5); FIFOs and other special files are refused at
 * once (an alarm() fails a test that would hang); a second writer of a directory is refused; a
 * checkpoint whose state-file update failed is not left orphaned; only the job's own checkpoints are
 * found by name or deleted (C19). */
#include "scratch_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h> /* after the headers it needs */
#include <trainwatch.h>

static float g_w[4];
static int64_t g_step;
static char g_warnings[16384];

static void capture(void *user_data, tw_log_level level, const char *message) {
  (void)user_data;
  if (level < TW_LOG_WARNING) return;
  strncat(g_warnings, message, sizeof(g_warnings) - strlen(g_warnings) - 2);
  strncat(g_warnings, "\n", sizeof(g_warnings) - strlen(g_warnings) - 1);
}

static int setup(void **state) {
  (void)state;
  g_warnings[0] = '\0';
  tw_set_log_sink(capture, NULL);
  alarm(60); /* a regression that blocks on a FIFO fails instead of hanging the suite */
  return 0;
}

static int teardown(void **state) {
  (void)state;
  alarm(0);
  tw_set_log_sink(NULL, NULL);
  return 0;
}

static tw_saver *make_saver(int64_t max_to_keep) {
  static const int64_t shape[1] = {4};
  tw_tensor vars[2] = {TW_TENSOR_INIT, TW_TENSOR_INIT};
  tw_saver *saver = NULL;
  vars[0].name = "w";
  vars[0].dtype = TW_FLOAT32;
  vars[0].ndim = 1;
  vars[0].shape = shape;
  vars[0].data = g_w;
  vars[1].name = "global_step";
  vars[1].dtype = TW_INT64;
  vars[1].data = &g_step;
  assert_int_equal(tw_saver_create(&saver, vars, 2), TW_OK);
  assert_int_equal(tw_saver_set_max_to_keep(saver, max_to_keep), TW_OK);
  return saver;
}

static void save(tw_saver *saver, const char *prefix, int64_t step) {
  for (int i = 0; i < 4; ++i) g_w[i] = (float)step + (float)i;
  g_step = step;
  assert_int_equal(tw_saver_save(NULL, saver, prefix, step), TW_OK);
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void copy_file(const char *from, const char *to) {
  char buffer[4096];
  size_t n;
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  assert_non_null(in);
  assert_non_null(out);
  while ((n = fread(buffer, 1, sizeof(buffer), in)) > 0) assert_int_equal(fwrite(buffer, 1, n, out), n);
  fclose(in);
  fclose(out);
}

/* Item 1: every entry of a crafted state file that is not provably the saver's own checkpoint inside
 * the directory survives retention with max_to_keep=1, with a warning; real old checkpoints still go. */
static void crafted_state_file_never_deletes_outside_the_directory(void **state) {
  scratch_dir root, other;
  char dir[600], prefix[700], path[900], victim[700], abs_victim[700], outside_ckpt[700], link[700], text[4096];
  tw_saver *saver;
  (void)state;
  assert_int_equal(scratch_dir_create(&root), 0);
  assert_int_equal(scratch_dir_create(&other), 0);
  scratch_dir_join(&root, "run", dir, sizeof(dir));
  assert_int_equal(mkdir(dir, 0777), 0);
  snprintf(prefix, sizeof(prefix), "%s/model.ckpt", dir);
  scratch_dir_join(&root, "victim", victim, sizeof(victim));
  write_text(victim, "precious\n");
  scratch_dir_join(&other, "victim", abs_victim, sizeof(abs_victim));
  write_text(abs_victim, "precious\n");

  saver = make_saver(1);
  save(saver, prefix, 1); /* a real checkpoint, which retention may delete */
  /* A real checkpoint outside the directory (the name passes, the place does not)... */
  scratch_dir_join(&root, "model.ckpt-5", outside_ckpt, sizeof(outside_ckpt));
  snprintf(path, sizeof(path), "%s-1", prefix);
  copy_file(path, outside_ckpt);
  save(saver, prefix, 5); /* the same name inside: "../model.ckpt-5" must not be mistaken for it */
  /* ...and a symbolic link inside the directory with a checkpoint name, pointing at it. */
  snprintf(link, sizeof(link), "%s/model.ckpt-6", dir);
  assert_int_equal(symlink(outside_ckpt, link), 0);
  /* A file with a checkpoint name that is not a checkpoint, and a directory with one. */
  snprintf(path, sizeof(path), "%s/model.ckpt-7", dir);
  write_text(path, "not a checkpoint\n");
  snprintf(path, sizeof(path), "%s/model.ckpt-8", dir);
  assert_int_equal(mkdir(path, 0777), 0);
  snprintf(path, sizeof(path), "%s/model.ckpt-9", dir);
  save(saver, prefix, 9);
  tw_saver_destroy(saver);

  snprintf(text, sizeof(text),
           "model_checkpoint_path: \"model.ckpt-9\"\n"
           "all_model_checkpoint_paths: \"model.ckpt-1\"\n"
           "all_model_checkpoint_paths: \"../victim\"\n"
           "all_model_checkpoint_paths: \"%s\"\n"
           "all_model_checkpoint_paths: \"../model.ckpt-5\"\n"
           "all_model_checkpoint_paths: \"model.ckpt-6\"\n"
           "all_model_checkpoint_paths: \"model.ckpt-7\"\n"
           "all_model_checkpoint_paths: \"model.ckpt-8\"\n"
           "all_model_checkpoint_paths: \"model.ckpt-9\"\n",
           abs_victim);
  snprintf(path, sizeof(path), "%s/checkpoint", dir);
  write_text(path, text);

  saver = make_saver(1);
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, dir), TW_OK); /* trims to 1: 7 evictions */
  save(saver, prefix, 10);                                                /* evicts model.ckpt-9 */
  tw_saver_destroy(saver);

  assert_true(exists(victim));
  assert_true(exists(abs_victim));
  assert_true(exists(outside_ckpt));
  assert_true(exists(link));
  snprintf(path, sizeof(path), "%s/model.ckpt-7", dir);
  assert_true(exists(path));
  snprintf(path, sizeof(path), "%s/model.ckpt-8", dir);
  assert_true(exists(path));
  /* The saver's own old checkpoints are still deleted. */
  snprintf(path, sizeof(path), "%s-1", prefix);
  assert_false(exists(path));
  snprintf(path, sizeof(path), "%s-9", prefix);
  assert_false(exists(path));
  snprintf(path, sizeof(path), "%s-10", prefix);
  assert_true(exists(path));
  /* Each refusal is a warning naming the path and why. */
  assert_non_null(strstr(g_warnings, "Not deleting "));
  assert_non_null(strstr(g_warnings, "/../victim"));
  assert_non_null(strstr(g_warnings, "not a checkpoint name the saver produces"));
  assert_non_null(strstr(g_warnings, "the path leads outside the checkpoint directory"));
  assert_non_null(strstr(g_warnings, "a symbolic link, not a regular file"));
  assert_non_null(strstr(g_warnings, "a directory, not a regular file"));
  assert_non_null(strstr(g_warnings, "its header is not a trainwatch checkpoint's"));
  assert_non_null(strstr(g_warnings, abs_victim));
  scratch_dir_destroy(&root);
  scratch_dir_destroy(&other);
}

/* Item 2: a flipped byte makes the state file unparsable; restore still finds the newest checkpoint,
 * and recovery rewrites the state file from the directory (C7 reads it as absent). */
static void damaged_state_file_is_only_a_hint(void **state) {
  scratch_dir d;
  char prefix[600], path[700], latest[700];
  tw_saver *saver;
  const char *restored = NULL;
  (void)state;
  assert_int_equal(scratch_dir_create(&d), 0);
  scratch_dir_join(&d, "model.ckpt", prefix, sizeof(prefix));
  saver = make_saver(5);
  for (int64_t s = 1; s <= 3; ++s) save(saver, prefix, s);
  tw_saver_destroy(saver);
  scratch_dir_join(&d, "checkpoint", path, sizeof(path));
  {
    static char text[4096];
    FILE *f = fopen(path, "r+b");
    size_t n;
    const char *field;
    assert_non_null(f);
    n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    field = strstr(text, "model_checkpoint_path"); /* after the job identity's comment line */
    assert_non_null(field);
    fseek(f, (long)(field - text) + 5, SEEK_SET);
    fputc('\x01', f); /* "model\x01checkpoint_path": no such field */
    fclose(f);
  }
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), d.path), TW_NOT_FOUND); /* C7: ignored */

  saver = make_saver(5);
  g_step = -1;
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, d.path), TW_OK);
  snprintf(path, sizeof(path), "%s-3", prefix);
  assert_string_equal(restored, path);
  assert_int_equal(g_step, 3);
  assert_true(g_w[0] == 3.0f);
  assert_non_null(strstr(g_warnings, "is damaged"));
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, d.path), TW_OK);
  assert_int_equal(tw_saver_last_checkpoint_count(saver), 3); /* retention re-seeded: none orphaned */
  assert_non_null(strstr(g_warnings, "rewriting it from the 3 checkpoints found"));
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), d.path), TW_OK);
  assert_string_equal(latest, path);
  tw_saver_destroy(saver);

  /* The newest listed entry is a directory, then a FIFO: skipped, the one before restored. */
  snprintf(path, sizeof(path), "%s-4", prefix);
  assert_int_equal(mkdir(path, 0777), 0);
  snprintf(path, sizeof(path), "%s-5", prefix);
  assert_int_equal(mkfifo(path, 0666), 0);
  scratch_dir_join(&d, "checkpoint", path, sizeof(path));
  { /* newest first: an over-long name, a device, a FIFO, a directory, then model.ckpt-3 */
    static char text[16384];
    char long_name[5001];
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    snprintf(text, sizeof(text),
             "model_checkpoint_path: \"%s-7\"\n"
             "all_model_checkpoint_paths: \"model.ckpt-3\"\n"
             "all_model_checkpoint_paths: \"model.ckpt-4\"\n"
             "all_model_checkpoint_paths: \"model.ckpt-5\"\n"
             "all_model_checkpoint_paths: \"/dev/null\"\n"
             "all_model_checkpoint_paths: \"%s-7\"\n",
             long_name, long_name);
    write_text(path, text);
  }
  saver = make_saver(5);
  g_warnings[0] = '\0';
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, d.path), TW_OK);
  assert_int_equal(g_step, 3);
  assert_non_null(strstr(g_warnings, "is a FIFO (named pipe), not a regular file"));
  assert_non_null(strstr(g_warnings, "is a directory, not a regular file"));
  assert_non_null(strstr(g_warnings, "/dev/null is a character device, not a regular file"));
  assert_non_null(strstr(g_warnings, "File name too long"));
  tw_saver_destroy(saver);

  /* State file gone altogether: the directory still restores. */
  unlink(path);
  saver = make_saver(5);
  g_step = -1;
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, d.path), TW_OK);
  assert_int_equal(g_step, 3);
  tw_saver_destroy(saver);
  scratch_dir_destroy(&d);
}

/* Item 3: FIFOs and other special files are refused at once with a clear error, and the state file
 * has a size cap. */
static void special_files_are_refused_at_once(void **state) {
  scratch_dir d;
  char fifo[600], prefix[600], path[700], latest[700];
  tw_saver *saver;
  tw_checkpoint_variables *list = NULL;
  tw_event_reader *reader = NULL;
  tw_tensor dest = TW_TENSOR_INIT;
  static const int64_t shape[1] = {4};
  (void)state;
  assert_int_equal(scratch_dir_create(&d), 0);
  scratch_dir_join(&d, "pipe", fifo, sizeof(fifo));
  assert_int_equal(mkfifo(fifo, 0666), 0);
  saver = make_saver(5);

  assert_int_equal(tw_checkpoint_verify(fifo), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "is a FIFO (named pipe), not a regular file"));
  assert_int_equal(tw_checkpoint_list_variables(&list, fifo), TW_INVALID_ARGUMENT);
  dest.name = "w";
  dest.dtype = TW_FLOAT32;
  dest.ndim = 1;
  dest.shape = shape;
  dest.data = g_w;
  assert_int_equal(tw_checkpoint_load_variable(fifo, &dest), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_saver_restore(saver, fifo), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_event_reader_open(&reader, fifo), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "event file"));
  assert_int_equal(tw_event_reader_open(&reader, d.path), TW_INVALID_ARGUMENT); /* a directory */
  assert_int_equal(tw_checkpoint_verify("/dev/null"), TW_INVALID_ARGUMENT);     /* a device */

  /* A FIFO as the state file: "no checkpoint" (C7's warnings name it), never a hang. */
  scratch_dir_join(&d, "checkpoint", path, sizeof(path));
  assert_int_equal(mkfifo(path, 0666), 0);
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), d.path), TW_NOT_FOUND);
  assert_non_null(strstr(g_warnings, "is a FIFO (named pipe), not a regular file"));
  scratch_dir_join(&d, "model.ckpt", prefix, sizeof(prefix));
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, d.path), TW_OK);
  unlink(path);

  /* A state file over 1 MiB is refused with a clear warning. */
  {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("model_checkpoint_path: \"model.ckpt-1\"\n", f);
    for (int i = 0; i < (1 << 20) / 16 + 1; ++i) fputs("# padding.......\n", f);
    fclose(f);
  }
  g_warnings[0] = '\0';
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), d.path), TW_NOT_FOUND);
  assert_non_null(strstr(g_warnings, "larger than the 1048576-byte limit"));
  tw_saver_destroy(saver);
  scratch_dir_destroy(&d);
}

/* Item 7: a second writer of a directory is refused while the first lives — in this process and in
 * another — and may write once the first is gone; readers need no lock. */
static void second_writer_of_a_directory_is_refused(void **state) {
  scratch_dir d;
  char prefix[600], latest[700];
  tw_saver *first, *second, *reader;
  pid_t child;
  int status = 0;
  (void)state;
  assert_int_equal(scratch_dir_create(&d), 0);
  scratch_dir_join(&d, "model.ckpt", prefix, sizeof(prefix));
  first = make_saver(5);
  save(first, prefix, 1);

  second = make_saver(5);
  assert_int_equal(tw_saver_save(NULL, second, prefix, 2), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), d.path));
  assert_non_null(strstr(tw_last_error_message(), "is in use"));
  assert_non_null(strstr(tw_last_error_message(), ".trainwatch.lock"));
  assert_int_equal(tw_saver_recover_last_checkpoints(second, d.path), TW_FAILED_PRECONDITION);

  child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    tw_saver *s = make_saver(5);
    const tw_status st = tw_saver_save(NULL, s, prefix, 3);
    if (st != TW_FAILED_PRECONDITION) _exit(10 + st);
    if (strstr(tw_last_error_message(), "another process") == NULL) _exit(2);
    _exit(0);
  }
  waitpid(child, &status, 0);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);

  /* Reading needs no lock. */
  reader = make_saver(5);
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), d.path), TW_OK);
  assert_int_equal(tw_saver_restore(reader, latest), TW_OK);
  assert_int_equal(tw_saver_restore_newest_good(NULL, reader, d.path), TW_OK);
  tw_saver_destroy(reader);

  tw_saver_destroy(first); /* releases the lock */
  save(second, prefix, 2);
  tw_saver_destroy(second);
  scratch_dir_destroy(&d);
}

/* Item 7: a save whose state-file update fails (here: the state file's name is taken by a
 * directory, so the rename fails) removes its checkpoint instead of leaving it unlisted. */
static void failed_state_update_leaves_no_orphan(void **state) {
  scratch_dir d;
  char prefix[600], path[700];
  tw_saver *saver;
  (void)state;
  assert_int_equal(scratch_dir_create(&d), 0);
  scratch_dir_join(&d, "model.ckpt", prefix, sizeof(prefix));
  saver = make_saver(5);
  save(saver, prefix, 1);
  scratch_dir_join(&d, "checkpoint", path, sizeof(path));
  assert_int_equal(unlink(path), 0);
  assert_int_equal(mkdir(path, 0777), 0);
  g_step = 2;
  assert_int_equal(tw_saver_save(NULL, saver, prefix, 2), TW_IO);
  assert_non_null(strstr(tw_last_error_message(), "Writing the checkpoint state file failed"));
  snprintf(path, sizeof(path), "%s-2", prefix);
  assert_false(exists(path));
  snprintf(path, sizeof(path), "%s-1", prefix);
  assert_true(exists(path));
  assert_int_equal(scratch_dir_count_temporary(&d), 0);
  tw_saver_destroy(saver);
  scratch_dir_destroy(&d);
}

/* D17 with C19's rule: the cleaning of parts left by an uncommitted sharded save deletes only
 * files the saver wrote. A real orphan part (a checkpoint file under a part's name, no index) goes; a
 * text file, a FIFO and a directory that merely carry a part's name stay, with a warning naming them. */
static void only_own_orphan_parts_are_cleaned(void **state) {
  scratch_dir d;
  char prefix[600], real[700], orphan[700], text[700], fifo[700], dir[700];
  tw_saver *saver = make_saver(5), *cleaner;
  (void)state;
  assert_int_equal(scratch_dir_create(&d), 0);
  scratch_dir_join(&d, "model.ckpt", prefix, sizeof(prefix));
  save(saver, prefix, 1);
  tw_saver_destroy(saver); /* one writer per directory: the next saver's first save cleans it */
  scratch_dir_join(&d, "model.ckpt-1", real, sizeof(real));
  scratch_dir_join(&d, "model.ckpt-9.part-00000-of-00002", orphan, sizeof(orphan));
  scratch_dir_join(&d, "model.ckpt-9.part-00001-of-00002", text, sizeof(text));
  scratch_dir_join(&d, "notes.part-00000-of-00001", fifo, sizeof(fifo));
  scratch_dir_join(&d, "data.part-00000-of-00003", dir, sizeof(dir));
  copy_file(real, orphan);
  write_text(text, "the user's own notes\n");
  assert_int_equal(mkfifo(fifo, 0666), 0);
  assert_int_equal(mkdir(dir, 0777), 0);

  cleaner = make_saver(5);
  save(cleaner, prefix, 2);
  assert_false(exists(orphan));
  assert_true(exists(text));
  assert_true(exists(fifo));
  assert_true(exists(dir));
  assert_non_null(strstr(g_warnings, "Not deleting model.ckpt-9.part-00001-of-00002"));
  assert_non_null(strstr(g_warnings, "its header is not a trainwatch checkpoint's"));
  assert_non_null(strstr(g_warnings, "is a FIFO (named pipe), not a regular file"));
  assert_non_null(strstr(g_warnings, "Not deleting data.part-00000-of-00003"));
  assert_true(exists(real));
  rmdir(dir);
  tw_saver_destroy(cleaner);
  scratch_dir_destroy(&d);
}

static int same_bytes(const char *a, const char *b) {
  char x[4096], y[4096];
  size_t n, m;
  int same = 1;
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  assert_non_null(fa);
  assert_non_null(fb);
  do {
    n = fread(x, 1, sizeof(x), fa);
    m = fread(y, 1, sizeof(y), fb);
    same = same && n == m && memcmp(x, y, n) == 0;
  } while (same && n > 0);
  fclose(fa);
  fclose(fb);
  return same;
}

static int occurrences(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *p = strstr(haystack, needle); p != NULL; p = strstr(p + 1, needle)) ++n;
  return n;
}

/* C19: a pretrained checkpoint of another run copied into a new run directory as model.ckpt-5000, with
 * no state file, is not this job's: it is not resumed from, retention never deletes it (byte-identical
 * after saves past max_to_keep), and it is reported once per saver. Restoring it on purpose works. */
static void a_checkpoint_copied_in_from_another_run_is_left_alone_c19(void **state) {
  scratch_dir pretrained, run;
  char prefix[600], source[700], copied[700], kept_copy[700], restored_name[700], latest[700], line[800];
  const char *restored = NULL;
  tw_saver *saver;
  (void)state;
  assert_int_equal(scratch_dir_create(&pretrained), 0);
  assert_int_equal(scratch_dir_create(&run), 0);
  scratch_dir_join(&pretrained, "model.ckpt", prefix, sizeof(prefix));
  saver = make_saver(5);
  save(saver, prefix, 5000);
  tw_saver_destroy(saver);
  snprintf(source, sizeof(source), "%s-5000", prefix);
  scratch_dir_join(&run, "model.ckpt-5000", copied, sizeof(copied));
  copy_file(source, copied);
  scratch_dir_join(&pretrained, "reference", kept_copy, sizeof(kept_copy));
  copy_file(source, kept_copy);

  saver = make_saver(2);
  g_step = -1;
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, run.path), TW_NOT_FOUND); /* not resumed */
  assert_int_equal(g_step, -1);
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, run.path), TW_OK);
  assert_int_equal(tw_saver_last_checkpoint_count(saver), 0); /* nor adopted by retention */
  scratch_dir_join(&run, "model.ckpt", prefix, sizeof(prefix));
  for (int64_t s = 1; s <= 4; ++s) save(saver, prefix, s);
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, run.path), TW_OK);
  assert_int_equal(g_step, 4); /* the job's own newest */
  assert_true(exists(copied));
  assert_true(same_bytes(copied, kept_copy));
  snprintf(line, sizeof(line), "Leaving %s alone: it is not this job's checkpoint (written as model.ckpt-5000 by job ",
           copied);
  assert_int_equal(occurrences(g_warnings, line), 1); /* once per saver, though scanned twice */
  assert_int_equal(tw_latest_checkpoint(latest, sizeof(latest), run.path), TW_OK);
  snprintf(restored_name, sizeof(restored_name), "%s-4", prefix);
  assert_string_equal(latest, restored_name);

  /* On purpose, by its path, it restores as any checkpoint (as TF's Saver.restore). */
  assert_int_equal(tw_saver_restore(saver, copied), TW_OK);
  assert_int_equal(g_step, 5000);
  assert_true(g_w[1] == 5001.0f);
  tw_saver_destroy(saver);
  scratch_dir_destroy(&pretrained);
  scratch_dir_destroy(&run);
}

/* C19: a user's copies of the job's checkpoints under other names (best-2; model.ckpt-9, a copy of
 * model.ckpt-1 under a newer step's name) are not the job's: with the state file removed the job
 * resumes from its own model.ckpt-2, never from a copy, and retention never deletes a copy. */
static void a_users_copy_is_neither_resumed_from_nor_deleted_c19(void **state) {
  scratch_dir d;
  char prefix[600], path[700], best[700], best_reference[700], fake_newer[700], state_path[700];
  const char *restored = NULL;
  tw_saver *saver;
  (void)state;
  assert_int_equal(scratch_dir_create(&d), 0);
  scratch_dir_join(&d, "model.ckpt", prefix, sizeof(prefix));
  saver = make_saver(5);
  for (int64_t s = 1; s <= 2; ++s) save(saver, prefix, s);
  tw_saver_destroy(saver);
  snprintf(path, sizeof(path), "%s-2", prefix);
  scratch_dir_join(&d, "best-2", best, sizeof(best));
  copy_file(path, best); /* same step, newer mtime: the scan would have preferred it */
  scratch_dir_join(&d, "best-reference.bin", best_reference, sizeof(best_reference));
  copy_file(path, best_reference);
  snprintf(path, sizeof(path), "%s-1", prefix);
  snprintf(fake_newer, sizeof(fake_newer), "%s-9", prefix);
  copy_file(path, fake_newer);
  scratch_dir_join(&d, "checkpoint", state_path, sizeof(state_path));
  assert_int_equal(unlink(state_path), 0);

  saver = make_saver(2);
  g_step = -1;
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, d.path), TW_OK);
  snprintf(path, sizeof(path), "%s-2", prefix);
  assert_string_equal(restored, path); /* its own, found by name */
  assert_int_equal(g_step, 2);
  assert_non_null(strstr(g_warnings, "a copy of this job's model.ckpt-2"));
  assert_non_null(strstr(g_warnings, "a copy of this job's model.ckpt-1"));
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, d.path), TW_OK);
  assert_int_equal(tw_saver_last_checkpoint_count(saver), 2); /* model.ckpt-1 and -2 */
  for (int64_t s = 3; s <= 6; ++s) save(saver, prefix, s);
  snprintf(path, sizeof(path), "%s-2", prefix);
  assert_false(exists(path)); /* the job's own evicted checkpoints go */
  assert_true(exists(best));
  assert_true(same_bytes(best, best_reference));
  assert_true(exists(fake_newer));
  tw_saver_destroy(saver);
  scratch_dir_destroy(&d);
}

/* C19: the identity lives in .trainwatch.job and in the state file's comment. Without the state file
 * the job finds its checkpoints by name as before and retention deletes them; without the job file the
 * state file's identity is taken back (the file is rewritten with it). */
static void the_job_identity_survives_losing_either_copy_c19(void **state) {
  scratch_dir d;
  char prefix[600], path[700], job_path[700], state_path[700], job[64], again[64], text[4096];
  const char *restored = NULL;
  tw_saver *saver;
  FILE *f;
  size_t n;
  (void)state;
  assert_int_equal(scratch_dir_create(&d), 0);
  scratch_dir_join(&d, "model.ckpt", prefix, sizeof(prefix));
  scratch_dir_join(&d, ".trainwatch.job", job_path, sizeof(job_path));
  scratch_dir_join(&d, "checkpoint", state_path, sizeof(state_path));
  saver = make_saver(3);
  for (int64_t s = 1; s <= 3; ++s) save(saver, prefix, s);
  tw_saver_destroy(saver);
  f = fopen(job_path, "rb");
  assert_non_null(f);
  n = fread(job, 1, sizeof(job) - 1, f);
  fclose(f);
  job[n] = '\0';
  assert_int_equal(n, 33); /* 32 hex digits and a newline */
  f = fopen(state_path, "rb");
  assert_non_null(f);
  n = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[n] = '\0';
  assert_int_equal(strncmp(text, "# trainwatch-job: ", 18), 0);
  assert_int_equal(strncmp(text + 18, job, 33), 0);

  assert_int_equal(unlink(state_path), 0); /* rm checkpoint */
  saver = make_saver(3);
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, d.path), TW_OK);
  assert_int_equal(g_step, 3);
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, d.path), TW_OK);
  assert_int_equal(tw_saver_last_checkpoint_count(saver), 3);
  save(saver, prefix, 4);
  snprintf(path, sizeof(path), "%s-1", prefix);
  assert_false(exists(path)); /* retention still proves them the job's */
  tw_saver_destroy(saver);

  assert_int_equal(unlink(job_path), 0);
  saver = make_saver(3);
  assert_int_equal(tw_saver_recover_last_checkpoints(saver, d.path), TW_OK);
  save(saver, prefix, 5);
  snprintf(path, sizeof(path), "%s-2", prefix);
  assert_false(exists(path));
  f = fopen(job_path, "rb");
  assert_non_null(f);
  n = fread(again, 1, sizeof(again) - 1, f);
  fclose(f);
  again[n] = '\0';
  assert_string_equal(again, job); /* the same job, from the state file */
  tw_saver_destroy(saver);
  scratch_dir_destroy(&d);
}

/* C19: a checkpoint whose origin does not check out (a flipped byte in its index) is not proven the
 * job's: the name scan passes over it to the one before, and it is reported. */
static void a_damaged_origin_proves_nothing_c19(void **state) {
  scratch_dir d;
  char prefix[600], path[700];
  static char bytes[65536];
  const char *restored = NULL;
  tw_saver *saver;
  FILE *f;
  size_t n, at;
  (void)state;
  assert_int_equal(scratch_dir_create(&d), 0);
  scratch_dir_join(&d, "model.ckpt", prefix, sizeof(prefix));
  saver = make_saver(5);
  for (int64_t s = 1; s <= 2; ++s) save(saver, prefix, s);
  tw_saver_destroy(saver);
  snprintf(path, sizeof(path), "%s-2", prefix);
  f = fopen(path, "r+b");
  assert_non_null(f);
  n = fread(bytes, 1, sizeof(bytes), f);
  assert_true(n > 32 && n < sizeof(bytes));
  /* the origin's name, near the end of the file (in the index) */
  at = n - 32;
  while (at > 0 && memcmp(bytes + at, "model.ckpt-2", 12) != 0) --at;
  assert_true(at > 0);
  fseek(f, (long)at + 11, SEEK_SET);
  fputc('7', f); /* "model.ckpt-7" */
  fclose(f);
  scratch_dir_join(&d, "checkpoint", path, sizeof(path));
  assert_int_equal(unlink(path), 0);
  saver = make_saver(5);
  assert_int_equal(tw_saver_restore_newest_good(&restored, saver, d.path), TW_OK);
  assert_int_equal(g_step, 1);
  assert_non_null(strstr(g_warnings, "its origin cannot be read"));
  tw_saver_destroy(saver);
  scratch_dir_destroy(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(crafted_state_file_never_deletes_outside_the_directory, setup, teardown),
      cmocka_unit_test_setup_teardown(damaged_state_file_is_only_a_hint, setup, teardown),
      cmocka_unit_test_setup_teardown(special_files_are_refused_at_once, setup, teardown),
      cmocka_unit_test_setup_teardown(second_writer_of_a_directory_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(failed_state_update_leaves_no_orphan, setup, teardown),
      cmocka_unit_test_setup_teardown(only_own_orphan_parts_are_cleaned, setup, teardown),
      cmocka_unit_test_setup_teardown(a_checkpoint_copied_in_from_another_run_is_left_alone_c19, setup, teardown),
      cmocka_unit_test_setup_teardown(a_users_copy_is_neither_resumed_from_nor_deleted_c19, setup, teardown),
      cmocka_unit_test_setup_teardown(the_job_identity_survives_losing_either_copy_c19, setup, teardown),
      cmocka_unit_test_setup_teardown(a_damaged_origin_proves_nothing_c19, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
