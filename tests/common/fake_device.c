/* The fake accelerator of fake_device.h. */
#define _GNU_SOURCE
#include "fake_device.h"

#include "reference.h" /* count_nonfinite classifies with the numerics tests' scalar model */

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Queued work runs at the latest this long after it was enqueued, even if nobody waits for it. */
#define LATE_NS 50000000LL

enum op_id {
  OP_COPY_TO_HOST,
  OP_COPY_TO_DEVICE,
  OP_COUNT,
  OP_RECORD,
  OP_WAIT,
  OP_QUERY,
  OP_RELEASE,
  OP_ALLOC_PINNED,
  OP_FREE_PINNED,
  OP_N
};
static const char *const op_names[OP_N] = {"copy_to_host", "copy_to_device", "count_nonfinite", "record",     "wait",
                                           "query",        "release",        "alloc_pinned",    "free_pinned"};

/* A device allocation: the same pages at `device` (PROT_NONE) and `shadow` (read-write). */
typedef struct allocation {
  unsigned char *device;
  unsigned char *shadow;
  size_t size, mapped;
  struct allocation *next;
} allocation;

typedef struct pinned {
  const void *owner; /* the registration that allocated it */
  unsigned char *pointer;
  size_t size;
  int64_t pending; /* queued work that writes or reads it */
  struct pinned *next;
} pinned;

typedef struct counted {
  const unsigned char *shadow;
  int32_t dtype;
  int64_t count;
} counted;

/* One queued unit of work. */
typedef struct work {
  uint64_t seq;
  int64_t enqueued_ns;
  int kind; /* OP_COPY_TO_HOST, OP_COPY_TO_DEVICE or OP_COUNT */
  unsigned char *dst;
  const unsigned char *src;
  size_t size;
  pinned *host;     /* the pinned buffer it touches */
  counted *tensors; /* OP_COUNT */
  size_t tensor_count;
  tw_device_scan *results; /* OP_COUNT */
  struct work *next;
} work;

/* One registration: its queue and worker. */
typedef struct fake {
  struct fake *next_live; /* the registrations whose worker runs */
  int32_t type;
  pthread_t worker;
  pthread_cond_t wake, done;
  work *head, *tail;
  uint64_t enqueued, completed, demanded;
  int stop;
} fake;

struct tw_device_event {
  fake *owner;
  uint64_t seq;
};

typedef struct failure {
  int64_t countdown; /* 0: every call */
  tw_status status;
  int active;
} failure;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static fake *live;
static allocation *allocations;
static pinned *pinned_list;
static int64_t pinned_bytes;
static failure failures[OP_N];
static fake_device_counter counters[OP_N];
static int64_t misuse_count;
static char misuse_first[512];

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int op_of(const char *name) {
  for (int i = 0; i < OP_N; ++i) {
    if (name != NULL && strcmp(name, op_names[i]) == 0) return i;
  }
  return -1;
}

/* Under mu. */
static void misuse(const char *format, ...) {
  if (misuse_count++ == 0) {
    va_list args;
    va_start(args, format);
    vsnprintf(misuse_first, sizeof misuse_first, format, args);
    va_end(args);
  }
}

/* Counts a call of `op`; TW_OK, or the injected failure (its message stored). Under mu. */
static tw_status enter(int op, int64_t items, int64_t bytes) {
  counters[op].calls++;
  counters[op].items += items;
  counters[op].bytes += bytes;
  failure *f = &failures[op];
  if (!f->active) return TW_OK;
  if (f->countdown > 0) { /* the nth call fails once; countdown -1: every call */
    if (--f->countdown > 0) return TW_OK;
    f->active = 0;
  }
  char message[128];
  snprintf(message, sizeof message, "fake device: injected failure of %s", op_names[op]);
  return tw_set_error(f->status, message);
}

static tw_status refuse(const char *format, ...) {
  char message[512], full[540];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  misuse("%s", message);
  snprintf(full, sizeof full, "fake device: %s", message);
  return tw_set_error(TW_INVALID_ARGUMENT, full);
}

/* The shadow address of [pointer, pointer + size) if it lies in one allocation, else NULL. Under mu. */
static unsigned char *shadow_of(const void *pointer, size_t size) {
  const unsigned char *p = (const unsigned char *)pointer;
  for (allocation *a = allocations; a != NULL; a = a->next) {
    if (p >= a->device && p <= a->device + a->size && size <= (size_t)(a->device + a->size - p)) {
      return a->shadow + (p - a->device);
    }
  }
  return NULL;
}

