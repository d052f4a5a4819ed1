/* The summary C API (trainwatch/summary.h): writer → reader round trips, the shared writer per
 * directory, corrupt and truncated files (TW_DATA_LOSS, never a crash), argument checks. */
#include "scratch_dir.h" /* first: it selects the POSIX feature level */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>
#include <unistd.h>

#include <cmocka.h>
#include <trainwatch.h>

/* Each test's directory (tests/common/scratch_dir.h); the tests get its path as their state. */
static scratch_dir g_scratch;

static int make_temp_dir(void **state) {
  if (scratch_dir_create(&g_scratch) != 0) return -1;
  *state = g_scratch.path;
  return 0;
}

static int remove_temp_dir(void **state) {
  (void)state;
  scratch_dir_destroy(&g_scratch);
  return 0;
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc(*size + 1);
  assert_int_equal(fread(data, 1, *size, f), *size);
  fclose(f);
  return data;
}

static void write_file(const char *path, const char *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  fclose(f);
}

/* Reads every event of `path`; returns the count and stores the final status in *end. */
static int count_events(const char *path, tw_status *end) {
  tw_event_reader *reader = NULL;
  assert_int_equal(tw_event_reader_open(&reader, path), TW_OK);
  tw_event event = TW_EVENT_INIT;
  int n = 0;
  tw_status status;
  while ((status = tw_event_reader_next(&event, reader)) == TW_OK) ++n;
  *end = status;
  tw_event_reader_destroy(reader);
  return n;
}

