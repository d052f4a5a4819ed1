/* libtrainwatch_mpi: trainwatch/distributed.h's collective over MPI (trainwatch/mpi.h). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "trainwatch/mpi.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct mpi_collective {
  MPI_Comm comm;
  int size;
} mpi_collective;

/* Ibcast counts are ints: larger buffers go in pieces of this many bytes. */
#define TW_MPI_CHUNK (1 << 30)

static tw_status mpi_failure(int code, const char *operation) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", code);
  char message[MPI_MAX_ERROR_STRING + 64];
  snprintf(message, sizeof message, "%s failed: %s", operation, text);
  return tw_set_error(TW_UNAVAILABLE, message);
}

/* Polls `request` until it completes or timeout_secs pass (negative: no limit). The first waits only
 * yield, so that a vote among ranks that arrive together costs what a blocking call costs; a long wait
 * sleeps, growing to 1 ms, so that waiting ranks leave the cores to those still computing. */
static tw_status wait_for(MPI_Request *request, double timeout_secs, const char *operation, int size) {
  const double start = MPI_Wtime();
  long polls = 0;
  long sleep_ns = 1000;
  for (;;) {
    int done = 0;
    const int rc = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_failure(rc, operation);
    if (done) return TW_OK;
    const double waited = MPI_Wtime() - start;
    if (timeout_secs >= 0 && waited > timeout_secs) {
      char message[256];
      snprintf(message, sizeof message,
               "%s did not complete within %.3f s: not all of the %d ranks took part (one is dead, stuck or "
               "elsewhere); the communicator is unusable from now on",
               operation, timeout_secs, size);
      return tw_set_error(TW_DEADLINE_EXCEEDED, message);
    }
    if (++polls < 1000 || waited < 1e-3) {
      sched_yield();
    } else {
      const struct timespec pause = {0, sleep_ns};
      nanosleep(&pause, NULL);
      if (sleep_ns < 1000000) sleep_ns *= 2;
    }
  }
}

static tw_status mpi_allreduce(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout) {
  mpi_collective *c = user_data;
  MPI_Op mpi_op;
  switch (op) {
    case TW_REDUCE_SUM: mpi_op = MPI_SUM; break;
    case TW_REDUCE_MIN: mpi_op = MPI_MIN; break;
    case TW_REDUCE_MAX: mpi_op = MPI_MAX; break;
    default: return tw_set_error(TW_INVALID_ARGUMENT, "MPI_Iallreduce: unknown tw_reduce_op");
  }
  if (count > INT_MAX) return tw_set_error(TW_INVALID_ARGUMENT, "MPI_Iallreduce: more than INT_MAX values");
  MPI_Request request;
  const int rc = MPI_Iallreduce(MPI_IN_PLACE, values, (int)count, MPI_INT64_T, mpi_op, c->comm, &request);
  if (rc != MPI_SUCCESS) return mpi_failure(rc, "MPI_Iallreduce");
  return wait_for(&request, timeout, "MPI_Iallreduce", c->size);
}

static tw_status mpi_broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout) {
  mpi_collective *c = user_data;
  const double start = MPI_Wtime();
  for (size_t done = 0; done < size;) {
    const size_t piece = size - done < TW_MPI_CHUNK ? size - done : TW_MPI_CHUNK;
    MPI_Request request;
    const int rc = MPI_Ibcast((char *)data + done, (int)piece, MPI_BYTE, root, c->comm, &request);
    if (rc != MPI_SUCCESS) return mpi_failure(rc, "MPI_Ibcast");
    double left = -1; /* no limit */
    if (timeout >= 0) {
      left = timeout - (MPI_Wtime() - start);
      if (left < 0) left = 0;
    }
    const tw_status status = wait_for(&request, left, "MPI_Ibcast", c->size);
    if (status != TW_OK) return status;
    done += piece;
  }
  return TW_OK;
}

static tw_status mpi_barrier(void *user_data, double timeout) {
  mpi_collective *c = user_data;
  MPI_Request request;
  const int rc = MPI_Ibarrier(c->comm, &request);
  if (rc != MPI_SUCCESS) return mpi_failure(rc, "MPI_Ibarrier");
  return wait_for(&request, timeout, "MPI_Ibarrier", c->size);
}

static void mpi_destroy(void *user_data) {
  mpi_collective *c = user_data;
  if (c == NULL) return;
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&c->comm);
  free(c);
}

tw_status tw_mpi_collective_create(tw_collective *out_table, void **out_user_data, MPI_Comm comm) {
  if (out_user_data != NULL) *out_user_data = NULL;
  if (out_table == NULL) return tw_set_error(TW_INVALID_ARGUMENT, "out_table is NULL");
  if (out_user_data == NULL) return tw_set_error(TW_INVALID_ARGUMENT, "out_user_data is NULL");
  if (comm == MPI_COMM_NULL) return tw_set_error(TW_INVALID_ARGUMENT, "comm is MPI_COMM_NULL");
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return tw_set_error(TW_FAILED_PRECONDITION, "tw_mpi_collective_create: MPI is not initialized (or is finalized)");
  }
  mpi_collective *c = calloc(1, sizeof *c);
  if (c == NULL) return tw_set_error(TW_RESOURCE_EXHAUSTED, "tw_mpi_collective_create: out of memory");
  int rank = 0;
  int rc = MPI_Comm_dup(comm, &c->comm);
  if (rc != MPI_SUCCESS) {
    free(c);
    return mpi_failure(rc, "MPI_Comm_dup");
  }
  rc = MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(c->comm, &rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(c->comm, &c->size);
  if (rc != MPI_SUCCESS) {
    mpi_destroy(c);
    return mpi_failure(rc, "tw_mpi_collective_create");
  }
  tw_collective table = TW_COLLECTIVE_INIT;
  table.rank = rank;
  table.world_size = c->size;
  table.allreduce_int64 = mpi_allreduce;
  table.broadcast = mpi_broadcast;
  table.barrier = mpi_barrier;
  table.destroy = mpi_destroy;
  *out_table = table;
  *out_user_data = c;
  return TW_OK;
}
