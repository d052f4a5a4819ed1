/* The periodic hooks read their period from options (TW_OPT_EVERY_N_STEPS / _SECS, TW_OPT_OUTPUT_DIR):
 * these build those options for one hook, the way TF's constructors take the arguments. steps TW_UNSET
 * is TF's None (tw_options_set_none, so StepCounterHook's default of 100 does not apply), secs negative
 * is None, dir NULL is unset. Written only against the public header. */
#ifndef TW_TESTS_PERIOD_OPTIONS_H
#define TW_TESTS_PERIOD_OPTIONS_H

#include <trainwatch.h>

/* The options, or NULL when one cannot be built (each status is returned by the helpers below). */
static inline tw_status period_options(tw_options **out, int64_t steps, double secs, const char *dir) {
  tw_options *opts = NULL;
  tw_status s = tw_options_create(&opts);
  if (s == TW_OK)
    s = steps == TW_UNSET ? tw_options_set_none(opts, TW_OPT_EVERY_N_STEPS)
                          : tw_options_set_int64(opts, TW_OPT_EVERY_N_STEPS, steps);
  if (s == TW_OK && secs >= 0) s = tw_options_set_double(opts, TW_OPT_EVERY_N_SECS, secs);
  if (s == TW_OK && dir != NULL) s = tw_options_set_string(opts, TW_OPT_OUTPUT_DIR, dir);
  if (s != TW_OK) {
    tw_options_destroy(opts);
    return s;
  }
  *out = opts;
  return TW_OK;
}

/* StepCounterHook(every_n_steps, every_n_secs, output_dir, summary_writer). */
static inline tw_status step_counter_hook(tw_hook **out, int64_t steps, double secs, const char *dir,
                                          tw_summary_writer *writer) {
  tw_options *opts = NULL;
  tw_status s = period_options(&opts, steps, secs, dir);
  if (s == TW_OK) s = tw_step_counter_hook_create(out, opts, writer);
  tw_options_destroy(opts);
  return s;
}

/* ProfilerHook(save_steps, save_secs, output_dir). */
static inline tw_status profiler_hook(tw_hook **out, int64_t steps, double secs, const char *dir) {
  tw_options *opts = NULL;
  tw_status s = period_options(&opts, steps, secs, dir);
  if (s == TW_OK) s = tw_profiler_hook_create(out, opts);
  tw_options_destroy(opts);
  return s;
}

#endif /* TW_TESTS_PERIOD_OPTIONS_H */