static void round_trip_scalars_histogram_session_log(void **state) {
  const char *dir = *state;
  tw_summary_writer *w = NULL;
  assert_int_equal(tw_summary_writer_open(&w, dir), TW_OK);
  assert_int_equal(tw_summary_writer_add_session_log(w, 0, TW_SESSION_LOG_START, NULL, NULL), TW_OK);
  for (int64_t step = 0; step < 300; ++step) {
    assert_int_equal(tw_summary_writer_add_scalar(w, "loss", step, 0.5 * (double)step), TW_OK);
  }
  float values[4] = {-1.0f, 0.0f, 2.0f, 2.0f};
  int64_t shape[1] = {4};
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.data = values;
  t.ndim = 1;
  t.shape = shape;
  assert_int_equal(tw_summary_writer_add_histogram(w, "weights", 300, &t), TW_OK);
  assert_int_equal(tw_summary_writer_add_session_log(w, 300, TW_SESSION_LOG_CHECKPOINT, "/ckpt/model.ckpt", "saved"),
                   TW_OK);
  /* A Summary serialized elsewhere: value { tag: "ext" simple_value: 1.0 } */
  const unsigned char external[] = {0x0a, 0x0a, 0x0a, 0x03, 'e', 'x', 't', 0x15, 0x00, 0x00, 0x80, 0x3f};
  assert_int_equal(tw_summary_writer_add_summary(w, -5, external, sizeof(external)), TW_OK);
  assert_int_equal(tw_summary_writer_flush(w), TW_OK);
  char path[4096];
  snprintf(path, sizeof(path), "%s", tw_summary_writer_path(w));
  assert_non_null(strstr(path, "/events.out.tfevents."));

  tw_event_reader *r = NULL;
  assert_int_equal(tw_event_reader_open(&r, path), TW_OK);
  tw_event e;
  tw_event_init(&e);
  /* The file begins with the file_version event. */
  assert_int_equal(tw_event_reader_next(&e, r), TW_OK);
  assert_int_equal(e.kind, TW_EVENT_FILE_VERSION);
  assert_string_equal(e.file_version, "brain.Event:2");
  assert_int_equal(tw_event_reader_next(&e, r), TW_OK);
  assert_int_equal(e.kind, TW_EVENT_SESSION_LOG);
  assert_int_equal(e.session_log_status, TW_SESSION_LOG_START);
  assert_int_equal(e.step, 0);
  for (int64_t step = 0; step < 300; ++step) {
    assert_int_equal(tw_event_reader_next(&e, r), TW_OK);
    assert_int_equal(e.kind, TW_EVENT_SUMMARY);
    assert_int_equal(e.step, step);
    assert_int_equal(e.value_count, 1);
    assert_string_equal(e.values[0]->tag, "loss");
    assert_int_equal(e.values[0]->kind, TW_SUMMARY_VALUE_SCALAR);
    assert_true(e.values[0]->simple_value == (float)(0.5 * (double)step));
    assert_null(e.values[0]->histogram);
    assert_true(e.wall_time > 1.6e9);
  }
  assert_int_equal(tw_event_reader_next(&e, r), TW_OK);
  assert_int_equal(e.step, 300);
  assert_int_equal(e.values[0]->kind, TW_SUMMARY_VALUE_HISTOGRAM);
  const tw_histogram *h = e.values[0]->histogram;
  assert_non_null(h);
  assert_int_equal(e.values[0]->struct_size, sizeof(tw_summary_value)); /* lent: the library's size */
  assert_int_equal(h->struct_size, sizeof(tw_histogram));
  assert_true(h->min == -1.0 && h->max == 2.0 && h->num == 4.0 && h->sum == 3.0 && h->sum_squares == 9.0);
  double total = 0;
  for (size_t i = 0; i < h->bucket_count; ++i) total += h->bucket[i];
  assert_true(total == 4.0);
  assert_int_equal(tw_event_reader_next(&e, r), TW_OK);
  assert_int_equal(e.kind, TW_EVENT_SESSION_LOG);
  assert_int_equal(e.session_log_status, TW_SESSION_LOG_CHECKPOINT);
  assert_string_equal(e.checkpoint_path, "/ckpt/model.ckpt");
  assert_string_equal(e.message, "saved");
  assert_int_equal(tw_event_reader_next(&e, r), TW_OK);
  assert_int_equal(e.step, -5);
  assert_string_equal(e.values[0]->tag, "ext");
  assert_true(e.values[0]->simple_value == 1.0f);
  e.step = 12345;
  assert_int_equal(tw_event_reader_next(&e, r), TW_OUT_OF_RANGE);
  assert_int_equal(e.step, 12345); /* untouched at the end */
  assert_int_equal(tw_event_reader_next(&e, r), TW_OUT_OF_RANGE);
  tw_event_reader_destroy(r);
  assert_int_equal(tw_summary_writer_close(w), TW_OK);
  tw_summary_writer_destroy(w);
}

static void writer_is_shared_per_directory(void **state) {
  char dir[4096], spelled[4096];
  snprintf(dir, sizeof(dir), "%s/run", (const char *)*state);
  snprintf(spelled, sizeof(spelled), "%s/./run/", (const char *)*state);
  tw_summary_writer *a = NULL, *b = NULL, *c = NULL;
  assert_int_equal(tw_summary_writer_open(&a, dir), TW_OK);
  assert_int_equal(tw_summary_writer_open(&b, spelled), TW_OK);
  assert_ptr_not_equal(a, b);                                                /* two handles … */
  assert_string_equal(tw_summary_writer_path(a), tw_summary_writer_path(b)); /* … on one file */
  assert_int_equal(tw_summary_writer_add_scalar(a, "x", 1, 1.0), TW_OK);
  assert_int_equal(tw_summary_writer_add_scalar(b, "x", 2, 2.0), TW_OK);
  tw_summary_writer_destroy(a); /* b keeps the writer open */
  assert_int_equal(tw_summary_writer_add_scalar(b, "x", 3, 3.0), TW_OK);
  assert_int_equal(tw_summary_writer_close(b), TW_OK);
  assert_int_equal(tw_summary_writer_add_scalar(b, "x", 4, 4.0), TW_FAILED_PRECONDITION);
  assert_non_null(strstr(tw_last_error_message(), "closed"));
  tw_status end;
  assert_int_equal(count_events(tw_summary_writer_path(b), &end), 4);
  assert_int_equal(end, TW_OUT_OF_RANGE);
  /* After close, the directory gets a new file; the old one is kept. */
  assert_int_equal(tw_summary_writer_open(&c, dir), TW_OK);
  assert_string_not_equal(tw_summary_writer_path(c), tw_summary_writer_path(b));
  tw_summary_writer_destroy(b);
  tw_summary_writer_destroy(c);
}

