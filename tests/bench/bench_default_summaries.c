#define _DEFAULT_SOURCE /* mkdtemp */
/* The first run of a MonitoredTrainingSession over 1 GiB of variables with its default summaries
 * (TF's T6 SummarySaverHook: scalars only, T11), against the same session with summaries off
 * (save_summaries_steps 0) in the same run (the anchor), and, for the record, with histograms of every
 * variable asked for (TW_OPT_SUMMARY_HISTOGRAM_NAMES "*", what the default wrote before T11).
 * The step is a pass over every variable (w *= 0.999, a training step touches each weight), so the
 * ratio compares summaries with the step they follow rather than with an empty function.
 * usage: bench_default_summaries [MiB]   (default 1024; target: default / off under 1.1) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <trainwatch.h>

enum { kVariables = 16 };

typedef struct model {
  float *w[kVariables];
  int64_t elements; /* per variable */
  float loss;
} model;

static tw_status step(void *user_data, tw_step_context *ctx) {
  model *m = user_data;
  double sum = 0.0;
  for (int v = 0; v < kVariables; ++v) {
    float *w = m->w[v];
    for (int64_t i = 0; i < m->elements; ++i) w[i] *= 0.999f;
    sum += w[0];
  }
  m->loss = (float)sum;
  tw_tensor t = TW_TENSOR_INIT;
  t.name = "loss";
  t.dtype = TW_FLOAT32;
  t.data = &m->loss;
  return tw_step_context_publish(ctx, &t);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(tw_status st, const char *what) {
  if (st != TW_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, tw_status_name(st), tw_last_error_message());
    exit(1);
  }
}

typedef enum summaries { kOff, kDefault, kEveryHistogram } summaries;

/* Seconds of the first tw_session_run of a fresh session writing its summaries under `dir`. */
static double first_run_secs(model *m, const char *dir, summaries mode) {
  char names[kVariables][32];
  tw_options *opts = NULL;
  tw_session *s = NULL;
  int64_t shape[1] = {m->elements};
  check(tw_options_create(&opts), "tw_options_create");
  for (int v = 0; v < kVariables; ++v) {
    tw_tensor var = TW_TENSOR_INIT;
    snprintf(names[v], sizeof(names[v]), "layer%02d/kernel", v);
    var.name = names[v];
    var.dtype = TW_FLOAT32;
    var.ndim = 1;
    var.shape = shape;
    var.data = m->w[v];
    check(tw_options_add_variable(opts, &var), "tw_options_add_variable");
  }
  check(tw_options_set_string(opts, TW_OPT_SUMMARY_DIR, dir), "summary_dir");
  if (mode == kOff) check(tw_options_set_int64(opts, TW_OPT_SUMMARY_EVERY_N_STEPS, 0), "save_summaries_steps");
  if (mode == kEveryHistogram) check(tw_options_set_string(opts, TW_OPT_SUMMARY_HISTOGRAM_NAMES, "*"), "histograms");
  check(tw_monitored_training_session_create(&s, opts, NULL, 0, NULL, 0), "create");
  const double t0 = now_s();
  check(tw_session_run(s, NULL, 0, step, m), "run");
  const double secs = now_s() - t0;
  check(tw_session_close(s), "close");
  check(tw_session_destroy(s), "destroy");
  tw_options_destroy(opts);
  return secs;
}

static int compare(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const int64_t mib = argc > 1 ? atoll(argv[1]) : 1024;
  char dir[64];
  model m;
  memset(&m, 0, sizeof(m));
  m.elements = mib * 1024 * 1024 / 4 / kVariables;
  for (int v = 0; v < kVariables; ++v) {
    m.w[v] = malloc((size_t)m.elements * sizeof(float));
    if (m.w[v] == NULL) {
      fprintf(stderr, "out of memory\n");
      return 1;
    }
    for (int64_t i = 0; i < m.elements; ++i) m.w[v][i] = (float)(i % 1000) * 1e-3f - 0.5f;
  }
  snprintf(dir, sizeof(dir), "/tmp/tw_bench_summaries_XXXXXX");
  if (mkdtemp(dir) == NULL) return 1;
  tw_set_log_level(TW_LOG_WARNING);

  enum { kTrials = 5 };
  double off[kTrials], on[kTrials];
  for (int t = 0; t < kTrials; ++t) { /* alternating, so that both see the same machine */
    off[t] = first_run_secs(&m, dir, kOff);
    on[t] = first_run_secs(&m, dir, kDefault);
  }
  const double every = first_run_secs(&m, dir, kEveryHistogram);
  qsort(off, kTrials, sizeof(double), compare);
  qsort(on, kTrials, sizeof(double), compare);
  printf("first run over %lld MiB of variables in %d variables, median of %d:\n", (long long)mib, kVariables, kTrials);
  printf("  summaries off (anchor, save_summaries_steps=0): %.3f s\n", off[kTrials / 2]);
  printf("  default summaries (scalars, T11):               %.3f s\n", on[kTrials / 2]);
  printf("  ratio default / off: %.3f (target < 1.1)\n", on[kTrials / 2] / off[kTrials / 2]);
  printf("  histograms of every variable asked for (\"*\", once): %.3f s (%.1fx off)\n", every,
         every / off[kTrials / 2]);

  char command[128];
  snprintf(command, sizeof(command), "rm -rf '%s'", dir);
  if (system(command) != 0) fprintf(stderr, "could not remove %s\n", dir);
  for (int v = 0; v < kVariables; ++v) free(m.w[v]);
  return 0;
}
