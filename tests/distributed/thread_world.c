#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include "thread_world.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum op_kind { OP_ALLREDUCE = 1, OP_BROADCAST, OP_BARRIER };

/* What one rank brought to the operation in progress. */
typedef struct arrival {
  enum op_kind kind;
  void *data;
  size_t count; /* int64 values (allreduce) or bytes (broadcast) */
  int op_or_root;
} arrival;

typedef struct rank_state {
  thread_world *world;
  int rank;
  tw_status fail_status;
  int fail_count;
  long operations;
  long after_operation; /* > 0: call after(after_arg) once this operation has completed */
  void (*after)(void *);
  void *after_arg;
} rank_state;

struct thread_world {
  int size;
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  unsigned long generation; /* bumped when an operation completes */
  int arrived;
  arrival arrivals[64];
  tw_status outcome; /* of the last completed operation */
  char outcome_message[200];
  rank_state ranks[64];
};

/* Runs under the mutex, by the last rank to arrive: does the work for everyone. */
static void complete(thread_world *w) {
  const arrival *first = &w->arrivals[0];
  w->outcome = TW_OK;
  for (int r = 1; r < w->size; ++r) {
    const arrival *a = &w->arrivals[r];
    if (a->kind != first->kind || a->count != first->count || a->op_or_root != first->op_or_root) {
      w->outcome = TW_INVALID_ARGUMENT;
      snprintf(w->outcome_message, sizeof w->outcome_message,
               "ranks disagree on the operation (rank 0: kind %d count %zu arg %d; rank %d: kind %d count %zu arg %d)",
               (int)first->kind, first->count, first->op_or_root, r, (int)a->kind, a->count, a->op_or_root);
      return;
    }
  }
  if (first->kind == OP_ALLREDUCE) {
    for (size_t i = 0; i < first->count; ++i) {
      int64_t acc = ((int64_t *)w->arrivals[0].data)[i];
      for (int r = 1; r < w->size; ++r) {
        const int64_t v = ((int64_t *)w->arrivals[r].data)[i];
        if (first->op_or_root == TW_REDUCE_SUM) acc += v;
        if (first->op_or_root == TW_REDUCE_MIN && v < acc) acc = v;
        if (first->op_or_root == TW_REDUCE_MAX && v > acc) acc = v;
      }
      for (int r = 0; r < w->size; ++r) ((int64_t *)w->arrivals[r].data)[i] = acc;
    }
  } else if (first->kind == OP_BROADCAST) {
    const int root = first->op_or_root;
    if (root < 0 || root >= w->size) {
      w->outcome = TW_INVALID_ARGUMENT;
      snprintf(w->outcome_message, sizeof w->outcome_message, "broadcast root %d is not a rank", root);
      return;
    }
    for (int r = 0; r < w->size; ++r) {
      if (r != root && first->count > 0) memcpy(w->arrivals[r].data, w->arrivals[root].data, first->count);
    }
  }
}

static tw_status meet(rank_state *self, arrival mine, double timeout_secs) {
  thread_world *w = self->world;
  if (self->fail_count > 0) {
    --self->fail_count;
    return tw_set_error(self->fail_status, "injected fault");
  }
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  if (timeout_secs >= 0) {
    const double whole = (double)(long)timeout_secs;
    deadline.tv_sec += (time_t)whole;
    deadline.tv_nsec += (long)((timeout_secs - whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
      deadline.tv_sec += 1;
      deadline.tv_nsec -= 1000000000L;
    }
  }
  pthread_mutex_lock(&w->mutex);
  const unsigned long generation = w->generation;
  w->arrivals[self->rank] = mine;
  if (++w->arrived == w->size) {
    complete(w);
    w->arrived = 0;
    ++w->generation;
    pthread_cond_broadcast(&w->changed);
  }
  while (w->generation == generation) {
    const int rc = timeout_secs < 0 ? pthread_cond_wait(&w->changed, &w->mutex)
                                    : pthread_cond_timedwait(&w->changed, &w->mutex, &deadline);
    if (rc == ETIMEDOUT && w->generation == generation) {
      const int arrived = w->arrived;
      --w->arrived; /* withdraw, so a later operation does not count this one */
      pthread_mutex_unlock(&w->mutex);
      char message[160];
      snprintf(message, sizeof message, "timed out after %.3f s: %d of %d ranks arrived", timeout_secs, arrived,
               w->size);
      return tw_set_error(TW_DEADLINE_EXCEEDED, message);
    }
  }
  const tw_status outcome = w->outcome;
  char message[sizeof w->outcome_message];
  memcpy(message, w->outcome_message, sizeof message);
  pthread_mutex_unlock(&w->mutex);
  if (outcome != TW_OK) return tw_set_error(outcome, message);
  if (++self->operations == self->after_operation) self->after(self->after_arg);
  return TW_OK;
}

static tw_status world_allreduce(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout) {
  arrival a = {OP_ALLREDUCE, values, count, (int)op};
  return meet(user_data, a, timeout);
}

static tw_status world_broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout) {
  arrival a = {OP_BROADCAST, data, size, root};
  return meet(user_data, a, timeout);
}