/* Writes a small event file and returns its contents. */
static char *small_event_file(const char *dir, char *path, size_t path_size, size_t *size, int *records) {
  tw_summary_writer *w = NULL;
  assert_int_equal(tw_summary_writer_open(&w, dir), TW_OK);
  assert_int_equal(tw_summary_writer_add_scalar(w, "a", 1, 1.0), TW_OK);
  assert_int_equal(tw_summary_writer_add_scalar(w, "bb", 2, 2.0), TW_OK);
  assert_int_equal(tw_summary_writer_add_session_log(w, 3, TW_SESSION_LOG_STOP, NULL, NULL), TW_OK);
  snprintf(path, path_size, "%s", tw_summary_writer_path(w));
  assert_int_equal(tw_summary_writer_close(w), TW_OK);
  tw_summary_writer_destroy(w);
  *records = 4;
  return read_file(path, size);
}

static void every_bit_flip_is_data_loss(void **state) {
  char path[4096], copy[4096];
  size_t size;
  int records;
  char *data = small_event_file(*state, path, sizeof(path), &size, &records);
  snprintf(copy, sizeof(copy), "%s/corrupt", (const char *)*state);
  for (size_t i = 0; i < size; ++i) {
    for (int bit = 0; bit < 8; bit += 3) {
      data[i] ^= (char)(1 << bit);
      write_file(copy, data, size);
      data[i] ^= (char)(1 << bit);
      tw_status end;
      const int n = count_events(copy, &end);
      assert_true(n < records);
      assert_int_equal(end, TW_DATA_LOSS);
      assert_non_null(strstr(tw_last_error_message(), copy));     /* names the file … */
      assert_non_null(strstr(tw_last_error_message(), "offset")); /* … and where */
    }
  }
  free(data);
}

static void every_truncation_is_clean_end_or_data_loss(void **state) {
  char path[4096], copy[4096];
  size_t size;
  int records;
  char *data = small_event_file(*state, path, sizeof(path), &size, &records);
  snprintf(copy, sizeof(copy), "%s/truncated", (const char *)*state);
  int clean_ends = 0;
  for (size_t length = 0; length < size; ++length) {
    write_file(copy, data, length);
    tw_status end;
    const int n = count_events(copy, &end);
    assert_true(end == TW_OUT_OF_RANGE || end == TW_DATA_LOSS);
    assert_true(n < records);
    if (end == TW_OUT_OF_RANGE)
      ++clean_ends;
    else
      assert_non_null(strstr(tw_last_error_message(), "truncated"));
  }
  assert_int_equal(clean_ends, records); /* exactly at the record boundaries, 0 included */
  free(data);
}

static void garbage_files_never_crash(void **state) {
  char copy[4096];
  snprintf(copy, sizeof(copy), "%s/garbage", (const char *)*state);
  srand(3);
  for (int round = 0; round < 300; ++round) {
    char bytes[64];
    const size_t n = (size_t)(rand() % 64);
    for (size_t i = 0; i < n; ++i) bytes[i] = (char)rand();
    if (round % 3 == 0 && n >= 12) memset(bytes, 0xff, 8); /* a huge length */
    write_file(copy, bytes, n);
    tw_status end;
    count_events(copy, &end);
    assert_true(end == TW_OUT_OF_RANGE || end == TW_DATA_LOSS);
  }
}

