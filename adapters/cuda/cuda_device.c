/*
 * libtrainwatch_cuda: the tw_device table (trainwatch/device.h) over the CUDA runtime.
 *
 * Per CUDA device the table keeps a side stream (non-blocking) on which it enqueues everything it does,
 * ordered after the program's stream by an event recorded there, and the program's stream ordered after
 * it by an event recorded on the side stream: the program's later work never races with a copy or a
 * count, and ours never reads a tensor before the program's work that wrote it. A count_nonfinite call
 * uploads its table of tensors and the results' initial values in one copy from a reused pinned slot,
 * runs one launch (nonfinite_kernel.cu) and copies the 40 bytes per tensor back into the caller's
 * pinned buffer.
 */
#define TW_EXPERIMENTAL_API
#include "trainwatch/cuda.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "nonfinite_kernel.h"

/* A pinned upload buffer and its device twin, reused once the event recorded after its last use has
 * completed. */
typedef struct upload_slot {
  void *host;
  void *device;
  size_t capacity;
  cudaEvent_t done;
  struct upload_slot *next;
} upload_slot;

/* What the table keeps for one CUDA device, created at its first use. */
typedef struct device_state {
  int ready;
  cudaStream_t program; /* the stream the program computes on (the one given, or the legacy default) */
  cudaStream_t side;
  cudaEvent_t program_point; /* recorded on `program`, waited for by `side` */
  cudaEvent_t side_point;    /* recorded on `side`, waited for by `program` */
  upload_slot *slots;
} device_state;

typedef struct cuda_table {
  pthread_mutex_t lock; /* serialises each enqueue sequence, the lazy set-up and the slot list */
  void *stream;         /* the program's stream, on stream_device; NULL: the legacy default stream */
  int stream_device;
  int device_count;
  device_state *devices;
} cuda_table;

struct tw_device_event {
  cudaEvent_t event;
  int device;
};

/* ------------------------------------------------------------------------------------------------ */
/* Errors                                                                                           */
/* ------------------------------------------------------------------------------------------------ */

static tw_status status_of(cudaError_t error) {
  switch (error) {
    case cudaErrorMemoryAllocation: return TW_RESOURCE_EXHAUSTED;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidResourceHandle: return TW_INVALID_ARGUMENT;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver: return TW_FAILED_PRECONDITION;
    default: return TW_INTERNAL;
  }
}

/* Stores "<function> (<what>): <CUDA's error string> (<its name>)" and returns the status for it; `call`
 * may be the whole call's text, of which the function's name is kept. */
static tw_status cuda_error(cudaError_t error, const char *call, const char *what) {
  char message[512];
  snprintf(message, sizeof message, "%.*s%s%s%s: %s (%s)", (int)strcspn(call, "("), call, what ? " (" : "",
           what ? what : "", what ? ")" : "", cudaGetErrorString(error), cudaGetErrorName(error));
  return tw_set_error(status_of(error), message);
}

