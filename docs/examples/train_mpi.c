/* Many processes, one training run, in C: data-parallel linear regression under `mpirun -np 4`. Every
 * rank holds a replica of the weights and its own shard of the data; the step averages the gradients
 * with the program's own MPI_Allreduce (as DDP or Horovod would). The ranks' sessions agree through
 * libtrainwatch_mpi (trainwatch/mpi.h): rank 0 is the chief and checkpoints, StopAtStepHook stops every
 * rank after the same run, and a NaN spike injected into rank 2's loss only makes NanTensorHook roll
 * every rank back to the same checkpoint together.
 *
 * usage: mpirun -np 4 train_mpi CHECKPOINT_DIR [last_step]
 * Exits non-zero unless every rank ends with the same weights, step and a fitted model. */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <trainwatch.h>
#include <trainwatch/mpi.h>

#define FEATURES 4
#define SHARD 64

typedef struct replica {
  float w[FEATURES]; /* the model: y = w . x */
  float x[SHARD][FEATURES], y[SHARD];
  int rank;
  int spiked; /* the NaN spike is injected once */
} replica;

static const float kTrue[FEATURES] = {2.0f, -1.0f, 0.5f, 3.0f};

static void make_shard(replica *r) {
  unsigned seed = 12345u + (unsigned)r->rank;
  for (int i = 0; i < SHARD; ++i) {
    r->y[i] = 0;
    for (int j = 0; j < FEATURES; ++j) {
      seed = seed * 1103515245u + 12345u;
      r->x[i][j] = (float)((seed >> 8) % 2000) / 1000.0f - 1.0f;
      r->y[i] += kTrue[j] * r->x[i][j];
    }
  }
}

static tw_status init_weights(void *user_data, tw_session *session) {
  (void)session;
  replica *r = user_data;
  for (int j = 0; j < FEATURES; ++j) r->w[j] = 0;
  return TW_OK;
}

/* One SGD step: the shard's gradient, averaged over the ranks by the program's own allreduce. */
static tw_status train_step(void *user_data, tw_step_context *ctx) {
  replica *r = user_data;
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  float grad[FEATURES + 1] = {0}; /* the last slot carries the loss */
  for (int i = 0; i < SHARD; ++i) {
    float err = -r->y[i];
    for (int j = 0; j < FEATURES; ++j) err += r->w[j] * r->x[i][j];
    for (int j = 0; j < FEATURES; ++j) grad[j] += 2 * err * r->x[i][j] / SHARD;
    grad[FEATURES] += err * err / SHARD;
  }
  if (MPI_Allreduce(MPI_IN_PLACE, grad, FEATURES + 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
    return tw_set_error(TW_UNAVAILABLE, "gradient allreduce failed");
  }
  for (int j = 0; j < FEATURES; ++j) r->w[j] -= 0.3f * grad[j] / (float)world;
  float loss = grad[FEATURES] / (float)world;
  if (r->rank == 2 && tw_step_context_global_step(ctx) == 25 && !r->spiked) { /* a bad batch, on rank 2 only */
    r->spiked = 1;
    loss = NAN;
  }
  tw_tensor out = TW_TENSOR_INIT;
  out.dtype = TW_FLOAT32;
  out.name = "loss";
  out.data = &loss;
  return tw_step_context_publish_copy(ctx, &out);
}

static int check(tw_status status, const char *what) {
  if (status == TW_OK) return 0;
  fprintf(stderr, "%s: %s: %s\n", what, tw_status_name(status), tw_last_error_message());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: mpirun -np 4 %s CHECKPOINT_DIR [last_step]\n", argv[0]);
    return 2;
  }
  const int64_t last_step = argc > 2 ? atoll(argv[2]) : 60;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  static replica r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  make_shard(&r);
  tw_set_log_level(TW_LOG_WARNING);

  /* The job's collective: the options own it from here on. */
  tw_collective table;
  void *user_data = NULL;
  tw_options *opts = NULL;
  tw_tensor w = TW_TENSOR_INIT;
  const int64_t shape[1] = {FEATURES};
  w.dtype = TW_FLOAT32, w.name = "w", w.data = r.w, w.ndim = 1, w.shape = shape;
  int failed = check(tw_options_create(&opts), "options") ||
               check(tw_mpi_collective_create(&table, &user_data, MPI_COMM_WORLD), "collective") ||
               check(tw_options_set_collective(opts, &table, user_data), "collective") ||
               check(tw_options_set_string(opts, TW_OPT_CHECKPOINT_DIR, argv[1]), "checkpoint dir") ||
               check(tw_options_set_int64(opts, TW_OPT_CHECKPOINT_EVERY_N_STEPS, 10), "save steps") ||
               check(tw_options_add_variable(opts, &w), "variable") ||
               check(tw_options_set_init_fn(opts, init_weights, &r, NULL), "init_fn");

  tw_hook *hooks[2] = {NULL, NULL};
  tw_options *nan_opts = NULL;
  const char *watch[] = {"loss"};
  failed =
      failed || check(tw_stop_at_step_hook_create(&hooks[0], TW_UNSET, last_step), "StopAtStepHook") ||
      check(tw_options_create(&nan_opts), "options") ||
      check(tw_options_set_int64(nan_opts, TW_OPT_NAN_ACTION, TW_NAN_ACTION_ROLLBACK), "NaN action") ||
      check(tw_nan_tensor_hook_create_with_options(&hooks[1], watch, 1, nan_opts, NULL, NULL, NULL), "NanTensorHook");
  tw_session *session = NULL;
  /* is_chief is left at its default: rank 0 is the chief, and only it checkpoints. */
  failed = failed || check(tw_monitored_training_session_create(&session, opts, hooks, 2, NULL, 0), "session");
  int64_t runs = 0;
  while (!failed && !tw_session_should_stop(session)) {
    failed = check(tw_session_run(session, NULL, 0, train_step, &r), "run");
    ++runs;
  }
  int64_t step = -1;
  if (session != NULL) {
    step = tw_session_global_step(session);
    failed = check(tw_session_close(session), "close") || failed;
    failed = check(tw_session_destroy(session), "destroy") || failed;
  }
  tw_hook_destroy(hooks[0]);
  tw_hook_destroy(hooks[1]);
  tw_options_destroy(nan_opts);
  tw_options_destroy(opts);

  /* Every rank must hold the same weights and step, close to the true model. */
  double mine[FEATURES + 1], low[FEATURES + 1], high[FEATURES + 1];
  double error = 0;
  for (int j = 0; j < FEATURES; ++j) {
    mine[j] = r.w[j];
    error += fabs(r.w[j] - kTrue[j]);
  }
  mine[FEATURES] = (double)step;
  MPI_Allreduce(mine, low, FEATURES + 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, high, FEATURES + 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int same = 1;
  for (int j = 0; j <= FEATURES; ++j) same = same && low[j] == high[j];
  printf("rank %d: %lld runs, global step %lld, w = [%.4f %.4f %.4f %.4f], |w - w*| = %.4f, ranks agree: %s\n", r.rank,
         (long long)runs, (long long)step, r.w[0], r.w[1], r.w[2], r.w[3], error, same ? "yes" : "NO");
  MPI_Finalize();
  return failed || !same || step != last_step || error > 0.05 ? 1 : 0;
}
