/* One rank of a sharded job under mpirun (trainwatch/mpi.h) with faults injected by the driver
 * run_mpi_shard_faults.py: a rank SIGKILLed inside a save (fault_points.h), a rank out of space
 * (RLIMIT_FSIZE), a second job in the same directory, a restore after a part was damaged.
 *
 * The model: "w" float32 [4·kWRows, kWCols] and "e" bfloat16 [4·kERows, kECols], sharded by rows (rank r
 * holds rows r·k … r·k+k-1), and "bias" float64 [kBias], replicated. Every value is a function of the
 * job's model number, the global step and the element's global index (fill), so any rank can say
 * bit-exactly whether what it restored is the checkpoint of step g. Each run (one step) sets the values
 * of the step it makes; every rank saves every step (TW_OPT_CHECKPOINT_EVERY_N_STEPS 1).
 *
 * usage (ranks under mpirun -np 4; each job restores the newest checkpoint of DIR at creation):
 *   mpi_shard_faults trial DIR VICTIM POINT     save A; save B with POINT armed on rank VICTIM (POINT
 *                                               "creation/P": P armed during the save at creation instead;
 *                                               "delay:F": a kill F × A's save time into B's run)
 *   mpi_shard_faults enospc DIR VICTIM BYTES    save A; save B with VICTIM's file size limited to BYTES
 *   mpi_shard_faults hold DIR MODEL READY GO    create, rank 0 touches READY, wait for GO; save A and B
 *   mpi_shard_faults restore DIR                restore and check only: no saving
 * and without MPI:
 *   mpi_shard_faults inspect DIR STEP MODEL     the checkpoint of STEP verifies and reads whole (through
 *                                               its index) as MODEL's values of STEP
 *
 * Every rank prints a line per phase as it ends it, flushed (a rank killed later has said how far it got):
 *   "rank R create=S restored=G verified=V clean=C | error message"   after the session's creation
 *   "rank R A=S | …", "rank R B=S | …", "rank R close=S | …"
 * verified: every value restored is fill(MODEL, G) bit-exactly; clean (rank 0): no part file without its
 * index, no temporary file and no index the state file does not list (what a chief killed between the
 * two left, C14) is in DIR once creation cleaned it and saved (else 0 and the names in the message), -1
 * on other ranks. Faults never hit model 2's jobs. */
#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <trainwatch.h>
#include <trainwatch/mpi.h>

#include "fault_points.h"

enum { kWRows = 512, kWCols = 32, kERows = 256, kECols = 64, kBias = 7, kMaxRanks = 8 };

typedef struct model {
  int number; /* 1 or 2: two jobs write different values */
  int rank, ranks;
  float w[kWRows * kWCols];    /* rows rank·kWRows … */
  uint16_t e[kERows * kECols]; /* bfloat16 bits */
  double bias[kBias];
} model;

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* A value exactly representable in every dtype used: a 20-bit integer over 256. */
static double value(int number, int64_t step, int variable, int64_t index) {
  const uint64_t h =
      mix(((uint64_t)number << 56) ^ ((uint64_t)variable << 48) ^ ((uint64_t)step << 24) ^ (uint64_t)index);
  return (double)((int64_t)(h >> 44) - (1 << 19)) / 256.0;
}

static uint16_t to_bfloat16(double v) {
  const float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return (uint16_t)(bits >> 16);
}

/* Sets m to the values of `step`, or (check) says whether it holds them bit-exactly. */
static int fill(model *m, int64_t step, int check) {
  int same = 1;
  for (int64_t i = 0; i < kWRows * kWCols; ++i) {
    const float v = (float)value(m->number, step, 1, (int64_t)m->rank * kWRows * kWCols + i);
    if (check)
      same = same && memcmp(&m->w[i], &v, sizeof v) == 0;
    else
      m->w[i] = v;
  }
  for (int64_t i = 0; i < kERows * kECols; ++i) {
    const uint16_t v = to_bfloat16(value(m->number, step, 2, (int64_t)m->rank * kERows * kECols + i));
    if (check)
      same = same && m->e[i] == v;
    else
      m->e[i] = v;
  }
  for (int64_t i = 0; i < kBias; ++i) {
    const double v = value(m->number, step, 3, i);
    if (check)
      same = same && memcmp(&m->bias[i], &v, sizeof v) == 0;
    else
      m->bias[i] = v;
  }
  return same;
}

static tw_status init_values(void *user_data, tw_session *session) {
  (void)session;
  fill(user_data, 0, 0);
  return TW_OK;
}

