/* Writes the event file that check_event_file.py decodes on its own, through the public C API only.
 * usage: write_event_sample LOGDIR — prints the event file's path. The content is fixed: keep it in
 * step with EXPECTED in check_event_file.py. */
#include <stdint.h>
#include <stdio.h>

#include <trainwatch.h>

static int check(tw_status status, const char *what) {
  if (status != TW_OK) fprintf(stderr, "%s: %s: %s\n", what, tw_status_name(status), tw_last_error_message());
  return status == TW_OK;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LOGDIR\n", argv[0]);
    return 2;
  }
  tw_summary_writer *w = NULL;
  if (!check(tw_summary_writer_open(&w, argv[1]), "open")) return 1;
  int ok = check(tw_summary_writer_add_session_log(w, 0, TW_SESSION_LOG_START, NULL, NULL), "start");
  for (int64_t step = 0; step < 50 && ok; ++step) {
    ok = check(tw_summary_writer_add_scalar(w, "loss", step, 0.25 * (double)step), "loss") &&
         check(tw_summary_writer_add_scalar(w, "accuracy/top-1", step, (double)step / 50.0), "accuracy");
  }
  float weights[8] = {-3.0f, -0.5f, 0.0f, 0.0f, 1e-13f, 2.0f, 7.5f, 100.0f};
  int64_t eight = 8;
  tw_tensor t = TW_TENSOR_INIT;
  t.dtype = TW_FLOAT32;
  t.data = weights;
  t.ndim = 1;
  t.shape = &eight;
  ok = ok && check(tw_summary_writer_add_histogram(w, "weights", 49, &t), "histogram");
  uint16_t half[3] = {0x3c00, 0xc000, 0x3555}; /* f16 1.0, -2.0, 0.333251953125 */
  int64_t three = 3;
  t.dtype = TW_FLOAT16;
  t.data = half;
  t.shape = &three;
  ok = ok && check(tw_summary_writer_add_histogram(w, "half", -7, &t), "f16 histogram");
  ok = ok && check(tw_summary_writer_add_session_log(w, 50, TW_SESSION_LOG_CHECKPOINT, "/tmp/model.ckpt", NULL),
                   "checkpoint");
  ok = ok && check(tw_summary_writer_close(w), "close");
  if (ok) printf("%s\n", tw_summary_writer_path(w));
  tw_summary_writer_destroy(w);
  return ok ? 0 : 1;
}
