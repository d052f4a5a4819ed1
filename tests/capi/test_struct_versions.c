/* Versioned structs (include/trainwatch/common.h): this program is built three times, against the
 * headers as they are, against a copy in which every versioned struct has grown by one member
 * (TW_TEST_GROWN: a program built with a newer header) and against a copy whose initialisers set the
 * frozen first size (TW_TEST_V1: a program whose structs are exactly v1) — make_header_variant.py —
 * and every build must work with the same library. C99, so the layouts are also checked as C sees
 * them. */
#define TW_EXPERIMENTAL_API /* tw_collective and its v1 layout (trainwatch/common.h, "Experimental API") */
#include "scratch_dir.h"    /* first: it selects the POSIX feature level */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <trainwatch.h>

/* The frozen v1 layouts, as the library checks them (base/v1_layouts.cc); C99 has no static_assert. */
#if UINTPTR_MAX == UINT64_MAX
#define TW_V1_SIZE(type, size_macro, size) typedef char type##_size_v1_is_frozen[(size_macro) == (size) ? 1 : -1];
#define TW_V1_MEMBER(type, member, offset) \
  typedef char type##_##member##_is_frozen[offsetof(type, member) == (offset) ? 1 : -1];
#include "base/v1_layouts.def"
#endif

/* The first byte of an out-struct the library must leave alone: the grown member, or everything past
 * the v1 size the caller stated. */
#ifdef TW_TEST_GROWN
#define UNTOUCHED_FROM(type, stated_size) offsetof(type, tw_test_grown)
#else
#define UNTOUCHED_FROM(type, stated_size) ((size_t)(stated_size))
#endif

/* An out-struct inside guard bytes: what the caller's initialiser set, then 0xA5 up to the end. */
typedef union guarded {
  long double align_float;
  void *align_pointer;
  long long align_integer;
  unsigned char bytes[256];
} guarded;

static void *guarded_init(guarded *g, const void *init, size_t size) {
  memset(g->bytes, 0xA5, sizeof(g->bytes));
  memcpy(g->bytes, init, size);
  return g->bytes;
}
/* The caller's initialised struct at the start, guard bytes from where the library must stop. */
#define GUARDED(type, g, init) guarded_init(&(g), &(init), UNTOUCHED_FROM(type, (init).struct_size))

static int untouched_from(const guarded *g, size_t from) {
  for (size_t i = from; i < sizeof(g->bytes); ++i) {
    if (g->bytes[i] != 0xA5) return 0;
  }
  return 1;
}

static const int64_t kShape[1] = {3};

static tw_tensor float_view(const char *name, float *data) {
  tw_tensor t = TW_TENSOR_INIT;
  t.name = name;
  t.dtype = TW_FLOAT32;
  t.data = data;
  t.ndim = 1;
  t.shape = kShape;
  return t;
}

/* ---- structs the caller allocates ---- */

static void initialisers_set_the_callers_size(void **state) {
  (void)state;
  tw_tensor t;
  tw_event e;
  tw_hook_callbacks h;
  tw_tensor_init(&t);
  tw_event_init(&e);
  tw_hook_callbacks_init(&h);
#ifdef TW_TEST_V1
  assert_int_equal(t.struct_size, TW_TENSOR_SIZE_V1);
  assert_int_equal(e.struct_size, TW_EVENT_SIZE_V1);
  assert_int_equal(h.struct_size, TW_HOOK_CALLBACKS_SIZE_V1);
#else
  assert_int_equal(t.struct_size, sizeof(tw_tensor));
  assert_int_equal(e.struct_size, sizeof(tw_event));
  assert_int_equal(h.struct_size, sizeof(tw_hook_callbacks));
#endif
  assert_true(TW_EVENT_SIZE_V1 <= sizeof(tw_event) && TW_TENSOR_SIZE_V1 <= sizeof(tw_tensor));
}