static tw_status train_step(void *user_data, tw_step_context *ctx) {
  fill(user_data, tw_step_context_global_step(ctx) + 1, 0);
  return TW_OK;
}

/* One line per phase, flushed at once: a rank killed later has still said how far it got. */
static void say(int rank, const char *phase, tw_status status, const char *extra) {
  printf("rank %d %s=%s%s | %s\n", rank, phase, tw_status_name(status), extra,
         status == TW_OK ? "" : tw_last_error_message());
  fflush(stdout);
}

static tw_status add_shard(tw_options *o, const char *name, tw_dtype dtype, void *data, int64_t rows, int64_t cols,
                           int rank, int ranks) {
  int64_t shape[2] = {rows, cols};
  const int64_t global_shape[2] = {rows * ranks, cols};
  const int64_t offset[2] = {rows * rank, 0};
  tw_tensor t = TW_TENSOR_INIT;
  t.name = name;
  t.dtype = dtype;
  t.ndim = 2;
  t.shape = shape;
  t.data = data;
  return tw_options_add_shard(o, &t, global_shape, offset);
}

/* The options of one rank: the model's variables in `dir`, saving every step when `save`. */
static tw_status make_options(model *m, const char *dir, int save, const tw_collective *table, void *user_data,
                              tw_options **out) {
  tw_options *o = NULL;
  tw_status s = tw_options_create(&o);
  if (s != TW_OK) return s;
  int64_t bias_shape[1] = {kBias};
  tw_tensor bias = TW_TENSOR_INIT;
  bias.name = "bias";
  bias.dtype = TW_FLOAT64;
  bias.ndim = 1;
  bias.shape = bias_shape;
  bias.data = m->bias;
  if (s == TW_OK) s = tw_options_set_string(o, TW_OPT_CHECKPOINT_DIR, dir);
  if (s == TW_OK) s = add_shard(o, "w", TW_FLOAT32, m->w, kWRows, kWCols, m->rank, m->ranks);
  if (s == TW_OK) s = add_shard(o, "e", TW_BFLOAT16, m->e, kERows, kECols, m->rank, m->ranks);
  if (s == TW_OK) s = tw_options_add_variable(o, &bias);
  if (s == TW_OK) s = tw_options_set_init_fn(o, init_values, m, NULL);
  if (s == TW_OK) s = tw_options_set_int64(o, TW_OPT_CHECKPOINT_EVERY_N_STEPS, save ? 1 : 0);
  if (s == TW_OK) s = tw_options_set_none(o, TW_OPT_SUMMARY_EVERY_N_STEPS);
  if (s == TW_OK) s = tw_options_set_int64(o, TW_OPT_STEP_COUNT_EVERY_N_STEPS, 0);
  if (s == TW_OK) s = tw_options_set_int64(o, TW_OPT_CATCH_PREEMPTION_SIGNALS, 0);
  if (s == TW_OK) s = tw_options_set_double(o, TW_OPT_COLLECTIVE_TIMEOUT_SECS, 60);
  if (s == TW_OK) s = tw_options_set_collective(o, table, user_data);
  if (s != TW_OK) {
    tw_options_destroy(o);
    return s;
  }
  *out = o;
  return TW_OK;
}

/* Whether the state file of `dir` lists the checkpoint `name` (as "<dir>/<name>" or "<name>"). */
static int listed(const char *dir, const char *name) {
  char path[1024], text[16384], quoted[300], slashed[300];
  snprintf(path, sizeof path, "%s/checkpoint", dir);
  FILE *f = fopen(path, "r");
  if (f == NULL) return 0;
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  snprintf(quoted, sizeof quoted, "\"%s\"", name);
  snprintf(slashed, sizeof slashed, "/%s\"", name);
  return strstr(text, quoted) != NULL || strstr(text, slashed) != NULL;
}

/* What the chief finds after its session's creation cleaned the directory and saved: part files whose
 * index is absent, temporary files of dead writers and indexes the state file does not list are
 * left-overs of a failed or cut-short save. 1 when there are none, else 0 with their names appended to
 * `why`. */
