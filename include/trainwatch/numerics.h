/*
 * trainwatch/numerics.h — see the comment of each declaration.
 */
#ifndef TRAINWATCH_NUMERICS_H
#define TRAINWATCH_NUMERICS_H

#include "trainwatch/session.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_NUMERICS_H */