static void arguments_are_checked_and_named(void **state) {
  tw_summary_writer *w = NULL;
  assert_int_equal(tw_summary_writer_open(NULL, *state), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "out is NULL");
  assert_int_equal(tw_summary_writer_open(&w, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "logdir is NULL");
  assert_int_equal(tw_summary_writer_open(&w, ""), TW_INVALID_ARGUMENT);
  assert_null(w);
  assert_int_equal(tw_summary_writer_open(&w, *state), TW_OK);

  assert_int_equal(tw_summary_writer_add_scalar(NULL, "x", 0, 0), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "writer is NULL");
  assert_int_equal(tw_summary_writer_add_scalar(w, NULL, 0, 0), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "tag is NULL");
  assert_int_equal(tw_summary_writer_add_scalar(w, "", 0, 0), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "tag is empty");
  assert_int_equal(tw_summary_writer_add_histogram(w, "h", 0, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "values is NULL");
  double nan_values[2] = {1.0, NAN};
  int64_t two = 2;
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT64;
  t.data = nan_values;
  t.ndim = 1;
  t.shape = &two;
  assert_int_equal(tw_summary_writer_add_histogram(w, "h", 0, &t), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "Nan in summary histogram for: h"); /* TF's text */
  t.dtype = 99;
  assert_int_equal(tw_summary_writer_add_histogram(w, "h", 0, &t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "values has invalid dtype"));
  assert_int_equal(tw_summary_writer_add_session_log(w, 0, (tw_session_log_status)7, NULL, NULL), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "status 7"));
  assert_int_equal(tw_summary_writer_add_summary(w, 0, NULL, 3), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "summary is NULL");
  const unsigned char bad_summary[] = {0x0a, 0x05, 0x0a};
  assert_int_equal(tw_summary_writer_add_summary(w, 0, bad_summary, sizeof(bad_summary)), TW_DATA_LOSS);
  assert_int_equal(tw_summary_writer_add_summary(w, 0, NULL, 0), TW_OK); /* an empty Summary */
  assert_int_equal(tw_summary_writer_flush(NULL), TW_INVALID_ARGUMENT);
  assert_int_equal(tw_summary_writer_close(NULL), TW_INVALID_ARGUMENT);
  assert_null(tw_summary_writer_path(NULL));
  tw_summary_writer_destroy(NULL);

  tw_event_reader *r = NULL;
  assert_int_equal(tw_event_reader_open(&r, NULL), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "path is NULL");
  assert_int_equal(tw_event_reader_open(&r, "/nonexistent/events"), TW_NOT_FOUND);
  assert_null(r);
  assert_int_equal(tw_event_reader_open(&r, tw_summary_writer_path(w)), TW_OK);
  tw_event e = TW_EVENT_INIT;
  assert_int_equal(tw_event_reader_next(NULL, r), TW_INVALID_ARGUMENT);
  assert_string_equal(tw_last_error_message(), "out is NULL");
  e.struct_size = 8;
  assert_int_equal(tw_event_reader_next(&e, r), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "struct_size"));
  assert_int_equal(tw_event_reader_next(&e, NULL), TW_INVALID_ARGUMENT);
  tw_event_reader_destroy(r);
  tw_event_reader_destroy(NULL);
  tw_event_init(NULL);
  tw_summary_writer_destroy(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(round_trip_scalars_histogram_session_log, make_temp_dir, remove_temp_dir),
      cmocka_unit_test_setup_teardown(writer_is_shared_per_directory, make_temp_dir, remove_temp_dir),
      cmocka_unit_test_setup_teardown(every_bit_flip_is_data_loss, make_temp_dir, remove_temp_dir),
      cmocka_unit_test_setup_teardown(every_truncation_is_clean_end_or_data_loss, make_temp_dir, remove_temp_dir),
      cmocka_unit_test_setup_teardown(garbage_files_never_crash, make_temp_dir, remove_temp_dir),
      cmocka_unit_test_setup_teardown(arguments_are_checked_and_named, make_temp_dir, remove_temp_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
