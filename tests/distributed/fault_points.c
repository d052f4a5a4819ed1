#define TW_EXPERIMENTAL_API /* the collective seam (trainwatch/common.h, "Experimental API") */
#define _GNU_SOURCE         /* RTLD_NEXT */
#include "fault_points.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef enum { KIND_WRITE, KIND_FSYNC, KIND_RENAME, KIND_ALLREDUCE, KIND_DELAY } kind;
typedef enum { FILE_PART, FILE_INDEX, FILE_STATE, FILE_DIR, FILE_ANY, FILE_OTHER } file_class;

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_fsync)(int);
static int (*real_rename)(const char *, const char *);
static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void resolve(void) {
  /* POSIX's way to turn dlsym's object pointer into a function pointer (ISO C has none). */
  void *symbol = dlsym(RTLD_NEXT, "write");
  memcpy(&real_write, &symbol, sizeof symbol);
  symbol = dlsym(RTLD_NEXT, "fsync");
  memcpy(&real_fsync, &symbol, sizeof symbol);
  symbol = dlsym(RTLD_NEXT, "rename");
  memcpy(&real_rename, &symbol, sizeof symbol);
  if (real_write == NULL || real_fsync == NULL || real_rename == NULL) abort(); /* test setup, not a fault */
}

/* The armed point; `armed` is read first by every call (one atomic load when nothing is armed). */
static atomic_int armed;
static atomic_int generation; /* a delay kill fires only if its arming is still the current one */
static atomic_int count;      /* calls of the armed kind and file so far */
static kind point_kind;
static file_class point_file;
static int point_after;
static int point_n;
static char point_text[128];
static char point_dir[PATH_MAX];
static int point_rank;

static void die(void) {
  char line[256];
  const int n = snprintf(line, sizeof line, "fault: rank %d killed at %s\n", point_rank, point_text);
  if (n > 0) real_write(2, line, (size_t)n);
  kill(getpid(), SIGKILL);
}

/* The class of the file `name` (a basename) of the checkpoint directory. */
static file_class classify_name(const char *name) {
  char plain[NAME_MAX + 1];
  snprintf(plain, sizeof plain, "%s", name);
  char *temp = strstr(plain, ".tw-tmp-"); /* ".<name>.tw-tmp-<pid>-<n>": the file <name> being written */
  if (plain[0] == '.' && temp != NULL) {
    *temp = '\0';
    memmove(plain, plain + 1, strlen(plain));
  }
  if (strstr(plain, ".part-") != NULL) return FILE_PART;
  if (strcmp(plain, "checkpoint") == 0) return FILE_STATE;
  if (strncmp(plain, "model.ckpt-", 11) == 0) return FILE_INDEX;
  return FILE_OTHER;
}

/* The class of `path` (resolved through symlinks: /proc/self/fd links are absolute). */
static file_class classify_path(const char *path) {
  char resolved_path[PATH_MAX];
  if (realpath(path, resolved_path) == NULL) {
    /* A file renamed away or not there yet: resolve its directory instead. */
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash == NULL ? 1 : (int)(slash - path), slash == NULL ? "." : path);
    if (realpath(dir, resolved_path) == NULL) return FILE_OTHER;
    return strcmp(resolved_path, point_dir) == 0 ? classify_name(slash == NULL ? path : slash + 1) : FILE_OTHER;
  }
  if (strcmp(resolved_path, point_dir) == 0) return FILE_DIR;
  const char *slash = strrchr(resolved_path, '/');
  if (slash == NULL || (size_t)(slash - resolved_path) != strlen(point_dir) ||
      strncmp(resolved_path, point_dir, strlen(point_dir)) != 0) {
    return FILE_OTHER;
  }
  return classify_name(slash + 1);
}

static file_class classify_fd(int fd) {
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return FILE_OTHER;
  target[n] = '\0';
  return classify_path(target);
}

static int matches(kind k, file_class f) {
  if (k != point_kind) return 0;
  if (point_file == FILE_ANY) return f != FILE_OTHER || k == KIND_ALLREDUCE;
  return f == point_file;
}

/* Called around every interposed call: `after` 0 before it, 1 once it returned. Returns whether this
 * call is the armed one (counted before the call, so both sides see the same number). */
static int counts(kind k, file_class f) { return matches(k, f) && atomic_fetch_add(&count, 1) + 1 == point_n; }

static void at(int is_armed_call, int after) {
  if (is_armed_call && after == point_after) die();
}

ssize_t write(int fd, const void *buf, size_t size) {
  pthread_once(&resolved, resolve);
  if (!atomic_load(&armed) || point_kind != KIND_WRITE) return real_write(fd, buf, size);
  const int hit = counts(KIND_WRITE, classify_fd(fd));
  at(hit, 0);
  const ssize_t n = real_write(fd, buf, size);
  at(hit, 1);
  return n;
}

