#define _POSIX_C_SOURCE 200809L
/* Per-step overhead of a session with StopAtStepHook + StepCounterHook + SummarySaverHook +
 * NanTensorHook + LoggingTensorHook on steps where nothing triggers (periods far beyond the run), against
 * the bare loop — the same step function called directly — in the same run (the anchor).
 * usage: bench_hooks_overhead [steps]   (default 2,000,000; target: under 1000 ns/step of overhead) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <trainwatch.h>
#include "../hooks/period_options.h"

static volatile float g_sink;

/* A training step's bookkeeping without the math: publish the loss, as a real step would. */
static tw_status step(void *user_data, tw_step_context *ctx) {
  float *loss = user_data;
  *loss *= 0.999999f;
  g_sink = *loss;
  if (ctx == NULL) return TW_OK; /* the bare loop */
  tw_tensor t = TW_TENSOR_INIT;
  t.name = "loss";
  t.dtype = TW_FLOAT32;
  t.data = loss;
  return tw_step_context_publish(ctx, &t);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void check(tw_status st, const char *what) {
  if (st != TW_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, tw_status_name(st), tw_last_error_message());
    exit(1);
  }
}

static double bare_ns_per_step(int64_t steps) {
  tw_step_fn volatile fn = step; /* an indirect call, as the session makes */
  float loss = 1.0f;
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = now_ns();
    for (int64_t i = 0; i < steps; ++i) fn(&loss, NULL);
    const double ns = (now_ns() - t0) / (double)steps;
    if (ns < best) best = ns;
  }
  return best;
}

static double hooked_ns_per_step(int64_t steps, const char *dir) {
  static const char *const logged[] = {"loss"};
  static const char *const summarized[] = {"loss"};
  const int64_t never = 1000000000000LL;
  tw_options *opts = NULL;
  tw_hook *hooks[5];
  tw_session *s = NULL;
  float loss = 1.0f;
  double best = 1e30;
  check(tw_options_create(&opts), "options");
  check(tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, never), "every_n");
  check(tw_options_set_string(opts, TW_OPT_OUTPUT_DIR, dir), "output_dir");
  check(tw_stop_at_step_hook_create(&hooks[0], TW_UNSET, never), "StopAtStepHook");
  check(step_counter_hook(&hooks[1], never, TW_UNSET_SECS, dir, NULL), "StepCounterHook");
  check(tw_summary_saver_hook_create(&hooks[2], summarized, 1, opts, NULL), "SummarySaverHook");
  check(tw_nan_tensor_hook_create(&hooks[3], "loss", 1), "NanTensorHook");
  check(tw_logging_tensor_hook_create(&hooks[4], logged, NULL, 1, opts, NULL, NULL, NULL), "LoggingTensorHook");
  tw_set_log_level(TW_LOG_WARNING); /* the first run's lines are not what is measured */
  check(tw_monitored_session_create(&s, NULL, hooks, 5), "session");
  check(tw_session_run(s, NULL, 0, step, &loss), "first run"); /* every periodic hook fires once here */
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = now_ns();
    for (int64_t i = 0; i < steps; ++i) check(tw_session_run(s, NULL, 0, step, &loss), "run");
    const double ns = (now_ns() - t0) / (double)steps;
    if (ns < best) best = ns;
  }
  check(tw_session_close(s), "close");
  check(tw_session_destroy(s), "destroy");
  for (int i = 0; i < 5; ++i) tw_hook_destroy(hooks[i]);
  tw_options_destroy(opts);
  return best;
}

int main(int argc, char **argv) {
  const int64_t steps = argc > 1 ? atoll(argv[1]) : 2000000;
  char dir[] = "/tmp/tw_bench_hooks_XXXXXX";
  if (mkdtemp(dir) == NULL) return 1;
  const double bare = bare_ns_per_step(steps);
  const double hooked = hooked_ns_per_step(steps, dir);
  printf("hook overhead on non-triggering steps, %lld steps, best of 3 (target: overhead < 1000 ns/step)\n",
         (long long)steps);
  printf("hooks: StopAtStep + StepCounter + SummarySaver + NanTensor + LoggingTensor\n");
  printf("%-28s %12.1f ns/step\n", "anchor: bare loop", bare);
  printf("%-28s %12.1f ns/step\n", "session with 5 hooks", hooked);
  printf("%-28s %12.1f ns/step  (ratio %.1fx, %s target)\n", "overhead", hooked - bare, hooked / bare,
         hooked - bare < 1000.0 ? "within" : "OVER");
  char command[128];
  snprintf(command, sizeof(command), "rm -rf '%s'", dir);
  return system(command) == 0 ? 0 : 1;
}