#define CUDA_TRY(call, what)                               \
  do {                                                     \
    cudaError_t cuda_try_error_ = (call);                  \
    if (cuda_try_error_ != cudaSuccess) {                  \
      status = cuda_error(cuda_try_error_, #call, (what)); \
      goto done;                                           \
    }                                                      \
  } while (0)

/* ------------------------------------------------------------------------------------------------ */
/* Devices and ordering                                                                             */
/* ------------------------------------------------------------------------------------------------ */

/* Makes device_id current for the calling thread (CUDA's current device is per thread), remembering
 * the one to restore. */
static tw_status enter_device(const cuda_table *t, int32_t device_id, int *previous) {
  char what[64];
  cudaError_t error;
  if (device_id < 0 || device_id >= t->device_count) {
    snprintf(what, sizeof what, "device_id %d of %d CUDA devices", (int)device_id, t->device_count);
    return tw_set_error(TW_INVALID_ARGUMENT, what);
  }
  error = cudaGetDevice(previous);
  if (error == cudaSuccess && *previous != device_id) error = cudaSetDevice(device_id);
  if (error != cudaSuccess) return cuda_error(error, "cudaSetDevice", NULL);
  return TW_OK;
}

static void leave_device(int previous, int32_t device_id) {
  if (previous != device_id) (void)cudaSetDevice(previous);
}

/* The state of the current device (device_id), set up at its first use. Called with t->lock held. */
static tw_status device_of(cuda_table *t, int32_t device_id, device_state **out) {
  tw_status status = TW_OK;
  device_state *d = &t->devices[device_id];
  if (!d->ready) {
    d->program = device_id == t->stream_device ? (cudaStream_t)t->stream : NULL;
    CUDA_TRY(cudaStreamCreateWithFlags(&d->side, cudaStreamNonBlocking), "the side stream");
    CUDA_TRY(cudaEventCreateWithFlags(&d->program_point, cudaEventDisableTiming), NULL);
    CUDA_TRY(cudaEventCreateWithFlags(&d->side_point, cudaEventDisableTiming), NULL);
    d->ready = 1;
  }
  *out = d;
done:
  if (status != TW_OK) {
    if (d->side) (void)cudaStreamDestroy(d->side);
    if (d->program_point) (void)cudaEventDestroy(d->program_point);
    memset(d, 0, sizeof *d);
  }
  return status;
}

/* Orders the later work of stream `later` after everything enqueued on `earlier` so far, through the
 * event `point` (recorded on `earlier`; `where` names it in an error). */
static tw_status order_after(cudaStream_t later, cudaStream_t earlier, cudaEvent_t point, const char *where) {
  tw_status status = TW_OK;
  CUDA_TRY(cudaEventRecord(point, earlier), where);
  CUDA_TRY(cudaStreamWaitEvent(later, point, 0), NULL);
done:
  return status;
}

/* Orders the side stream after everything the program enqueued so far. */
static tw_status side_after_program(device_state *d) {
  return order_after(d->side, d->program, d->program_point, "after the program's stream");
}

/* Orders the program's later work after everything enqueued on the side stream so far. */
static tw_status program_after_side(device_state *d) {
  return order_after(d->program, d->side, d->side_point, "on the side stream");
}

/* ------------------------------------------------------------------------------------------------ */
/* Copies                                                                                           */
/* ------------------------------------------------------------------------------------------------ */

static tw_status enqueue_copies(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count,
                                enum cudaMemcpyKind kind) {
  cuda_table *t = (cuda_table *)user_data;
  device_state *d = NULL;
  int previous;
  size_t i;
  tw_status status = enter_device(t, device_id, &previous);
  if (status != TW_OK) return status;
  pthread_mutex_lock(&t->lock);
  status = device_of(t, device_id, &d);
  if (status == TW_OK) status = side_after_program(d);
  for (i = 0; status == TW_OK && i < count; i++) {
    cudaError_t error = cudaMemcpyAsync(copies[i].dst, copies[i].src, copies[i].size, kind, d->side);
    if (error != cudaSuccess) {
      char what[256];
      snprintf(what, sizeof what, "'%s', %zu bytes", copies[i].name ? copies[i].name : "", copies[i].size);
      status = cuda_error(error, "cudaMemcpyAsync", what);
    }
  }
  /* Even after a failed enqueue: what was enqueued must still come before the program's later work. */
  if (d != NULL) {
    tw_status ordered = program_after_side(d);
    if (status == TW_OK) status = ordered;
  }
  pthread_mutex_unlock(&t->lock);
  leave_device(previous, device_id);
  return status;
}

static tw_status copy_to_host(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count) {
  return enqueue_copies(user_data, device_id, copies, count, cudaMemcpyDeviceToHost);
}

static tw_status copy_to_device(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count) {
  return enqueue_copies(user_data, device_id, copies, count, cudaMemcpyHostToDevice);
}

/* ------------------------------------------------------------------------------------------------ */
/* count_nonfinite                                                                                  */
/* ------------------------------------------------------------------------------------------------ */

/* A slot of at least `size` bytes whose last upload has completed, taken off the list (t->lock held). */
static tw_status take_slot(device_state *d, size_t size, upload_slot **out) {
  tw_status status = TW_OK;
  upload_slot **link, *slot;
  for (link = &d->slots; *link != NULL; link = &(*link)->next) {
    slot = *link;
    if (slot->capacity >= size && cudaEventQuery(slot->done) == cudaSuccess) {
      *link = slot->next;
      *out = slot;
      return TW_OK;
    }
  }
  slot = (upload_slot *)calloc(1, sizeof *slot);
  if (slot == NULL) return tw_set_error(TW_RESOURCE_EXHAUSTED, "out of host memory for an upload slot");
  slot->capacity = size < 4096 ? 4096 : size;
  CUDA_TRY(cudaHostAlloc(&slot->host, slot->capacity, cudaHostAllocPortable), "the tensor table");
  CUDA_TRY(cudaMalloc(&slot->device, slot->capacity), "the tensor table");
  CUDA_TRY(cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming), NULL);
  *out = slot;
done:
  if (status != TW_OK) {
    if (slot->host) (void)cudaFreeHost(slot->host);
    if (slot->device) (void)cudaFree(slot->device);
    free(slot);
  }
  return status;
}

