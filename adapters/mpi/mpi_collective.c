/* libtrainwatch_mpi: trainwatch/distributed.h's collective over MPI (trainwatch/mpi.h). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#define TW_EXPERIMENTAL_API     /* the collective seam this adapter fills */
#include "trainwatch/mpi.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct mpi_collective {
  MPI_Comm comm;
  int rank;
  int size;
  int64_t *scratch; /* the partner's values in the allreduce */
  size_t scratch_count;
} mpi_collective;

/* The tag of the allreduce's messages on the duplicate communicator (only trainwatch uses it). */
#define TW_MPI_TAG 0x7477

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

/* Polls `requests` until all complete or timeout_secs have passed since `start` (negative: no limit). The first waits only
 * spin, so that ranks arriving together pay what a blocking call pays; then they yield, and a long wait
 * sleeps, growing to 1 ms, so that waiting ranks leave the cores to those still computing. `peer`, when
 * >= 0, is the rank whose message is awaited, for the timeout's message. */
static tw_status wait_all(MPI_Request *requests, int count, double start, double timeout_secs, const char *operation,
                          int peer, int size) {
  const double waiting_since = MPI_Wtime();
  long polls = 0;
  long sleep_ns = 1000;
  for (;;) {
    int done = 0;
    const int rc = MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_failure(rc, operation);
    if (done) return TW_OK;
    if (++polls < 200) continue;
    const double now = MPI_Wtime();
    const double waited = now - waiting_since;
    if (timeout_secs >= 0 && now - start > timeout_secs) {
      char message[300];
      if (peer >= 0) {
        snprintf(message, sizeof message,
                 "%s did not complete within %.3f s: rank %d of the %d ranks did not answer (dead, stuck or "
                 "elsewhere); the communicator is unusable from now on",
                 operation, timeout_secs, peer, size);
      } else {
        snprintf(message, sizeof message,
                 "%s did not complete within %.3f s: not all of the %d ranks took part (one is dead, stuck or "
                 "elsewhere); the communicator is unusable from now on",
                 operation, timeout_secs, size);
      }
      return tw_set_error(TW_DEADLINE_EXCEEDED, message);
    }
    if (waited < 1e-3) {
      sched_yield();
    } else {
      const struct timespec pause = {0, sleep_ns};
      nanosleep(&pause, NULL);
      if (sleep_ns < 1000000) sleep_ns *= 2;
    }
  }
}

static tw_status wait_for(MPI_Request *request, double start, double timeout_secs, const char *operation, int size) {
  return wait_all(request, 1, start, timeout_secs, operation, -1, size);
}

static void reduce_into(int64_t *acc, const int64_t *in, size_t count, tw_reduce_op op) {
  for (size_t i = 0; i < count; ++i) {
    if (op == TW_REDUCE_SUM) acc[i] += in[i];
    else if (op == TW_REDUCE_MIN && in[i] < acc[i]) acc[i] = in[i];
    else if (op == TW_REDUCE_MAX && in[i] > acc[i]) acc[i] = in[i];
  }
}

/* One exchange of the allreduce with `peer`: send ours, receive theirs into scratch (both in flight). */
static tw_status exchange(mpi_collective *c, int64_t *values, int count, int peer, int send, int receive,
                          double start, double timeout) {
  MPI_Request requests[2];
  int n = 0;
  int rc = MPI_SUCCESS;
  if (receive) rc = MPI_Irecv(c->scratch, count, MPI_INT64_T, peer, TW_MPI_TAG, c->comm, &requests[n++]);
  if (rc == MPI_SUCCESS && send) rc = MPI_Isend(values, count, MPI_INT64_T, peer, TW_MPI_TAG, c->comm, &requests[n++]);
  if (rc != MPI_SUCCESS) return mpi_failure(rc, "allreduce (MPI_Isend/MPI_Irecv)");
  return wait_all(requests, n, start, timeout, "allreduce (MPI_Isend/MPI_Irecv)", peer, c->size);
}

/* Recursive doubling over nonblocking point-to-point messages (what MPI's tuned blocking allreduce
 * does for small vectors; MPI_Iallreduce's generic schedule costs several times more per vote): log2(P)
 * exchanges, plus one before and one after for the ranks past the largest power of two. Each exchange
 * knows whom it waits for, which the timeout names. */
static tw_status mpi_allreduce(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout) {
  mpi_collective *c = user_data;
  if (op != TW_REDUCE_SUM && op != TW_REDUCE_MIN && op != TW_REDUCE_MAX) {
    return tw_set_error(TW_INVALID_ARGUMENT, "allreduce: unknown tw_reduce_op");
  }
  if (count > INT_MAX) return tw_set_error(TW_INVALID_ARGUMENT, "allreduce: more than INT_MAX values");
  if (count > c->scratch_count) {
    int64_t *grown = realloc(c->scratch, count * sizeof *grown);
    if (grown == NULL) return tw_set_error(TW_RESOURCE_EXHAUSTED, "allreduce: out of memory");
    c->scratch = grown;
    c->scratch_count = count;
  }
  if (c->size == 1 || count == 0) return TW_OK;
  const int n = (int)count;
  const double start = MPI_Wtime();
  int pof2 = 1;
  while (pof2 * 2 <= c->size) pof2 *= 2;
  const int extra = c->size - pof2;
  const int rank = c->rank;
  int inner = rank - extra; /* rank among the power of two; -1 for a rank that folds into its neighbour */
  tw_status status = TW_OK;
  if (rank < 2 * extra) {
    if (rank % 2 == 0) {
      status = exchange(c, values, n, rank + 1, 1, 0, start, timeout);
      inner = -1;
    } else {
      status = exchange(c, values, n, rank - 1, 0, 1, start, timeout);
      if (status == TW_OK) reduce_into(values, c->scratch, count, op);
      inner = rank / 2;
    }
  }
  for (int mask = 1; status == TW_OK && inner >= 0 && mask < pof2; mask <<= 1) {
    const int partner_inner = inner ^ mask;
    const int partner = partner_inner < extra ? partner_inner * 2 + 1 : partner_inner + extra;
    status = exchange(c, values, n, partner, 1, 1, start, timeout);
    if (status == TW_OK) reduce_into(values, c->scratch, count, op);
  }
  if (status == TW_OK && rank < 2 * extra) {
    if (rank % 2 == 1) {
      status = exchange(c, values, n, rank - 1, 1, 0, start, timeout);
    } else {
      status = exchange(c, values, n, rank + 1, 0, 1, start, timeout);
      if (status == TW_OK) memcpy(values, c->scratch, count * sizeof *values);
    }
  }
  return status;
}

static tw_status mpi_broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout) {
  mpi_collective *c = user_data;
  const double start = MPI_Wtime();
  for (size_t done = 0; done < size;) {
    const size_t piece = size - done < TW_MPI_CHUNK ? size - done : TW_MPI_CHUNK;
    MPI_Request request;
    const int rc = MPI_Ibcast((char *)data + done, (int)piece, MPI_BYTE, root, c->comm, &request);
    if (rc != MPI_SUCCESS) return mpi_failure(rc, "MPI_Ibcast");
    const tw_status status = wait_for(&request, start, timeout, "MPI_Ibcast", c->size);
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
  return wait_for(&request, MPI_Wtime(), timeout, "MPI_Ibarrier", c->size);
}

static void mpi_destroy(void *user_data) {
  mpi_collective *c = user_data;
  if (c == NULL) return;
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&c->comm);
  free(c->scratch);
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
  c->rank = rank;
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