static tw_status world_barrier(void *user_data, double timeout) {
  arrival a = {OP_BARRIER, NULL, 0, 0};
  return meet(user_data, a, timeout);
}

thread_world *thread_world_create(int world_size) {
  if (world_size < 1 || world_size > 64) return NULL;
  thread_world *w = calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  w->size = world_size;
  pthread_mutex_init(&w->mutex, NULL);
  pthread_cond_init(&w->changed, NULL);
  for (int r = 0; r < world_size; ++r) {
    w->ranks[r].world = w;
    w->ranks[r].rank = r;
  }
  return w;
}

void thread_world_destroy(thread_world *w) {
  if (w == NULL) return;
  pthread_cond_destroy(&w->changed);
  pthread_mutex_destroy(&w->mutex);
  free(w);
}

tw_collective thread_world_collective(thread_world *w, int rank) {
  tw_collective table = TW_COLLECTIVE_INIT;
  table.rank = rank;
  table.world_size = w->size;
  table.allreduce_int64 = world_allreduce;
  table.broadcast = world_broadcast;
  table.barrier = world_barrier;
  return table;
}

void *thread_world_user_data(thread_world *w, int rank) { return &w->ranks[rank]; }

tw_status thread_world_options(tw_options **out, thread_world *w, int rank, double timeout_secs) {
  const tw_collective table = thread_world_collective(w, rank);
  tw_options *opts = NULL;
  tw_status s = tw_options_create(&opts);
  if (s == TW_OK) s = tw_options_set_collective(opts, &table, thread_world_user_data(w, rank));
  if (s == TW_OK) s = tw_options_set_double(opts, TW_OPT_COLLECTIVE_TIMEOUT_SECS, timeout_secs);
  if (s != TW_OK) {
    tw_options_destroy(opts);
    opts = NULL;
  }
  *out = opts;
  return s;
}

tw_status thread_world_row_shard_options(tw_options **out, thread_world *w, int rank, int64_t rows, int64_t cols,
                                         float *data, double timeout_secs) {
  int64_t box[2] = {rows, cols};
  const int64_t global_shape[2] = {w->size * rows, cols};
  const int64_t offset[2] = {rank * rows, 0};
  tw_tensor var = TW_TENSOR_INIT;
  var.name = "w";
  var.dtype = TW_FLOAT32;
  var.ndim = 2;
  var.shape = box;
  var.data = data;
  tw_status s = thread_world_options(out, w, rank, timeout_secs);
  if (s == TW_OK) s = tw_options_add_shard(*out, &var, global_shape, offset);
  if (s != TW_OK) {
    tw_options_destroy(*out);
    *out = NULL;
  }
  return s;
}

void thread_world_fail_next(thread_world *w, int rank, tw_status status, int count) {
  w->ranks[rank].fail_status = status;
  w->ranks[rank].fail_count = count;
}

long thread_world_operations(thread_world *w, int rank) { return w->ranks[rank].operations; }

void thread_world_after(thread_world *w, int rank, long operation, void (*fn)(void *), void *arg) {
  rank_state *r = &w->ranks[rank];
  r->after = fn;
  r->after_arg = arg;
  r->after_operation = operation;
}

typedef struct runner {
  void (*body)(int, void *);
  void *arg;
  int rank;
} runner;

static void *run_rank(void *p) {
  runner *r = p;
  r->body(r->rank, r->arg);
  return NULL;
}

int thread_world_run(thread_world *w, void (*body)(int rank, void *arg), void *arg) {
  pthread_t threads[64];
  runner runners[64];
  int started = 0;
  for (int r = 0; r < w->size; ++r) {
    runners[r] = (runner){body, arg, r};
    if (pthread_create(&threads[r], NULL, run_rank, &runners[r]) != 0) break;
    ++started;
  }
  for (int r = 0; r < started; ++r) pthread_join(threads[r], NULL);
  return started == w->size ? 0 : -1;
}
