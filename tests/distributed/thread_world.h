/* A job of many ranks inside one process, for tests: every rank is a thread, and the collective they
 * share (trainwatch/distributed.h) meets in memory. An operation completes when every rank has entered
 * it; a rank that waits longer than the timeout leaves with TW_DEADLINE_EXCEEDED saying how many ranks
 * arrived, which is how a dead rank looks to the others. Faults can be injected per rank. */
#ifndef TESTS_DISTRIBUTED_THREAD_WORLD_H
#define TESTS_DISTRIBUTED_THREAD_WORLD_H

#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include <trainwatch.h>
#include <trainwatch/distributed.h> /* its experimental block, also after a plain <trainwatch.h> */

typedef struct thread_world thread_world;

/* A world of `world_size` ranks; NULL when out of memory. */
thread_world *thread_world_create(int world_size);
/* Frees the world; every rank must have stopped using it. */
void thread_world_destroy(thread_world *world);

/* The collective of `rank` (its table; pass thread_world_user_data as user_data). destroy is NULL:
 * the world owns its state. */
tw_collective thread_world_collective(thread_world *world, int rank);
void *thread_world_user_data(thread_world *world, int rank);

/* New options for `rank` (the caller destroys them): the world's collective for `rank` and
 * TW_OPT_COLLECTIVE_TIMEOUT_SECS `timeout_secs`, so that a rank left waiting fails in that time instead
 * of hanging the test. *out is NULL on error. */
tw_status thread_world_options(tw_options **out, thread_world *world, int rank, double timeout_secs);
/* thread_world_options with `rank`'s row shard of the float32 tensor "w" [world_size·rows, cols]: its
 * box, rows [rank·rows, (rank + 1)·rows), is `data` (rows × cols floats, borrowed;
 * tw_options_add_shard). */
tw_status thread_world_row_shard_options(tw_options **out, thread_world *world, int rank, int64_t rows, int64_t cols,
                                         float *data, double timeout_secs);

/* The next `count` operations of `rank` fail with `status` (and a message) before meeting the others. */
void thread_world_fail_next(thread_world *world, int rank, tw_status status, int count);
/* fn(arg) runs on `rank`'s thread once its `operation`-th operation (counting from 1 over the world's
 * life) has completed, before the rank sees the result: what another process might do to shared files
 * between two rounds. Set before thread_world_run. */
void thread_world_after(thread_world *world, int rank, long operation, void (*fn)(void *), void *arg);
/* How many collective operations `rank` has completed. */
long thread_world_operations(thread_world *world, int rank);

/* Runs body(rank, arg) on world_size threads and joins them. Returns 0, or -1 if a thread could not
 * be started. */
int thread_world_run(thread_world *world, void (*body)(int rank, void *arg), void *arg);

#endif
