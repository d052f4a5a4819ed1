/*
 * trainwatch/checkpoint.h — see the comment of each declaration.
 */
#ifndef TRAINWATCH_CHECKPOINT_H
#define TRAINWATCH_CHECKPOINT_H

#include "trainwatch/session.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_CHECKPOINT_H */