static void scan_and_summary_write_only_the_callers_size(void **state) {
  (void)state;
  float data[3] = {1.0f, 0.0f, 3.0f};
  data[1] = data[1] / data[1]; /* NaN */
  const tw_tensor t = float_view("x", data);
  const tw_scan_result scan_init = TW_SCAN_RESULT_INIT;
  guarded g;
  tw_scan_result *scan = GUARDED(tw_scan_result, g, scan_init);
  assert_int_equal(tw_scan(scan, &t), TW_OK);
  assert_int_equal(scan->nan_count, 1);
  assert_int_equal(scan->first_nonfinite_index, 1);
  assert_int_equal(scan->struct_size, scan_init.struct_size);
  assert_true(untouched_from(&g, UNTOUCHED_FROM(tw_scan_result, scan_init.struct_size)));

  const tw_numerics_stats summary_init = TW_NUMERICS_STATS_INIT;
  tw_numerics_stats *summary = GUARDED(tw_numerics_stats, g, summary_init);
  assert_int_equal(tw_tensor_stats(summary, &t), TW_OK);
  assert_int_equal(summary->finite_count, 2);
  assert_true(summary->mean == 2.0);
  assert_true(untouched_from(&g, UNTOUCHED_FROM(tw_numerics_stats, summary_init.struct_size)));
}

/* A hook (its table from this program's header) fetches a variable and the output; the step reads
 * the caller's feeds, passed as an array of this program's tw_tensor. */
typedef struct run_state {
  float seen_feed;
  float fetched_w;
  uint32_t result_size;
  int after_runs;
} run_state;

static tw_status before_run(void *user_data, tw_run_context *ctx) {
  (void)user_data;
  tw_status status = tw_run_context_request_fetch(ctx, "w");
  return status != TW_OK ? status : tw_run_context_request_fetch(ctx, "y");
}

static tw_status after_run(void *user_data, tw_run_context *ctx) {
  run_state *s = user_data;
  const tw_tensor init = TW_TENSOR_INIT;
  guarded g;
  tw_tensor *w = GUARDED(tw_tensor, g, init);
  tw_status status = tw_run_context_get_result(w, ctx, "w");
  if (status != TW_OK) return status;
  if (!untouched_from(&g, UNTOUCHED_FROM(tw_tensor, init.struct_size))) return TW_INTERNAL;
  s->fetched_w = ((const float *)w->data)[2];
  s->result_size = w->struct_size;
  s->after_runs++;
  return TW_OK;
}

static tw_status step(void *user_data, tw_step_context *ctx) {
  run_state *s = user_data;
  static float y[3];
  tw_tensor b = TW_TENSOR_INIT;
  const tw_status status = tw_step_context_get_feed(&b, ctx, "b");
  if (status != TW_OK) return status;
  s->seen_feed = ((const float *)b.data)[1];
  const tw_tensor out = float_view("y", y);
  return tw_step_context_publish_copy(ctx, &out);
}

static void session_reads_arrays_and_tables_at_the_callers_size(void **state) {
  (void)state;
  static float w[3] = {1, 2, 3};
  float a[3] = {4, 5, 6}, b[3] = {7, 8, 9};
  run_state s = {0, 0, 0, 0};
  tw_options *opts = NULL;
  tw_hook *hook = NULL;
  tw_session *session = NULL;
  const tw_tensor variable = float_view("w", w);
  const tw_tensor feeds[2] = {float_view("a", a), float_view("b", b)};
  tw_hook_callbacks table = TW_HOOK_CALLBACKS_INIT;
  table.before_run = before_run;
  table.after_run = after_run;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_add_variable(opts, &variable), TW_OK);
  assert_int_equal(tw_hook_create(&hook, "probe", &table, &s), TW_OK);
  assert_int_equal(tw_monitored_session_create(&session, opts, &hook, 1), TW_OK);
  assert_int_equal(tw_session_run(session, feeds, 2, step, &s), TW_OK);
  assert_true(s.seen_feed == 8.0f); /* feeds[1] found by stepping with this program's sizeof */
  assert_true(s.fetched_w == 3.0f);
  assert_int_equal(s.result_size, feeds[0].struct_size); /* struct_size is never rewritten */
  assert_int_equal(s.after_runs, 1);
  assert_int_equal(tw_session_close(session), TW_OK);
  assert_int_equal(tw_session_destroy(session), TW_OK);
  tw_hook_destroy(hook);
  tw_options_destroy(opts);
}

static tw_status listener_begin(void *user_data) {
  ++*(int *)user_data;
  return TW_OK;
}

