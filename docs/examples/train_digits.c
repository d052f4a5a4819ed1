/* A real training run under trainwatch, in C: a 64-32-10 MLP on the handwritten digits that Debian's
 * python3-sklearn ships, trained with minibatch SGD inside a MonitoredSession with a StopAtStepHook and
 * a custom hook that reports progress and evaluates on held-out data at the end.
 *
 * usage: train_digits [digits.csv.gz] [last_step]
 * Exits non-zero if the held-out accuracy is below 90%. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <trainwatch.h>

#define FEATURES 64
#define HIDDEN 32
#define CLASSES 10
#define BATCH 32
#define MAX_SAMPLES 2000

static const char *kDefaultData = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

typedef struct dataset {
  float x[MAX_SAMPLES][FEATURES];
  int32_t y[MAX_SAMPLES];
  int count;
} dataset;

typedef struct model {
  float w1[FEATURES][HIDDEN], b1[HIDDEN], w2[HIDDEN][CLASSES], b2[CLASSES];
} model;

static int load_digits(const char *path, dataset *all) {
  char line[1024];
  gzFile f = gzopen(path, "rb");
  if (f == NULL) return -1;
  all->count = 0;
  while (all->count < MAX_SAMPLES && gzgets(f, line, sizeof(line)) != NULL) {
    char *p = line;
    for (int j = 0; j <= FEATURES; ++j) {
      const float v = strtof(p, &p);
      if (*p == ',') ++p;
      if (j < FEATURES)
        all->x[all->count][j] = v / 16.0f;
      else
        all->y[all->count] = (int32_t)v;
    }
    all->count++;
  }
  gzclose(f);
  return all->count > 0 ? 0 : -1;
}

/* Forward pass for one sample; returns the cross-entropy loss and fills hidden/probabilities. */
static float forward(const model *m, const float *x, int32_t label, float *hidden, float *prob) {
  float max_logit = -1e30f, sum = 0.0f;
  for (int h = 0; h < HIDDEN; ++h) {
    float a = m->b1[h];
    for (int i = 0; i < FEATURES; ++i) a += x[i] * m->w1[i][h];
    hidden[h] = tanhf(a);
  }
  for (int c = 0; c < CLASSES; ++c) {
    float z = m->b2[c];
    for (int h = 0; h < HIDDEN; ++h) z += hidden[h] * m->w2[h][c];
    prob[c] = z;
    if (z > max_logit) max_logit = z;
  }
  for (int c = 0; c < CLASSES; ++c) sum += (prob[c] = expf(prob[c] - max_logit));
  for (int c = 0; c < CLASSES; ++c) prob[c] /= sum;
  return -logf(prob[label] + 1e-12f);
}

static int predict(const model *m, const float *x) {
  float hidden[HIDDEN], prob[CLASSES];
  int best = 0;
  forward(m, x, 0, hidden, prob);
  for (int c = 1; c < CLASSES; ++c) best = prob[c] > prob[best] ? c : best;
  return best;
}

typedef struct trainer {
  model *m;
  float learning_rate;
  float loss, accuracy; /* outputs published each step */
  const dataset *test;
  int test_begin;
  float test_accuracy;
} trainer;