/* The pinned buffer holding [pointer, pointer + size), or NULL. Under mu. */
static pinned *pinned_of(const void *pointer, size_t size) {
  const unsigned char *p = (const unsigned char *)pointer;
  for (pinned *b = pinned_list; b != NULL; b = b->next) {
    if (p >= b->pointer && p <= b->pointer + b->size && size <= (size_t)(b->pointer + b->size - p)) return b;
  }
  return NULL;
}

/* ---- the worker ---- */

static void count_one(const counted *t, tw_device_scan *r) {
  tw_device_scan s = {0, 0, 0, -1, -1};
  for (int64_t i = 0; i < t->count; ++i) {
    const ref_class c = ref_classify((tw_dtype)t->dtype, ref_get((tw_dtype)t->dtype, t->shadow, i));
    if (c == REF_FINITE) continue;
    if (s.first_nonfinite_index < 0) s.first_nonfinite_index = i;
    if (c == REF_NAN) {
      s.nan_count++;
      if (s.first_nan_index < 0) s.first_nan_index = i;
    } else if (c == REF_POS_INF) {
      s.pos_inf_count++;
    } else {
      s.neg_inf_count++;
    }
  }
  *r = s;
}

static void run(work *w) {
  if (w->kind == OP_COUNT) {
    for (size_t i = 0; i < w->tensor_count; ++i) count_one(&w->tensors[i], &w->results[i]);
  } else {
    memcpy(w->dst, w->src, w->size);
  }
}