static void saver_and_listener_at_the_callers_size(void **state) {
  (void)state;
  scratch_dir dir;
  char prefix[600];
  const char *path = NULL;
  float w[3] = {1, 2, 3}, v[3] = {4, 5, 6};
  const tw_tensor variables[2] = {float_view("w", w), float_view("v", v)};
  tw_saver *saver = NULL;
  tw_checkpoint_variables *list = NULL;
  assert_int_equal(scratch_dir_create(&dir), 0);
  assert_int_equal(tw_saver_create(&saver, variables, 2), TW_OK);
  assert_int_equal(tw_saver_save(&path, saver, scratch_dir_join(&dir, "model.ckpt", prefix, sizeof(prefix)), 1), TW_OK);
  v[2] = 0;
  assert_int_equal(tw_saver_restore(saver, path), TW_OK);
  assert_true(v[2] == 6.0f); /* variables[1] was read with this program's stride */
  assert_int_equal(tw_checkpoint_list_variables(&list, path), TW_OK);
  const tw_tensor init = TW_TENSOR_INIT;
  guarded g;
  tw_tensor *entry = GUARDED(tw_tensor, g, init);
  assert_int_equal(tw_checkpoint_variables_at(entry, list, 1), TW_OK);
  assert_string_equal(entry->name, "v");
  assert_true(untouched_from(&g, UNTOUCHED_FROM(tw_tensor, init.struct_size)));
  tw_checkpoint_variables_destroy(list);
  tw_saver_destroy(saver);
  scratch_dir_destroy(&dir);

  int begun = 0;
  tw_checkpoint_listener *listener = NULL;
  tw_checkpoint_listener_callbacks callbacks = TW_CHECKPOINT_LISTENER_CALLBACKS_INIT;
  callbacks.begin = listener_begin;
  assert_int_equal(tw_checkpoint_listener_create(&listener, "l", &callbacks, &begun), TW_OK);
  tw_checkpoint_listener_destroy(listener);
}

static tw_status no_allreduce(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout) {
  (void)user_data, (void)values, (void)count, (void)op, (void)timeout;
  return TW_OK;
}
static tw_status no_broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout) {
  (void)user_data, (void)data, (void)size, (void)root, (void)timeout;
  return TW_OK;
}
static tw_status no_barrier(void *user_data, double timeout) {
  (void)user_data, (void)timeout;
  return TW_OK;
}

static void collective_table_at_the_callers_size(void **state) {
  (void)state;
  tw_options *opts = NULL;
  tw_collective table = TW_COLLECTIVE_INIT;
  table.allreduce_int64 = no_allreduce;
  table.broadcast = no_broadcast;
  table.barrier = no_barrier;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_collective(opts, &table, NULL), TW_OK);
#ifdef TW_TEST_GROWN
  table.tw_test_grown = 1;
  assert_int_equal(tw_options_set_collective(opts, &table, NULL), TW_INVALID_ARGUMENT);
#endif
  table.struct_size = TW_COLLECTIVE_SIZE_V1 - 8;
  assert_int_equal(tw_options_set_collective(opts, &table, NULL), TW_INVALID_ARGUMENT);
  tw_options_destroy(opts);
}

/* ---- structs the library lends ---- */

static void events_lend_values_by_pointer(void **state) {
  (void)state;
  scratch_dir dir;
  float data[3] = {1, 2, 3};
  const tw_tensor values = float_view("h", data);
  tw_summary_writer *writer = NULL;
  tw_event_reader *reader = NULL;
  assert_int_equal(scratch_dir_create(&dir), 0);
  assert_int_equal(tw_summary_writer_open(&writer, dir.path), TW_OK);
  assert_int_equal(tw_summary_writer_add_scalar(writer, "loss", 1, 0.5), TW_OK);
  assert_int_equal(tw_summary_writer_add_histogram(writer, "h", 2, &values), TW_OK);
  assert_int_equal(tw_summary_writer_close(writer), TW_OK);
  assert_int_equal(tw_event_reader_open(&reader, tw_summary_writer_path(writer)), TW_OK);
  tw_summary_writer_destroy(writer);

  const tw_event init = TW_EVENT_INIT;
  guarded g;
  tw_event *e = GUARDED(tw_event, g, init);
  assert_int_equal(tw_event_reader_next(e, reader), TW_OK); /* file_version */
  assert_int_equal(tw_event_reader_next(e, reader), TW_OK);
  assert_true(untouched_from(&g, UNTOUCHED_FROM(tw_event, init.struct_size)));
  assert_int_equal(e->value_count, 1);
  assert_true(e->values[0]->struct_size >= TW_SUMMARY_VALUE_SIZE_V1);
  assert_string_equal(e->values[0]->tag, "loss");
  assert_true(e->values[0]->simple_value == 0.5f);
  assert_int_equal(tw_event_reader_next(e, reader), TW_OK);
  const tw_histogram *h = e->values[0]->histogram;
  assert_non_null(h);
  assert_true(h->struct_size >= TW_HISTOGRAM_SIZE_V1);
  assert_true(h->num == 3.0 && h->max == 3.0);
#ifdef TW_TEST_GROWN
  /* A member this (older) library does not have is reported absent, never read past its struct. */
  assert_false(TW_STRUCT_HAS(e->values[0], tw_summary_value, tw_test_grown));
  assert_false(TW_STRUCT_HAS(h, tw_histogram, tw_test_grown));
#endif
  assert_true(TW_STRUCT_HAS(h, tw_histogram, bucket));
  tw_event_reader_destroy(reader);
  scratch_dir_destroy(&dir);
}