/* One SGD step on the fed batch; publishes "loss", and "accuracy" only when a hook asked for it. */
static tw_status sgd_step(void *user_data, tw_step_context *ctx) {
  trainer *t = user_data;
  model *m = t->m;
  tw_tensor xs = TW_TENSOR_INIT, ys = TW_TENSOR_INIT, out = TW_TENSOR_INIT;
  static model grad;
  float hidden[HIDDEN], prob[CLASSES], dhidden[HIDDEN];
  int correct = 0;
  tw_status st;
  if ((st = tw_step_context_get_feed(&xs, ctx, "x")) != TW_OK) return st;
  if ((st = tw_step_context_get_feed(&ys, ctx, "y")) != TW_OK) return st;
  const int n = (int)xs.shape[0];
  const float(*x)[FEATURES] = xs.data;
  const int32_t *y = ys.data;

  memset(&grad, 0, sizeof(grad));
  t->loss = 0.0f;
  for (int s = 0; s < n; ++s) {
    t->loss += forward(m, x[s], y[s], hidden, prob) / (float)n;
    int best = 0;
    for (int c = 1; c < CLASSES; ++c) best = prob[c] > prob[best] ? c : best;
    correct += best == y[s];
    prob[y[s]] -= 1.0f; /* d loss / d logits */
    for (int h = 0; h < HIDDEN; ++h) {
      float d = 0.0f;
      for (int c = 0; c < CLASSES; ++c) {
        grad.w2[h][c] += hidden[h] * prob[c];
        d += m->w2[h][c] * prob[c];
      }
      dhidden[h] = d * (1.0f - hidden[h] * hidden[h]);
      grad.b1[h] += dhidden[h];
      for (int i = 0; i < FEATURES; ++i) grad.w1[i][h] += x[s][i] * dhidden[h];
    }
    for (int c = 0; c < CLASSES; ++c) grad.b2[c] += prob[c];
  }
  float *params = (float *)m, *grads = (float *)&grad;
  for (size_t i = 0; i < sizeof(model) / sizeof(float); ++i) params[i] -= t->learning_rate * grads[i] / (float)n;

  out.dtype = TW_FLOAT32;
  out.name = "loss";
  out.data = &t->loss;
  if ((st = tw_step_context_publish(ctx, &out)) != TW_OK) return st;
  if (tw_step_context_is_requested(ctx, "accuracy")) {
    t->accuracy = (float)correct / (float)n;
    out.name = "accuracy";
    out.data = &t->accuracy;
    if ((st = tw_step_context_publish(ctx, &out)) != TW_OK) return st;
  }
  return TW_OK;
}

/* Evaluation on the held-out samples: run without hooks, so no hook fetches anything. */
static tw_status evaluate(void *user_data, tw_step_context *ctx) {
  trainer *t = user_data;
  int correct = 0, total = 0;
  (void)ctx;
  for (int s = t->test_begin; s < t->test->count; ++s, ++total)
    correct += predict(t->m, t->test->x[s]) == t->test->y[s];
  t->test_accuracy = total ? (float)correct / (float)total : 0.0f;
  return TW_OK;
}

/* A custom hook in C: every `every` steps it fetches loss and accuracy and prints a progress line. */
typedef struct progress {
  int64_t every;
  trainer *t;
} progress;

static tw_status progress_before_run(void *user_data, tw_run_context *ctx) {
  progress *p = user_data;
  const int64_t step = tw_session_global_step(tw_run_context_session(ctx));
  if (step % p->every != 0) return TW_OK;
  tw_status st = tw_run_context_request_fetch(ctx, "loss");
  if (st != TW_OK) return st;
  if ((st = tw_run_context_request_fetch(ctx, "global_step")) != TW_OK) return st;
  return tw_run_context_request_fetch(ctx, "accuracy");
}

static tw_status progress_after_run(void *user_data, tw_run_context *ctx) {
  tw_tensor loss = TW_TENSOR_INIT, accuracy = TW_TENSOR_INIT, step = TW_TENSOR_INIT;
  (void)user_data;
  if (tw_run_context_result_count(ctx) == 0) return TW_OK; /* not a reporting step */
  tw_status st = tw_run_context_get_result(&loss, ctx, "loss");
  if (st == TW_OK) st = tw_run_context_get_result(&accuracy, ctx, "accuracy");
  if (st == TW_OK) st = tw_run_context_get_result(&step, ctx, "global_step");
  if (st != TW_OK) return st;
  printf("step %5lld  loss %.4f  batch accuracy %.2f\n", (long long)*(int64_t *)step.data, *(float *)loss.data,
         *(float *)accuracy.data);
  return TW_OK;
}

static tw_status progress_end(void *user_data, tw_session *session) {
  progress *p = user_data;
  tw_status st = tw_session_run_without_hooks(session, NULL, 0, evaluate, p->t);
  if (st == TW_OK) printf("held-out accuracy: %.3f\n", p->t->test_accuracy);
  return st;
}

