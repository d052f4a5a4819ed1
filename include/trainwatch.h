/*
 * trainwatch — TensorFlow 1's MonitoredTrainingSession and its hooks as a C library.
 *
 * The one public surface. Each part lives in its own file, declared in the order of the layers:
 *   trainwatch/common.h    versions, status codes, error messages, dtypes, tensor view, logging
 *   trainwatch/session.h   options, sessions, hooks (callback tables), run and step contexts
 *   trainwatch/hooks.h     the built-in hooks (StopAtStepHook, …)
 *   trainwatch/numerics.h  NaN/Inf scanning, tensor statistics, check_numerics
 *   trainwatch/checkpoint.h checkpoint files, Saver, state file
 *   trainwatch/summary.h   TensorBoard event files: writing summaries, reading them back
 *   trainwatch/distributed.h the collective seam: many ranks, one training run
 * The header compiles as C99 and as C++.
 */
#ifndef TRAINWATCH_H
#define TRAINWATCH_H

#include "trainwatch/checkpoint.h"
#include "trainwatch/common.h"
#include "trainwatch/device.h"
#include "trainwatch/distributed.h"
#include "trainwatch/hooks.h"
#include "trainwatch/numerics.h"
#include "trainwatch/session.h"
#include "trainwatch/summary.h"

#endif /* TRAINWATCH_H */