static void *worker_main(void *arg) {
  fake *f = (fake *)arg;
  pthread_mutex_lock(&mu);
  for (;;) {
    work *w = f->head;
    if (w == NULL) {
      if (f->stop) break;
      pthread_cond_wait(&f->wake, &mu);
      continue;
    }
    const int64_t due = w->enqueued_ns + LATE_NS;
    if (!f->stop && f->demanded < w->seq && now_ns() < due) {
      struct timespec until = {(time_t)(due / 1000000000LL), (long)(due % 1000000000LL)};
      pthread_cond_timedwait(&f->wake, &mu, &until);
      continue;
    }
    f->head = w->next;
    if (f->head == NULL) f->tail = NULL;
    pthread_mutex_unlock(&mu);
    run(w);
    pthread_mutex_lock(&mu);
    if (w->host != NULL) w->host->pending--;
    f->completed = w->seq;
    free(w->tensors);
    free(w);
    pthread_cond_broadcast(&f->done);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

/* Under mu. */
static void enqueue(fake *f, work *w) {
  w->seq = ++f->enqueued;
  w->enqueued_ns = now_ns();
  if (w->host != NULL) w->host->pending++;
  if (f->tail != NULL) {
    f->tail->next = w;
  } else {
    f->head = w;
  }
  f->tail = w;
  pthread_cond_broadcast(&f->wake);
}

/* ---- the slots ---- */

static tw_status copy_slot(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count,
                           int to_host) {
  fake *f = (fake *)user_data;
  (void)device_id;
  const int op = to_host ? OP_COPY_TO_HOST : OP_COPY_TO_DEVICE;
  int64_t bytes = 0;
  for (size_t i = 0; i < count; ++i) bytes += (int64_t)copies[i].size;
  pthread_mutex_lock(&mu);
  tw_status status = enter(op, (int64_t)count, bytes);
  /* Check every copy before enqueuing any: a refused call does nothing. */
  for (size_t i = 0; status == TW_OK && i < count; ++i) {
    const tw_device_copy *c = &copies[i];
    const void *device = to_host ? c->src : c->dst;
    const void *host = to_host ? c->dst : c->src;
    if (shadow_of(device, c->size) == NULL) {
      status = refuse("%s of '%s': %p is not device memory of this fake", op_names[op], c->name, device);
    } else if (pinned_of(host, c->size) == NULL) {
      status = refuse("%s of '%s': host side %p is not a pinned buffer from alloc_pinned", op_names[op], c->name, host);
    }
  }
  for (size_t i = 0; status == TW_OK && i < count; ++i) {
    const tw_device_copy *c = &copies[i];
    work *w = (work *)calloc(1, sizeof *w);
    w->kind = op;
    w->size = c->size;
    if (to_host) {
      w->dst = (unsigned char *)c->dst;
      w->src = shadow_of(c->src, c->size);
      w->host = pinned_of(c->dst, c->size);
      memset(c->dst, FAKE_DEVICE_POISON, c->size); /* nothing there until the copy has run */
    } else {
      w->dst = shadow_of(c->dst, c->size);
      w->src = (const unsigned char *)c->src;
      w->host = pinned_of(c->src, c->size);
    }
    enqueue(f, w);
  }
  pthread_mutex_unlock(&mu);
  return status;
}

static tw_status copy_to_host(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count) {
  return copy_slot(user_data, device_id, copies, count, 1);
}

static tw_status copy_to_device(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count) {
  return copy_slot(user_data, device_id, copies, count, 0);
}

static tw_status count_nonfinite(void *user_data, int32_t device_id, const tw_tensor *tensors, size_t count,
                                 tw_device_scan *results) {
  fake *f = (fake *)user_data;
  (void)device_id;
  pthread_mutex_lock(&mu);
  tw_status status = enter(OP_COUNT, (int64_t)count, (int64_t)(count * sizeof(tw_device_scan)));
  pinned *host = status == TW_OK ? pinned_of(results, count * sizeof(tw_device_scan)) : NULL;
  if (status == TW_OK && host == NULL) {
    status = refuse("count_nonfinite: results %p are not a pinned buffer from alloc_pinned", (void *)results);
  }
  counted *list = status == TW_OK ? (counted *)calloc(count > 0 ? count : 1, sizeof *list) : NULL;
  for (size_t i = 0; status == TW_OK && i < count; ++i) {
    const tw_tensor *t = &tensors[i];
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
    const size_t bytes = (size_t)n * ref_size((tw_dtype)t->dtype);
    list[i].dtype = t->dtype;
    list[i].count = n;
    list[i].shadow = bytes > 0 ? shadow_of(t->data, bytes) : NULL;
    if (bytes > 0 && list[i].shadow == NULL) {
      status = refuse("count_nonfinite of '%s': %p is not device memory of this fake", t->name, t->data);
    } else if (t->strides != NULL) {
      int64_t expected = 1;
      for (int32_t d = t->ndim - 1; d >= 0; --d) {
        if (t->shape[d] != 1 && t->strides[d] != expected && n > 0) {
          status = refuse("count_nonfinite of '%s': strided view", t->name);
          break;
        }
        expected *= t->shape[d];
      }
    }
  }
  if (status == TW_OK) {
    memset(results, FAKE_DEVICE_POISON, count * sizeof(tw_device_scan));
    work *w = (work *)calloc(1, sizeof *w);
    w->kind = OP_COUNT;
    w->tensors = list;
    w->tensor_count = count;
    w->results = results;
    w->host = host;
    enqueue(f, w);
  } else {
    free(list);
  }
  pthread_mutex_unlock(&mu);
  return status;
}

static tw_status record(void *user_data, int32_t device_id, tw_device_event **out) {
  fake *f = (fake *)user_data;
  (void)device_id;
  pthread_mutex_lock(&mu);
  tw_status status = enter(OP_RECORD, 1, 0);
  if (status == TW_OK) {
    tw_device_event *e = (tw_device_event *)malloc(sizeof *e);
    e->owner = f;
    e->seq = f->enqueued;
    *out = e;
  }
  pthread_mutex_unlock(&mu);
  return status;
}

static tw_status wait_slot(void *user_data, tw_device_event *event) {
  fake *f = (fake *)user_data;
  pthread_mutex_lock(&mu);
  tw_status status = enter(OP_WAIT, 1, 0);
  if (event == NULL || event->owner != f) {
    status = refuse("wait of an event this table did not record");
  } else {
    if (f->demanded < event->seq) f->demanded = event->seq;
    pthread_cond_broadcast(&f->wake);
    while (f->completed < event->seq) pthread_cond_wait(&f->done, &mu);
  }
  pthread_mutex_unlock(&mu);
  return status;
}

static tw_status query(void *user_data, tw_device_event *event, int *out_done) {
  fake *f = (fake *)user_data;
  pthread_mutex_lock(&mu);
  tw_status status = enter(OP_QUERY, 1, 0);
  if (event == NULL || event->owner != f) {
    status = refuse("query of an event this table did not record");
  } else if (status == TW_OK) {
    *out_done = f->completed >= event->seq;
    if (f->demanded < event->seq) f->demanded = event->seq; /* the next query will find it done */
    pthread_cond_broadcast(&f->wake);
  }
  pthread_mutex_unlock(&mu);
  return status;
}

static void release(void *user_data, tw_device_event *event) {
  pthread_mutex_lock(&mu);
  (void)enter(OP_RELEASE, 1, 0);
  if (event == NULL || event->owner != (fake *)user_data) (void)refuse("release of an event this table did not record");
  pthread_mutex_unlock(&mu);
  free(event);
}

static tw_status alloc_pinned(void *user_data, size_t size, void **out) {
  pthread_mutex_lock(&mu);
  tw_status status = enter(OP_ALLOC_PINNED, (int64_t)size, 0);
  if (status == TW_OK && size == 0) status = refuse("alloc_pinned of 0 bytes");
  if (status == TW_OK) {
    pinned *b = (pinned *)calloc(1, sizeof *b);
    b->pointer = (unsigned char *)aligned_alloc(64, (size + 63) / 64 * 64);
    b->size = size;
    b->owner = user_data;
    memset(b->pointer, FAKE_DEVICE_POISON, size);
    b->next = pinned_list;
    pinned_list = b;
    pinned_bytes += (int64_t)size;
    *out = b->pointer;
  }
  pthread_mutex_unlock(&mu);
  return status;
}

static void free_pinned(void *user_data, void *pointer) {
  (void)user_data;
  pthread_mutex_lock(&mu);
  (void)enter(OP_FREE_PINNED, 1, 0);
  pinned **link = &pinned_list;
  while (*link != NULL && (*link)->pointer != pointer) link = &(*link)->next;
  if (*link == NULL) {
    (void)refuse("free_pinned of %p, not allocated by alloc_pinned (or freed twice)", pointer);
  } else {
    pinned *b = *link;
    if (b->pending > 0)
      (void)refuse("free_pinned of %p while %lld queued operations use it", pointer, (long long)b->pending);
    /* Kept (poisoned) while work still targets it, so the fake itself never writes freed memory. */
    *link = b->next;
    pinned_bytes -= (int64_t)b->size;
    if (b->pending == 0) {
      free(b->pointer);
      free(b);
    }
  }
  pthread_mutex_unlock(&mu);
}

static void destroy(void *user_data) {
  fake *f = (fake *)user_data;
  pthread_mutex_lock(&mu);
  fake **link = &live;
  while (*link != NULL && *link != f) link = &(*link)->next_live;
  if (*link != NULL) *link = f->next_live;
  for (pinned *b = pinned_list; b != NULL; b = b->next) {
    if (b->owner == f) {
      (void)refuse("destroy while pinned buffer %p of %zu bytes is still allocated", (void *)b->pointer, b->size);
      break;
    }
  }
  f->stop = 1;
  pthread_cond_broadcast(&f->wake);
  pthread_mutex_unlock(&mu);
  pthread_join(f->worker, NULL);
  pthread_cond_destroy(&f->wake);
  pthread_cond_destroy(&f->done);
  free(f);
}

/* ---- the test API ---- */

tw_status fake_device_register(int32_t device_type) {
  fake *f = (fake *)calloc(1, sizeof *f);
  f->type = device_type;
  pthread_cond_init(&f->wake, NULL);
  pthread_cond_init(&f->done, NULL);
  if (pthread_create(&f->worker, NULL, worker_main, f) != 0) {
    free(f);
    return TW_INTERNAL;
  }
  tw_device table = TW_DEVICE_INIT;
  table.device_type = device_type;
  table.name = "fake";
  table.copy_to_host = copy_to_host;
  table.copy_to_device = copy_to_device;
  table.count_nonfinite = count_nonfinite;
  table.record = record;
  table.wait = wait_slot;
  table.query = query;
  table.release = release;
  table.alloc_pinned = alloc_pinned;
  table.free_pinned = free_pinned;
  table.destroy = destroy;
  pthread_mutex_lock(&mu);
  f->next_live = live;
  live = f;
  pthread_mutex_unlock(&mu);
  const tw_status status = tw_set_device(&table, f);
  if (status != TW_OK) destroy(f);
  return status;
}

tw_status fake_device_unregister(int32_t device_type) { return tw_unset_device(device_type); }

void *fake_device_alloc(size_t size) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t mapped = size == 0 ? page : (size + page - 1) / page * page;
  const int fd = memfd_create("fake-device", MFD_CLOEXEC);
  if (fd < 0) return NULL;
  void *device = MAP_FAILED, *shadow = MAP_FAILED;
  if (ftruncate(fd, (off_t)mapped) == 0) {
    device = mmap(NULL, mapped, PROT_NONE, MAP_SHARED, fd, 0);
    shadow = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);
  if (device == MAP_FAILED || shadow == MAP_FAILED) {
    if (device != MAP_FAILED) munmap(device, mapped);
    if (shadow != MAP_FAILED) munmap(shadow, mapped);
    return NULL;
  }
  allocation *a = (allocation *)calloc(1, sizeof *a);
  a->device = (unsigned char *)device;
  a->shadow = (unsigned char *)shadow;
  a->size = size;
  a->mapped = mapped;
  pthread_mutex_lock(&mu);
  a->next = allocations;
  allocations = a;
  pthread_mutex_unlock(&mu);
  return device;
}

void fake_device_free(void *device_pointer) {
  pthread_mutex_lock(&mu);
  allocation **link = &allocations;
  while (*link != NULL && (*link)->device != device_pointer) link = &(*link)->next;
  allocation *a = *link;
  if (a != NULL) *link = a->next;
  pthread_mutex_unlock(&mu);
  if (a == NULL) return;
  munmap(a->device, a->mapped);
  munmap(a->shadow, a->mapped);
  free(a);
}

int fake_device_write(void *device_dst, const void *src, size_t size) {
  pthread_mutex_lock(&mu);
  unsigned char *shadow = shadow_of(device_dst, size);
  if (shadow != NULL) memcpy(shadow, src, size);
  pthread_mutex_unlock(&mu);
  return shadow != NULL ? 0 : -1;
}

int fake_device_read(void *dst, const void *device_src, size_t size) {
  pthread_mutex_lock(&mu);
  const unsigned char *shadow = shadow_of(device_src, size);
  if (shadow != NULL) memcpy(dst, shadow, size);
  pthread_mutex_unlock(&mu);
  return shadow != NULL ? 0 : -1;
}

void fake_device_fail(const char *operation, int64_t nth, tw_status status) {
  const int op = op_of(operation);
  if (op < 0) return;
  pthread_mutex_lock(&mu);
  failures[op].active = status != TW_OK;
  failures[op].status = status;
  failures[op].countdown = nth > 0 ? nth : -1;
  pthread_mutex_unlock(&mu);
}

void fake_device_clear_failures(void) {
  pthread_mutex_lock(&mu);
  memset(failures, 0, sizeof failures);
  pthread_mutex_unlock(&mu);
}

fake_device_counter fake_device_counts(const char *operation) {
  fake_device_counter c = {0, 0, 0};
  const int op = op_of(operation);
  pthread_mutex_lock(&mu);
  if (op >= 0) c = counters[op];
  pthread_mutex_unlock(&mu);
  return c;
}

int64_t fake_device_total_calls(void) {
  int64_t total = 0;
  pthread_mutex_lock(&mu);
  for (int i = 0; i < OP_N; ++i) total += counters[i].calls;
  pthread_mutex_unlock(&mu);
  return total;
}

void fake_device_reset_counts(void) {
  pthread_mutex_lock(&mu);
  memset(counters, 0, sizeof counters);
  pthread_mutex_unlock(&mu);
}

int64_t fake_device_pinned_in_use(void) {
  pthread_mutex_lock(&mu);
  const int64_t bytes = pinned_bytes;
  pthread_mutex_unlock(&mu);
  return bytes;
}

int64_t fake_device_misuse(char *buf, size_t size) {
  pthread_mutex_lock(&mu);
  const int64_t count = misuse_count;
  if (buf != NULL && size > 0) snprintf(buf, size, "%s", misuse_first);
  pthread_mutex_unlock(&mu);
  return count;
}

int64_t fake_device_reclaim_pinned(void) {
  int64_t freed = 0;
  pthread_mutex_lock(&mu);
  for (fake *f = live; f != NULL; f = f->next_live) {
    f->demanded = f->enqueued;
    pthread_cond_broadcast(&f->wake);
    while (f->completed < f->enqueued) pthread_cond_wait(&f->done, &mu);
  }
  while (pinned_list != NULL) {
    pinned *b = pinned_list;
    pinned_list = b->next;
    freed += (int64_t)b->size;
    free(b->pointer);
    free(b);
  }
  pinned_bytes = 0;
  pthread_mutex_unlock(&mu);
  return freed;
}