static int directory_clean(const char *dir, char *why, size_t size) {
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  int clean = 1;
  struct dirent *entry;
  while ((entry = readdir(d)) != NULL) {
    const char *name = entry->d_name;
    const char *part = strstr(name, ".part-");
    int stale = strstr(name, ".tw-tmp-") != NULL;
    if (!stale && part != NULL) {
      char index[1024];
      snprintf(index, sizeof index, "%s/%.*s", dir, (int)(part - name), name);
      struct stat st;
      stale = stat(index, &st) != 0;
    }
    if (!stale && part == NULL && strncmp(name, "model.ckpt-", 11) == 0) stale = !listed(dir, name);
    if (stale) {
      clean = 0;
      const size_t used = strlen(why);
      snprintf(why + used, size - used, " stale:%s", name);
    }
  }
  closedir(d);
  return clean;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct job {
  const char *mode, *dir;
  int victim;
  const char *point; /* trial */
  long long limit;   /* enospc: RLIMIT_FSIZE of the victim during B */
  const char *ready, *go;
} job;

static void wait_for_file(const char *path) {
  struct stat st;
  const struct timespec pause = {0, 20 * 1000 * 1000};
  while (stat(path, &st) != 0) nanosleep(&pause, NULL);
}

static int arm(const job *j, const char *point, double reference_secs, int rank) {
  char delay[64];
  double fraction = 0;
  if (sscanf(point, "delay:%lf", &fraction) == 1) { /* a fraction of A's save time */
    snprintf(delay, sizeof delay, "delay:%.6f", fraction * reference_secs);
    point = delay;
  }
  if (fault_points_arm(point, j->dir, rank) == 0) return 0;
  fprintf(stderr, "rank %d: bad fault point %s\n", rank, point);
  return -1;
}

/* Runs one rank's job; returns 1 when every call succeeded, 0 when one failed, -1 when it failed
 * because the collective broke (a peer gone: this rank cannot finalize MPI). */
static int run_job(const job *j, model *m, const tw_collective *table, void *user_data) {
  const int trial = strcmp(j->mode, "trial") == 0, enospc = strcmp(j->mode, "enospc") == 0;
  const int saves = strcmp(j->mode, "restore") != 0;
  const int victim = m->rank == j->victim;
  const char *creation_point = trial && victim && strncmp(j->point, "creation/", 9) == 0 ? j->point + 9 : NULL;
  tw_options *opts = NULL;
  tw_session *session = NULL;
  tw_status s = make_options(m, j->dir, saves, table, user_data, &opts);
  if (s == TW_OK && creation_point != NULL && arm(j, creation_point, 0, m->rank) != 0) s = TW_INVALID_ARGUMENT;
  if (s == TW_OK) s = tw_monitored_training_session_create(&session, opts, NULL, 0, NULL, 0);
  fault_points_disarm();
  tw_options_destroy(opts);
  int64_t restored = -1;
  int verified = 0, clean = -1;
  char stale[1024] = "", extra[1200];
  if (s == TW_OK) {
    restored = tw_session_global_step(session);
    verified = fill(m, restored, 1);
    if (m->rank == 0) clean = directory_clean(j->dir, stale, sizeof stale);
  }
  snprintf(extra, sizeof extra, " restored=%lld verified=%d clean=%d%s", (long long)restored, verified, clean, stale);
  say(m->rank, "create", s, extra);
  if (s != TW_OK) return s == TW_DEADLINE_EXCEEDED || s == TW_UNAVAILABLE ? -1 : 0;
  if (strcmp(j->mode, "hold") == 0) {
    if (m->rank == 0) fclose(fopen(j->ready, "w"));
    wait_for_file(j->go);
  }
  tw_status a = TW_OK, b = TW_OK;
  if (saves) {
    const double start = now();
    a = tw_session_run(session, NULL, 0, train_step, m);
    say(m->rank, "A", a, "");
    const double a_secs = now() - start;
    if (a == TW_OK) {
      struct rlimit unlimited;
      getrlimit(RLIMIT_FSIZE, &unlimited);
      if (enospc && victim) { /* EFBIG instead of the signal: writes fail as on a full disk */
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit limited = unlimited;
        limited.rlim_cur = (rlim_t)j->limit;
        setrlimit(RLIMIT_FSIZE, &limited);
      }
      if (trial && victim && creation_point == NULL && arm(j, j->point, a_secs, m->rank) != 0) b = TW_INVALID_ARGUMENT;
      if (b == TW_OK) b = tw_session_run(session, NULL, 0, train_step, m);
      fault_points_disarm();
      if (enospc && victim) setrlimit(RLIMIT_FSIZE, &unlimited);
      say(m->rank, "B", b, "");
    }
  }
  const tw_status closed = tw_session_close(session);
  say(m->rank, "close", closed, "");
  if (tw_session_destroy(session) != TW_OK) say(m->rank, "destroy", TW_INTERNAL, "");
  const tw_status all[] = {a, b, closed};
  int result = 1;
  for (int i = 0; i < 3; ++i) {
    if (all[i] == TW_DEADLINE_EXCEEDED || all[i] == TW_UNAVAILABLE) return -1;
    if (all[i] != TW_OK) result = 0;
  }
  return result;
}

/* inspect DIR STEP MODEL: the checkpoint of STEP verifies and reads whole as MODEL's values of STEP. */
static int inspect(const char *dir, int64_t step, int number, int ranks) {
  char path[1024];
  snprintf(path, sizeof path, "%s/model.ckpt-%lld", dir, (long long)step);
  const tw_status verified = tw_checkpoint_verify(path);
  int match = verified == TW_OK;
  if (match) {
    /* Whole tensors, assembled from the parts by the reader; compared with every rank's fill. */
    static float w[kMaxRanks * kWRows * kWCols];
    static uint16_t e[kMaxRanks * kERows * kECols];
    double bias[kBias];
    int64_t w_shape[2] = {(int64_t)ranks * kWRows, kWCols}, e_shape[2] = {(int64_t)ranks * kERows, kECols};
    int64_t bias_shape[1] = {kBias};
    tw_tensor t[3] = {TW_TENSOR_INIT, TW_TENSOR_INIT, TW_TENSOR_INIT};
    t[0].name = "w", t[0].dtype = TW_FLOAT32, t[0].ndim = 2, t[0].shape = w_shape, t[0].data = w;
    t[1].name = "e", t[1].dtype = TW_BFLOAT16, t[1].ndim = 2, t[1].shape = e_shape, t[1].data = e;
    t[2].name = "bias", t[2].dtype = TW_FLOAT64, t[2].ndim = 1, t[2].shape = bias_shape, t[2].data = bias;
    for (int i = 0; i < 3 && match; ++i) match = tw_checkpoint_load_variable(path, &t[i]) == TW_OK;
    static model m;
    for (int rank = 0; match && rank < ranks; ++rank) {
      m.number = number;
      m.rank = rank;
      m.ranks = ranks;
      memcpy(m.w, w + (size_t)rank * kWRows * kWCols, sizeof m.w);
      memcpy(m.e, e + (size_t)rank * kERows * kECols, sizeof m.e);
      memcpy(m.bias, bias, sizeof m.bias);
      match = fill(&m, step, 1);
    }
  }
  printf("inspect step=%lld verify=%s match=%d | %s\n", (long long)step, tw_status_name(verified), match,
         verified == TW_OK ? "" : tw_last_error_message());
  return 0;
}

int main(int argc, char **argv) {
  tw_set_log_level(TW_LOG_ERROR);
  job j = {0};
  j.mode = argc > 2 ? argv[1] : "";
  j.dir = argc > 2 ? argv[2] : "";
  j.victim = -1;
  int number = 1, ok = 0;
  if (strcmp(j.mode, "inspect") == 0 && argc == 5) return inspect(j.dir, atoll(argv[3]), atoi(argv[4]), 4);
  if (strcmp(j.mode, "trial") == 0 && argc == 5) {
    j.victim = atoi(argv[3]);
    j.point = argv[4];
    ok = 1;
  } else if (strcmp(j.mode, "enospc") == 0 && argc == 5) {
    j.victim = atoi(argv[3]);
    j.limit = atoll(argv[4]);
    ok = 1;
  } else if (strcmp(j.mode, "hold") == 0 && argc == 6) {
    number = atoi(argv[3]);
    j.ready = argv[4];
    j.go = argv[5];
    ok = number == 1 || number == 2;
  } else if (strcmp(j.mode, "restore") == 0 && argc == 3) {
    ok = 1;
  }
  if (!ok) {
    fprintf(stderr, "usage: see the comment at the top of mpi_shard_faults.c\n");
    return 2;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  static model m;
  MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m.ranks);
  m.number = number;
  tw_collective mpi_table;
  void *mpi_data = NULL;
  if (m.ranks > kMaxRanks || tw_mpi_collective_create(&mpi_table, &mpi_data, MPI_COMM_WORLD) != TW_OK) {
    fprintf(stderr, "rank %d: %s\n", m.rank, tw_last_error_message());
    return 1;
  }
  void *user_data = NULL;
  const tw_collective table = fault_points_wrap(&mpi_table, mpi_data, &user_data);
  /* A rank whose peers are gone cannot finalize (MPI would wait for them): it leaves as they did. Other
   * failures end the job normally, so that mpirun lets every rank report. */
  if (run_job(&j, &m, &table, user_data) < 0) _exit(3);
  MPI_Finalize();
  return 0;
}
