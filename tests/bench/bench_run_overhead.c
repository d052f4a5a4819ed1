#define _POSIX_C_SOURCE 199309L
/* Per-step overhead of tw_session_run with 0, 1, 5 and 20 no-op hooks, against calling the same step
 * function directly in the same run (the anchor). Prints ns per step and the difference.
 * usage: bench_run_overhead [steps]   (default 2,000,000) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <trainwatch.h>

static volatile int64_t g_sink;

static tw_status step(void *user_data, tw_step_context *ctx) {
  (void)ctx;
  g_sink += *(int64_t *)user_data;
  return TW_OK;
}
static tw_status noop_run(void *u, tw_run_context *ctx) {
  (void)u;
  (void)ctx;
  return TW_OK;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The bare loop: what a training loop costs without trainwatch. */
static double direct_ns_per_step(int64_t steps) {
  tw_step_fn volatile fn = step; /* an indirect call, as the session makes */
  int64_t one = 1;
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now_ns();
    for (int64_t i = 0; i < steps; ++i) fn(&one, NULL);
    double ns = (now_ns() - t0) / (double)steps;
    if (ns < best) best = ns;
  }
  return best;
}

static double session_ns_per_step(int n_hooks, int64_t steps) {
  tw_hook_callbacks cb = {sizeof(cb), NULL, NULL, noop_run, noop_run, NULL, NULL, NULL};
  tw_hook *hooks[20];
  tw_session *s = NULL;
  int64_t one = 1;
  double best = 1e30;
  for (int i = 0; i < n_hooks; ++i) {
    if (tw_hook_create(&hooks[i], "noop", &cb, NULL) != TW_OK) exit(1);
  }
  if (tw_monitored_session_create(&s, NULL, hooks, (size_t)n_hooks) != TW_OK) {
    fprintf(stderr, "session: %s\n", tw_last_error_message());
    exit(1);
  }
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now_ns();
    for (int64_t i = 0; i < steps; ++i) {
      if (tw_session_run(s, NULL, 0, step, &one) != TW_OK) exit(1);
    }
    double ns = (now_ns() - t0) / (double)steps;
    if (ns < best) best = ns;
  }
  if (tw_session_destroy(s) != TW_OK) exit(1);
  for (int i = 0; i < n_hooks; ++i) tw_hook_destroy(hooks[i]);
  return best;
}

/* A realistic step: one SGD update of a 1M-parameter float32 model (w -= lr * g), publishing the loss
 * and the gradient. */
typedef struct sgd {
  float *w, *g;
  int64_t n;
  float loss;
  int update; /* 0: only publish, so that a hook's own cost can be measured without the step's noise */
} sgd;

static tw_status sgd_step(void *user_data, tw_step_context *ctx) {
  sgd *m = user_data;
  tw_tensor t = TW_TENSOR_INIT;
  float sum = 0.0f;
  for (int64_t i = 0; i < m->n * m->update; ++i) {
    m->w[i] -= 0.01f * m->g[i];
    sum += m->w[i];
  }
  m->loss = sum;
  t.dtype = TW_FLOAT32;
  t.name = "loss";
  t.data = &m->loss;
  if (tw_step_context_publish(ctx, &t) != TW_OK) return TW_INTERNAL;
  t.name = "grad/w";
  t.data = m->g;
  t.ndim = 1;
  t.shape = &m->n;
  return tw_step_context_publish(ctx, &t);
}

/* Best ns per step of sgd_step over `rounds` rounds of `steps`, for each session in `sessions`; the
 * configurations take turns, so drift in machine load hits them alike. */
static void sgd_ns_per_step(sgd *m, tw_session **sessions, double *best, int n_sessions, int rounds, int64_t steps) {
  for (int c = 0; c < n_sessions; ++c) best[c] = 1e30;
  for (int r = 0; r < rounds; ++r) {
    for (int c = 0; c < n_sessions; ++c) {
      double t0 = now_ns();
      for (int64_t i = 0; i < steps; ++i) {
        if (tw_session_run(sessions[c], NULL, 0, sgd_step, m) != TW_OK) exit(1);
      }
      double ns = (now_ns() - t0) / (double)steps;
      if (ns < best[c]) best[c] = ns;
    }
  }
}

/* NanTensorHook's price in a realistic loop: on the scalar loss (TF's use), and on a 4 MB gradient. */
static void nan_hook_cost(void) {
  sgd m;
  const char *grads[] = {"grad/*"};
  tw_hook *loss_guard = NULL, *grad_guard = NULL;
  m.n = 1 << 20;
  m.w = calloc((size_t)m.n, sizeof(float));
  m.g = calloc((size_t)m.n, sizeof(float));
  if (m.w == NULL || m.g == NULL) exit(1);
  for (int64_t i = 0; i < m.n; ++i) m.g[i] = 1e-3f * (float)(i % 7);
  if (tw_nan_tensor_hook_create(&loss_guard, "loss", 1) != TW_OK) exit(1);
  if (tw_nan_tensor_hook_create_with_options(&grad_guard, grads, 1, NULL, NULL, NULL, NULL) != TW_OK) exit(1);
  tw_session *sessions[3] = {NULL, NULL, NULL};
  double ns[3];
  if (tw_monitored_session_create(&sessions[0], NULL, NULL, 0) != TW_OK ||
      tw_monitored_session_create(&sessions[1], NULL, &loss_guard, 1) != TW_OK ||
      tw_monitored_session_create(&sessions[2], NULL, &grad_guard, 1) != TW_OK) {
    exit(1);
  }
  m.update = 1;
  sgd_ns_per_step(&m, sessions, ns, 1, 10, 40);
  const double step_ns = ns[0];
  m.update = 0; /* the hooks' cost alone: same session, same publishing, no update */
  sgd_ns_per_step(&m, sessions, ns, 3, 15, 2000);
  for (int c = 0; c < 3; ++c) {
    if (tw_session_destroy(sessions[c]) != TW_OK) exit(1);
  }
  printf(
      "\nNanTensorHook cost per step against a realistic step: an SGD update of 1M float32 parameters, "
      "%.1f us in this run (anchor)\n",
      step_ns / 1e3);
  printf("%-36s %12s %12s\n", "configuration", "cost ns", "of the step");
  printf("%-36s %12.0f %11.3f%%\n", "NanTensorHook(\"loss\") (TF's use)", ns[1] - ns[0],
         100.0 * (ns[1] - ns[0]) / step_ns);
  printf("%-36s %12.0f %11.3f%%\n", "NanTensorHook(\"grad/*\"), 4 MB scan", ns[2] - ns[0],
         100.0 * (ns[2] - ns[0]) / step_ns);
  tw_hook_destroy(loss_guard);
  tw_hook_destroy(grad_guard);
  free(m.w);
  free(m.g);
}

int main(int argc, char **argv) {
  const int64_t steps = argc > 1 ? atoll(argv[1]) : 2000000;
  const int hook_counts[] = {0, 1, 5, 20};
  const double direct = direct_ns_per_step(steps);
  printf("tw_session_run overhead, %lld steps, best of 3 (target: well under 1000 ns with 5 hooks)\n",
         (long long)steps);
  printf("%-8s %14s %16s %14s %8s\n", "hooks", "run ns/step", "anchor: direct", "overhead ns", "ratio");
  for (size_t i = 0; i < sizeof(hook_counts) / sizeof(hook_counts[0]); ++i) {
    const double run = session_ns_per_step(hook_counts[i], steps);
    printf("%-8d %14.1f %16.1f %14.1f %7.1fx\n", hook_counts[i], run, direct, run - direct, run / direct);
  }
  nan_hook_cost();
  return 0;
}