static int fail(const char *what) {
  fprintf(stderr, "train_digits: %s: %s\n", what, tw_last_error_message());
  return 1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : kDefaultData;
  const int64_t last_step = argc > 2 ? atoll(argv[2]) : 4000;
  static dataset data;
  static model m;
  trainer t = {&m, 0.5f, 0, 0, &data, 1500, 0};
  progress report = {500, &t};
  const int64_t shape_w1[2] = {FEATURES, HIDDEN}, shape_b1[1] = {HIDDEN};
  const int64_t shape_w2[2] = {HIDDEN, CLASSES}, shape_b2[1] = {CLASSES};
  const struct {
    const char *name;
    void *data;
    int32_t ndim;
    const int64_t *shape;
  } variables[] = {{"dense1/kernel", m.w1, 2, shape_w1},
                   {"dense1/bias", m.b1, 1, shape_b1},
                   {"dense2/kernel", m.w2, 2, shape_w2},
                   {"dense2/bias", m.b2, 1, shape_b2}};

  if (load_digits(path, &data) != 0) {
    fprintf(stderr, "train_digits: cannot read %s (install python3-sklearn)\n", path);
    return 1;
  }
  srand(42);
  for (int i = 0; i < FEATURES; ++i)
    for (int h = 0; h < HIDDEN; ++h) m.w1[i][h] = ((float)rand() / (float)RAND_MAX - 0.5f) * 0.5f;
  for (int h = 0; h < HIDDEN; ++h)
    for (int c = 0; c < CLASSES; ++c) m.w2[h][c] = ((float)rand() / (float)RAND_MAX - 0.5f) * 0.5f;
  printf("trainwatch %s: training a %d-%d-%d MLP on %d digits (%d held out) until step %lld\n", tw_version_string(),
         FEATURES, HIDDEN, CLASSES, t.test_begin, data.count - t.test_begin, (long long)last_step);

  tw_options *opts = NULL;
  if (tw_options_create(&opts) != TW_OK) return fail("options");
  for (size_t i = 0; i < sizeof(variables) / sizeof(variables[0]); ++i) {
    tw_tensor v = TW_TENSOR_INIT;
    v.name = variables[i].name;
    v.dtype = TW_FLOAT32;
    v.data = variables[i].data;
    v.ndim = variables[i].ndim;
    v.shape = variables[i].shape;
    if (tw_options_add_variable(opts, &v) != TW_OK) return fail("add_variable");
  }

  tw_hook *hooks[2];
  const tw_hook_callbacks progress_callbacks = {sizeof(tw_hook_callbacks), NULL,         NULL, progress_before_run,
                                                progress_after_run,        progress_end, NULL, NULL};
  if (tw_stop_at_step_hook_create(&hooks[0], TW_UNSET, last_step) != TW_OK) return fail("StopAtStepHook");
  if (tw_hook_create(&hooks[1], "progress", &progress_callbacks, &report) != TW_OK) return fail("progress hook");

  tw_session *session = NULL;
  if (tw_monitored_session_create(&session, opts, hooks, 2) != TW_OK) return fail("session");
  tw_options_destroy(opts);
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);

  /* The training loop: feed a batch, run one step, until a hook says stop. */
  static float batch_x[BATCH][FEATURES];
  static int32_t batch_y[BATCH];
  const int64_t x_shape[2] = {BATCH, FEATURES}, y_shape[1] = {BATCH};
  tw_tensor feeds[2] = {TW_TENSOR_INIT, TW_TENSOR_INIT};
  feeds[0].name = "x";
  feeds[0].dtype = TW_FLOAT32;
  feeds[0].data = batch_x;
  feeds[0].ndim = 2;
  feeds[0].shape = x_shape;
  feeds[1].name = "y";
  feeds[1].dtype = TW_INT32;
  feeds[1].data = batch_y;
  feeds[1].ndim = 1;
  feeds[1].shape = y_shape;
  int cursor = 0;
  while (!tw_session_should_stop(session)) {
    for (int b = 0; b < BATCH; ++b, cursor = (cursor + 1) % t.test_begin) {
      memcpy(batch_x[b], data.x[cursor], sizeof(batch_x[b]));
      batch_y[b] = data.y[cursor];
    }
    if (tw_session_run(session, feeds, 2, sgd_step, &t) != TW_OK) return fail("run");
  }
  if (tw_session_close(session) != TW_OK) return fail("close");
  if (tw_session_destroy(session) != TW_OK) return fail("destroy");
  return t.test_accuracy >= 0.9f ? 0 : 2;
}
