/*
 * trainwatch/summary.h — see the comment of each declaration.
 */
#ifndef TRAINWATCH_SUMMARY_H
#define TRAINWATCH_SUMMARY_H

#include "trainwatch/session.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_SUMMARY_H */
