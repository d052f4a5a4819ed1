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
  tw_session_destroy(s);
  for (int i = 0; i < n_hooks; ++i) tw_hook_destroy(hooks[i]);
  return best;
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
  return 0;
}