int fsync(int fd) {
  pthread_once(&resolved, resolve);
  if (!atomic_load(&armed) || point_kind != KIND_FSYNC) return real_fsync(fd);
  const int hit = counts(KIND_FSYNC, classify_fd(fd));
  at(hit, 0);
  const int r = real_fsync(fd);
  at(hit, 1);
  return r;
}

int rename(const char *from, const char *to) {
  pthread_once(&resolved, resolve);
  if (!atomic_load(&armed) || point_kind != KIND_RENAME) return real_rename(from, to);
  const int hit = counts(KIND_RENAME, classify_path(to));
  at(hit, 0);
  const int r = real_rename(from, to);
  at(hit, 1);
  return r;
}

static void *delay_kill(void *arg) {
  const int mine = (int)(intptr_t)arg;
  const double secs = (double)point_n / 1e6;
  struct timespec t = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
  while (nanosleep(&t, &t) != 0) {
  }
  if (atomic_load(&armed) && atomic_load(&generation) == mine) die();
  return NULL;
}

int fault_points_arm(const char *point, const char *dir, int rank) {
  pthread_once(&resolved, resolve);
  fault_points_disarm();
  char kind_text[16] = "", file_text[16] = "", when_text[16] = "";
  int n = 0;
  double secs = 0;
  if (sscanf(point, "delay:%lf", &secs) == 1 && secs >= 0) {
    point_kind = KIND_DELAY;
    point_n = (int)(secs * 1e6); /* microseconds */
  } else if (sscanf(point, "%15[a-z]:%15[a-z]:%15[a-z]:%d", kind_text, file_text, when_text, &n) == 4 && n >= 1) {
    static const char *const kinds[] = {"write", "fsync", "rename", "allreduce"};
    static const char *const files[] = {"part", "index", "state", "dir", "any"};
    int k = -1, f = -1;
    for (int i = 0; i < 4; ++i) k = strcmp(kind_text, kinds[i]) == 0 ? i : k;
    for (int i = 0; i < 5; ++i) f = strcmp(file_text, files[i]) == 0 ? i : f;
    const int after = strcmp(when_text, "after") == 0;
    if (k < 0 || f < 0 || (!after && strcmp(when_text, "before") != 0)) return -1;
    if (k == KIND_ALLREDUCE && f != FILE_ANY) return -1;
    point_kind = (kind)k;
    point_file = (file_class)f;
    point_after = after;
    point_n = n;
  } else {
    return -1;
  }
  if (realpath(dir, point_dir) == NULL) return -1;
  snprintf(point_text, sizeof point_text, "%s", point);
  point_rank = rank;
  atomic_store(&count, 0);
  const int mine = atomic_fetch_add(&generation, 1) + 1;
  atomic_store(&armed, 1);
  if (point_kind == KIND_DELAY) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, delay_kill, (void *)(intptr_t)mine) != 0) return -1;
    pthread_detach(thread);
  }
  return 0;
}

void fault_points_disarm(void) {
  atomic_store(&armed, 0);
  atomic_fetch_add(&generation, 1);
}

typedef struct wrapped {
  tw_collective inner;
  void *inner_user_data;
} wrapped;

static tw_status wrapped_allreduce(void *user_data, int64_t *values, size_t n, tw_reduce_op op, double timeout) {
  const wrapped *w = user_data;
  const int hit = atomic_load(&armed) && counts(KIND_ALLREDUCE, FILE_ANY);
  at(hit, 0);
  const tw_status s = w->inner.allreduce_int64(w->inner_user_data, values, n, op, timeout);
  at(hit, 1);
  return s;
}

static tw_status wrapped_broadcast(void *user_data, void *data, size_t size, int32_t root, double timeout) {
  const wrapped *w = user_data;
  return w->inner.broadcast(w->inner_user_data, data, size, root, timeout);
}

static tw_status wrapped_barrier(void *user_data, double timeout) {
  const wrapped *w = user_data;
  return w->inner.barrier(w->inner_user_data, timeout);
}

static void wrapped_destroy(void *user_data) {
  wrapped *w = user_data;
  const tw_collective inner = w->inner;
  void *inner_user_data = w->inner_user_data;
  free(w);
  if (inner.destroy != NULL) inner.destroy(inner_user_data);
}

tw_collective fault_points_wrap(const tw_collective *inner, void *inner_user_data, void **out_user_data) {
  wrapped *w = malloc(sizeof *w);
  if (w == NULL) abort();
  w->inner = *inner;
  w->inner_user_data = inner_user_data;
  tw_collective table = *inner;
  table.allreduce_int64 = wrapped_allreduce;
  table.broadcast = wrapped_broadcast;
  table.barrier = wrapped_barrier;
  table.destroy = wrapped_destroy;
  *out_user_data = w;
  return table;
}
