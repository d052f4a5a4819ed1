/*
 * trainwatch/hooks.h — the built-in hooks of tf.train.
 *
 * Each constructor returns a hook with one reference owned by the caller (release it with
 * tw_hook_destroy, before or after handing it to a session). Hooks are not thread-safe and belong to
 * one open session at a time.
 */
#ifndef TRAINWATCH_HOOKS_H
#define TRAINWATCH_HOOKS_H

#include "trainwatch/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* StopAtStepHook(num_steps=None, last_step=None): requests stop after the run that brings global_step
 * to last_step (TF's B11–B15). Pass TW_UNSET for the argument you leave out. With num_steps, last_step
 * becomes global_step + num_steps when the session is first created; a recovery does not move it.
 * At least one run always happens, even with num_steps = 0 or a restored step past last_step.
 * Errors: TW_INVALID_ARGUMENT (out NULL; "One of num_steps or last_step must be specified."; "Only one
 * of num_steps or last_step can be specified."; a negative num_steps), TW_RESOURCE_EXHAUSTED. */
TW_API tw_status tw_stop_at_step_hook_create(tw_hook **out, int64_t num_steps, int64_t last_step);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_HOOKS_H */
