/* A user's program against the installed C library (tests/package/check_c.sh builds it with
 * pkg-config from the unpacked C tarball, outside the checkout): 100 steps of a linear model under
 * MonitoredTrainingSession with a StopAtStepHook, a NanTensorHook on the published loss and
 * checkpoints; run again with a later last step, it resumes.
 *
 * usage: consumer CHECKPOINT_DIR LAST_STEP EXPECTED_START
 * Prints "start S end E restored R" and exits non-zero when the session did not start at
 * EXPECTED_START (with the weights restored when it is not 0) or stop at LAST_STEP. */
#include <stdio.h>
#include <stdlib.h>
#include <trainwatch.h>

enum { ROWS = 64, COLS = 4 };

typedef struct model {
  float x[ROWS][COLS], y[ROWS], w[COLS];
} model;

static tw_status step(void *user_data, tw_step_context *ctx) {
  model *m = user_data;
  float grad[COLS] = {0}, loss = 0.0f;
  for (int r = 0; r < ROWS; ++r) {
    float error = -m->y[r];
    for (int c = 0; c < COLS; ++c) error += m->x[r][c] * m->w[c];
    loss += error * error / ROWS;
    for (int c = 0; c < COLS; ++c) grad[c] += m->x[r][c] * error / ROWS;
  }
  for (int c = 0; c < COLS; ++c) m->w[c] -= 0.05f * grad[c];
  tw_tensor out = TW_TENSOR_INIT; /* a scalar: published by copy for the NanTensorHook */
  out.name = "loss";
  out.dtype = TW_FLOAT32;
  out.data = &loss;
  return tw_step_context_publish_copy(ctx, &out);
}

static int fail(const char *what) {
  fprintf(stderr, "consumer: %s: %s\n", what, tw_last_error_message());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4) return fprintf(stderr, "usage: consumer CHECKPOINT_DIR LAST_STEP EXPECTED_START\n"), 2;
  const long long last_step = atoll(argv[2]), expected_start = atoll(argv[3]);
  static model m;
  const float truth[COLS] = {1.0f, -2.0f, 0.5f, 3.0f};
  srand(1);
  for (int r = 0; r < ROWS; ++r) {
    m.y[r] = 0.0f;
    for (int c = 0; c < COLS; ++c) {
      m.x[r][c] = (float)rand() / (float)RAND_MAX - 0.5f;
      m.y[r] += m.x[r][c] * truth[c];
    }
  }

  tw_options *opts = NULL;
  if (tw_options_create(&opts) != TW_OK) return fail("options");
  const int64_t shape[1] = {COLS};
  tw_tensor w = TW_TENSOR_INIT; /* restored in place from the checkpoint on the second run */
  w.name = "w";
  w.dtype = TW_FLOAT32;
  w.data = m.w;
  w.ndim = 1;
  w.shape = shape;
  if (tw_options_add_variable(opts, &w) != TW_OK ||
      tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, argv[1]) != TW_OK ||
      tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 25) != TW_OK)
    return fail("options");
  tw_hook *hooks[2];
  if (tw_stop_at_step_hook_create(&hooks[0], TW_UNSET, last_step) != TW_OK) return fail("StopAtStepHook");
  if (tw_nan_tensor_hook_create(&hooks[1], "loss", 1) != TW_OK) return fail("NanTensorHook");
  tw_session *session = NULL;
  tw_status st = tw_monitored_training_session_create(&session, opts, hooks, 2, NULL, 0);
  tw_options_destroy(opts);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
  if (st != TW_OK) return fail("MonitoredTrainingSession");

  const long long start = (long long)tw_session_global_step(session);
  const int restored = m.w[0] != 0.0f; /* the session restored the checkpoint's weights */
  while (!tw_session_should_stop(session))
    if (tw_session_run(session, NULL, 0, step, &m) != TW_OK) return fail("run");
  const long long end = (long long)tw_session_global_step(session);
  if (tw_session_close(session) != TW_OK) return fail("close");
  if (tw_session_destroy(session) != TW_OK) return fail("destroy");
  printf("start %lld end %lld restored %d w %.3f %.3f %.3f %.3f\n", start, end, restored, m.w[0], m.w[1], m.w[2],
         m.w[3]);
  return start == expected_start && end == last_step && restored == (expected_start > 0) ? 0 : 1;
}