static tw_status formatter(void *user_data, const tw_tensor *const *values, size_t n_values, char *buffer,
                           size_t buffer_size, size_t *length) {
  (void)user_data;
  if (n_values != 2 || values[1]->struct_size < TW_TENSOR_SIZE_V1) return TW_INTERNAL;
  const double value = ((const float *)values[1]->data)[0];
  *length = (size_t)snprintf(buffer, buffer_size, "%s=%g", values[1]->name, value);
  return TW_OK;
}

static tw_status publish_two(void *user_data, tw_step_context *ctx) {
  float *data = user_data;
  const tw_tensor a = float_view("a", data), b = float_view("b", data + 1);
  const tw_status status = tw_step_context_publish(ctx, &a);
  return status != TW_OK ? status : tw_step_context_publish(ctx, &b);
}

static char g_line[256];
static void capture(void *user_data, tw_log_level level, const char *message) {
  (void)user_data;
  if (level == TW_LOG_INFO && strncmp(message, "b=", 2) == 0) snprintf(g_line, sizeof(g_line), "%s", message);
}

static void callbacks_get_lists_of_pointers(void **state) {
  (void)state;
  static const char *const names[] = {"a", "b"};
  float data[3] = {1, 2, 3};
  tw_hook *hook = NULL;
  tw_session *session = NULL;
  tw_options *opts = NULL;
  assert_int_equal(tw_options_create(&opts), TW_OK);
  assert_int_equal(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, 1), TW_OK);
  assert_int_equal(tw_logging_tensor_hook_create(&hook, names, NULL, 2, opts, formatter, NULL, NULL), TW_OK);
  assert_int_equal(tw_monitored_session_create(&session, NULL, &hook, 1), TW_OK);
  tw_set_log_sink(capture, NULL);
  assert_int_equal(tw_session_run(session, NULL, 0, publish_two, data), TW_OK);
  tw_set_log_sink(NULL, NULL);
  assert_true(strncmp(g_line, "b=2", 3) == 0);
  assert_int_equal(tw_session_close(session), TW_OK);
  assert_int_equal(tw_session_destroy(session), TW_OK);
  tw_hook_destroy(hook);
  tw_options_destroy(opts);
}

/* ---- sizes the library refuses ---- */

static void below_the_first_version_is_refused_by_name(void **state) {
  (void)state;
  float data[3] = {1, 2, 3};
  tw_tensor t = float_view("x", data);
  tw_scan_result scan = TW_SCAN_RESULT_INIT;
  tw_hook_callbacks table = TW_HOOK_CALLBACKS_INIT;
  tw_hook *hook = NULL;
  t.struct_size = TW_TENSOR_SIZE_V1 - 1;
  assert_int_equal(tw_scan(&scan, &t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "smaller than the first version of tw_tensor"));
  t.struct_size = TW_TENSOR_SIZE_V1;
  scan.struct_size = TW_SCAN_RESULT_SIZE_V1 - 8;
  assert_int_equal(tw_scan(&scan, &t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "tw_scan_result"));
  table.struct_size = TW_HOOK_CALLBACKS_SIZE_V1 - 8;
  assert_int_equal(tw_hook_create(&hook, "h", &table, NULL), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "tw_hook_callbacks"));
}

/* A struct_size no version can have (garbage, 1 << 30) is refused before the library reads a byte past
 * its own struct: the caller's struct ends where the library's does (a heap block of exactly that
 * size, so that ASan sees any over-read). Growth up to 1024 bytes is still checked for zeros. */