static tw_status count_nonfinite(void *user_data, int32_t device_id, const tw_tensor *tensors, size_t count,
                                 tw_device_scan *results) {
  cuda_table *t = (cuda_table *)user_data;
  size_t entries, size, results_offset;
  int64_t blocks;
  device_state *d = NULL;
  upload_slot *slot = NULL;
  int previous;
  tw_status status;
  if (count == 0) return TW_OK;
  status = tw_cuda_scan_plan(&entries, &size, &results_offset, tensors, count);
  if (status != TW_OK) return status;
  status = enter_device(t, device_id, &previous);
  if (status != TW_OK) return status;
  pthread_mutex_lock(&t->lock);
  status = device_of(t, device_id, &d);
  if (status == TW_OK) status = take_slot(d, size, &slot);
  if (status == TW_OK) status = side_after_program(d);
  if (status != TW_OK) goto done;
  /* The table of float views and every result's initial value go up in one copy; one launch; the
   * results (40 bytes per view) come down into the caller's pinned buffer. */
  blocks = tw_cuda_scan_fill(slot->host, results_offset, tensors, count);
  CUDA_TRY(cudaMemcpyAsync(slot->device, slot->host, size, cudaMemcpyHostToDevice, d->side), "the tensor table");
  CUDA_TRY(tw_cuda_launch_nonfinite((const tw_cuda_scan_entry *)slot->device, (int32_t)entries, blocks,
                                    (tw_cuda_scan_result *)((char *)slot->device + results_offset), d->side),
           "the non-finite count kernel");
  CUDA_TRY(cudaMemcpyAsync(results, (char *)slot->device + results_offset, count * sizeof(tw_cuda_scan_result),
                           cudaMemcpyDeviceToHost, d->side),
           "the results");
  status = program_after_side(d);
done:
  if (slot != NULL) {
    /* The slot is free again once everything enqueued with it has run. */
    if (cudaEventRecord(slot->done, d->side) != cudaSuccess) (void)cudaStreamSynchronize(d->side);
    slot->next = d->slots;
    d->slots = slot;
  }
  pthread_mutex_unlock(&t->lock);
  leave_device(previous, device_id);
  return status;
}

/* ------------------------------------------------------------------------------------------------ */
/* Events and pinned memory                                                                         */
/* ------------------------------------------------------------------------------------------------ */

static tw_status event_record(void *user_data, int32_t device_id, tw_device_event **out) {
  cuda_table *t = (cuda_table *)user_data;
  device_state *d;
  tw_device_event *event;
  int previous;
  tw_status status = enter_device(t, device_id, &previous);
  if (status != TW_OK) return status;
  event = (tw_device_event *)calloc(1, sizeof *event);
  if (event == NULL) {
    leave_device(previous, device_id);
    return tw_set_error(TW_RESOURCE_EXHAUSTED, "out of host memory for an event");
  }
  event->device = device_id;
  pthread_mutex_lock(&t->lock);
  status = device_of(t, device_id, &d);
  if (status != TW_OK) goto done;
  CUDA_TRY(cudaEventCreateWithFlags(&event->event, cudaEventDisableTiming), NULL);
  CUDA_TRY(cudaEventRecord(event->event, d->side), "on the side stream");
  *out = event;
  event = NULL;
done:
  pthread_mutex_unlock(&t->lock);
  if (event != NULL) {
    if (event->event) (void)cudaEventDestroy(event->event);
    free(event);
  }
  leave_device(previous, device_id);
  return status;
}

static tw_status event_wait(void *user_data, tw_device_event *event) {
  cudaError_t error;
  (void)user_data;
  if (event == NULL) return tw_set_error(TW_INVALID_ARGUMENT, "event is NULL");
  error = cudaEventSynchronize(event->event);
  return error == cudaSuccess ? TW_OK : cuda_error(error, "cudaEventSynchronize", "waiting for the device's work");
}

static tw_status event_query(void *user_data, tw_device_event *event, int *out_done) {
  cudaError_t error;
  (void)user_data;
  if (event == NULL || out_done == NULL) return tw_set_error(TW_INVALID_ARGUMENT, "event or out_done is NULL");
  error = cudaEventQuery(event->event);
  if (error == cudaErrorNotReady) {
    *out_done = 0;
    return TW_OK;
  }
  if (error != cudaSuccess) return cuda_error(error, "cudaEventQuery", "the device's work");
  *out_done = 1;
  return TW_OK;
}

