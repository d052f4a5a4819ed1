/* Kill points inside a checkpoint save, for the mpirun fault tests: the process SIGKILLs itself at the
 * n-th call of one kind made while armed, just before or just after it. The calls are libtrainwatch's
 * own file calls — fault_points.c defines write, fsync and rename, and an executable's definitions come
 * before libc's for every shared library it loads (ELF interposition), so no hook is needed in the
 * library — and the allreduces of a tw_collective wrapped by fault_points_wrap. A "delay" point kills
 * after a time instead, measured from arming, unless disarmed first.
 *
 * A point is written KIND:FILE:WHEN:N, e.g. "rename:part:after:1" (the first rename of a part file, once
 * done), "write:index:before:1", "fsync:dir:after:2", "allreduce:any:before:3", or "delay:SECONDS".
 * FILE classifies the path written: part (a part file or its temporary file), index (a checkpoint file:
 * the sharded index), state (the state file "checkpoint"), dir (a directory: the fsync after a rename),
 * any. Only files of the checkpoint directory count (fault_points_arm's dir). */
#ifndef TESTS_DISTRIBUTED_FAULT_POINTS_H
#define TESTS_DISTRIBUTED_FAULT_POINTS_H

#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include <trainwatch.h>
#include <trainwatch/distributed.h> /* its experimental block, also after a plain <trainwatch.h> */

/* Parses `point` and arms it for the calls from now on, counting only files in `dir` (no trailing
 * slash). Returns 0 on success, -1 for a malformed point (nothing armed). Before the kill, one line
 * "fault: rank R killed at POINT" goes to stderr. */
int fault_points_arm(const char *point, const char *dir, int rank);

/* Ends the armed window (a pending delay kill no longer fires). */
void fault_points_disarm(void);

/* A table that calls `inner` with `inner_user_data` and counts its allreduces as fault points. The
 * returned user data owns neither: destroy frees only the wrapper and then calls inner->destroy. */
tw_collective fault_points_wrap(const tw_collective *inner, void *inner_user_data, void **out_user_data);

#endif