static void a_struct_size_no_version_can_have_is_refused_unread(void **state) {
  (void)state;
  float data[3] = {1, 2, 3};
  const tw_tensor view = float_view("x", data);
  tw_scan_result scan = TW_SCAN_RESULT_INIT;
  tw_tensor *t = malloc(sizeof(tw_tensor));
  unsigned char *grown = calloc(1, sizeof(tw_tensor) + 1025);
  tw_hook_callbacks *table = malloc(sizeof(tw_hook_callbacks));
  tw_hook *hook = NULL;
  assert_non_null(t);
  assert_non_null(grown);
  assert_non_null(table);
  *t = view;
  t->struct_size = 1u << 30;
  assert_int_equal(tw_scan(&scan, t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "struct_size 1073741824"));
  assert_non_null(strstr(tw_last_error_message(), "not the caller's sizeof"));
  t->struct_size = UINT32_MAX;
  assert_int_equal(tw_scan(&scan, t), TW_INVALID_ARGUMENT);
  *table = (tw_hook_callbacks)TW_HOOK_CALLBACKS_INIT;
  table->struct_size = 1u << 30;
  assert_int_equal(tw_hook_create(&hook, "h", table, NULL), TW_INVALID_ARGUMENT);
  assert_null(hook);
  /* Where this sizeof is the library's: not in the grown variant, nor in v1, whose tw_tensor is smaller. */
#if !defined(TW_TEST_GROWN) && !defined(TW_TEST_V1)
  /* The bound: 1024 zero bytes past the library's tw_tensor are a newer header's defaults; 1025 are not. */
  memcpy(grown, &view, sizeof(view));
  ((tw_tensor *)grown)->struct_size = (uint32_t)(sizeof(tw_tensor) + 1024);
  assert_int_equal(tw_scan(&scan, (const tw_tensor *)grown), TW_OK);
  ((tw_tensor *)grown)->struct_size = (uint32_t)(sizeof(tw_tensor) + 1025);
  assert_int_equal(tw_scan(&scan, (const tw_tensor *)grown), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "not the caller's sizeof"));
#endif
  free(table);
  free(grown);
  free(t);
}

static void array_elements_share_one_size(void **state) {
  (void)state;
  float a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
  tw_tensor variables[2] = {float_view("a", a), float_view("b", b)};
  tw_saver *saver = NULL;
  variables[1].struct_size += 8; /* not the array's stride */
  assert_int_equal(tw_saver_create(&saver, variables, 2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "variables[1] has struct_size"));
  assert_null(saver);
}

#ifdef TW_TEST_GROWN
/* A member this library does not know, set: the caller asks for what the library cannot do. */
static void a_set_member_this_library_does_not_know_is_refused(void **state) {
  (void)state;
  float data[3] = {1, 2, 3};
  tw_tensor t = float_view("x", data);
  tw_tensor feeds[2] = {float_view("a", data), float_view("b", data)};
  tw_scan_result scan = TW_SCAN_RESULT_INIT;
  tw_hook_callbacks table = TW_HOOK_CALLBACKS_INIT;
  tw_checkpoint_listener_callbacks callbacks = TW_CHECKPOINT_LISTENER_CALLBACKS_INIT;
  tw_hook *hook = NULL;
  tw_checkpoint_listener *listener = NULL;
  tw_saver *saver = NULL;
  t.tw_test_grown = 1;
  assert_int_equal(tw_scan(&scan, &t), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "tensor has struct_size"));
  assert_non_null(strstr(tw_last_error_message(), "does not know"));
  feeds[1].tw_test_grown = 1;
  assert_int_equal(tw_saver_create(&saver, feeds, 2), TW_INVALID_ARGUMENT);
  assert_non_null(strstr(tw_last_error_message(), "variables[1]"));
  table.tw_test_grown = 1;
  assert_int_equal(tw_hook_create(&hook, "h", &table, NULL), TW_INVALID_ARGUMENT);
  assert_null(hook);
  callbacks.tw_test_grown = 1;
  assert_int_equal(tw_checkpoint_listener_create(&listener, "l", &callbacks, NULL), TW_INVALID_ARGUMENT);
  assert_null(listener);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(initialisers_set_the_callers_size),
      cmocka_unit_test(scan_and_summary_write_only_the_callers_size),
      cmocka_unit_test(session_reads_arrays_and_tables_at_the_callers_size),
      cmocka_unit_test(saver_and_listener_at_the_callers_size),
      cmocka_unit_test(collective_table_at_the_callers_size),
      cmocka_unit_test(events_lend_values_by_pointer),
      cmocka_unit_test(callbacks_get_lists_of_pointers),
      cmocka_unit_test(below_the_first_version_is_refused_by_name),
      cmocka_unit_test(a_struct_size_no_version_can_have_is_refused_unread),
      cmocka_unit_test(array_elements_share_one_size),
#ifdef TW_TEST_GROWN
      cmocka_unit_test(a_set_member_this_library_does_not_know_is_refused),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