static void event_release(void *user_data, tw_device_event *event) {
  (void)user_data;
  if (event == NULL) return;
  (void)cudaEventDestroy(event->event); /* CUDA frees it once it has completed */
  free(event);
}

static tw_status alloc_pinned(void *user_data, size_t size, void **out) {
  char what[64];
  void *pointer = NULL;
  cudaError_t error;
  (void)user_data;
  if (size == 0 || out == NULL) return tw_set_error(TW_INVALID_ARGUMENT, "alloc_pinned of 0 bytes or out NULL");
  /* Portable: pinned for every device of the process, as a staging buffer may serve any of them. */
  error = cudaHostAlloc(&pointer, size, cudaHostAllocPortable);
  if (error == cudaSuccess) {
    *out = pointer;
    return TW_OK;
  }
  snprintf(what, sizeof what, "%zu bytes", size);
  return cuda_error(error, "cudaHostAlloc", what);
}

static void free_pinned(void *user_data, void *pointer) {
  (void)user_data;
  if (pointer != NULL) (void)cudaFreeHost(pointer);
}

static void table_destroy(void *user_data) {
  cuda_table *t = (cuda_table *)user_data;
  int previous, i;
  if (t == NULL) return;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  for (i = 0; i < t->device_count; i++) {
    device_state *d = &t->devices[i];
    if (!d->ready || cudaSetDevice(i) != cudaSuccess) continue;
    (void)cudaStreamSynchronize(d->side);
    while (d->slots != NULL) {
      upload_slot *slot = d->slots;
      d->slots = slot->next;
      (void)cudaEventDestroy(slot->done);
      (void)cudaFree(slot->device);
      (void)cudaFreeHost(slot->host);
      free(slot);
    }
    (void)cudaEventDestroy(d->program_point);
    (void)cudaEventDestroy(d->side_point);
    (void)cudaStreamDestroy(d->side);
  }
  if (previous >= 0) (void)cudaSetDevice(previous);
  pthread_mutex_destroy(&t->lock);
  free(t->devices);
  free(t);
}

/* ------------------------------------------------------------------------------------------------ */
/* The table                                                                                        */
/* ------------------------------------------------------------------------------------------------ */

tw_status tw_cuda_device_create(tw_device *out_table, void **out_user_data, void *stream) {
  cuda_table *t;
  tw_device table = TW_DEVICE_INIT;
  cudaError_t error;
  int devices = 0, stream_device = -1;
  if (out_table == NULL || out_user_data == NULL)
    return tw_set_error(TW_INVALID_ARGUMENT, "tw_cuda_device_create: out_table or out_user_data is NULL");
  *out_user_data = NULL;
  error = cudaGetDeviceCount(&devices);
  if (error == cudaSuccess && devices == 0) error = cudaErrorNoDevice;
  if (error != cudaSuccess) return cuda_error(error, "cudaGetDeviceCount", "tw_cuda_device_create");
  /* The stream's device; the legacy default stream is on every device. */
  error = stream != NULL ? cudaStreamGetDevice((cudaStream_t)stream, &stream_device) : cudaSuccess;
  if (error != cudaSuccess) return cuda_error(error, "cudaStreamGetDevice", "tw_cuda_device_create's stream");
  t = (cuda_table *)calloc(1, sizeof *t);
  if (t != NULL) t->devices = (device_state *)calloc((size_t)devices, sizeof *t->devices);
  if (t == NULL || t->devices == NULL || pthread_mutex_init(&t->lock, NULL) != 0) {
    if (t != NULL) free(t->devices);
    free(t);
    return tw_set_error(TW_RESOURCE_EXHAUSTED, "tw_cuda_device_create: out of host memory");
  }
  t->stream = stream;
  t->stream_device = stream_device;
  t->device_count = devices;
  table.device_type = TW_DEVICE_CUDA;
  table.name = "cuda";
  table.copy_to_host = copy_to_host;
  table.copy_to_device = copy_to_device;
  table.count_nonfinite = count_nonfinite;
  table.record = event_record;
  table.wait = event_wait;
  table.query = event_query;
  table.release = event_release;
  table.alloc_pinned = alloc_pinned;
  table.free_pinned = free_pinned;
  table.destroy = table_destroy;
  *out_table = table;
  *out_user_data = t;
  return TW_OK;
}
