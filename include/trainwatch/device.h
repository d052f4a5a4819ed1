/*
 * trainwatch/device.h — tensors in accelerator memory: the device seam.
 *
 * Real training keeps its weights, optimizer state and loss on a GPU. A tensor view says where its
 * memory lives (tw_tensor.device_type / device_id, trainwatch/common.h); the library never reads or
 * writes device memory itself. Everything it does with a device tensor goes through the callback table
 * below, registered once per device type: copies to and from host memory, a count of the non-finite
 * values of many tensors in one call, events that say when the work enqueued so far has completed, and
 * pinned host memory for staging. The core library never links CUDA, as it never links MPI: the table
 * comes from libtrainwatch_cuda (trainwatch/cuda.h), from a binding (Python's trainwatch.devices builds
 * one on torch), or from the program itself.
 *
 * The device seam is experimental: it is declared only when TW_EXPERIMENTAL_API is defined before the
 * first trainwatch header is included, and is outside the ABI promise (docs/abi.md, "Experimental
 * API"), as the collective seam is. The tw_tensor members device_type and device_id are not: they are
 * the view's second version and follow the struct-evolution rules of trainwatch/common.h.
 *
 * Include <trainwatch.h> rather than this file.
 */
#ifndef TRAINWATCH_DEVICE_H
#define TRAINWATCH_DEVICE_H

#include "trainwatch/common.h"

#endif /* TRAINWATCH_DEVICE_H */

#if defined(TW_EXPERIMENTAL_API) && !defined(TRAINWATCH_DEVICE_H_EXPERIMENTAL)
#define TRAINWATCH_DEVICE_H_EXPERIMENTAL

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One copy between host and device memory: `size` bytes from src to dst. Exactly one of the two is
 * device memory (a device view's data); the other is host memory, always from the table's own
 * alloc_pinned. name is the tensor's name, for the table's messages. */
typedef struct tw_device_copy {
  void *dst;
  const void *src;
  size_t size;
  const char *name;
} tw_device_copy;

/* What count_nonfinite finds in one tensor (tw_scan_result's counts, trainwatch/numerics.h, with the
 * first NaN as well): 40 bytes, written by the device into host memory. */
typedef struct tw_device_scan {
  int64_t nan_count;
  int64_t pos_inf_count;
  int64_t neg_inf_count;
  int64_t first_nonfinite_index; /* row-major index of the first NaN or ±Inf; -1 if all finite */
  int64_t first_nan_index;       /* row-major index of the first NaN; -1 if none */
} tw_device_scan;

/* A point in a device's queue of work, made by `record` (the table's own type). */
typedef struct tw_device_event tw_device_event;

/* A device, as a callback table. Every operation is stream-ordered and asynchronous: it is enqueued
 * after all work the program submitted to the device before the call (on the stream the table serves:
 * CUDA's current stream of the calling thread, torch.cuda.current_stream(), …) and returns without
 * waiting for it. Its effect on host memory (a copy's bytes, count_nonfinite's results) may be read
 * only once an event recorded after it has completed (`wait` returned TW_OK, or `query` said done);
 * its effect on device memory is ordered before any work the program submits after `wait` returns.
 * The library keeps this rule: it never reads a staging buffer before waiting, and waits before it
 * returns from any call that wrote device memory.
 *
 * struct_size:     sizeof(tw_device) as the caller compiled it (TW_DEVICE_INIT). The table only grows
 *                  at its end; slots past the caller's size are treated as absent.
 * device_type:     the views this table serves (tw_tensor.device_type): TW_DEVICE_CUDA, TW_DEVICE_EXT
 *                  or another DLPack code; never host memory (0, TW_DEVICE_CPU, TW_DEVICE_CUDA_HOST).
 * name:            a static string naming the implementation in messages ("cuda", "torch", "fake").
 * copy_to_host:    enqueues `count` copies from device memory (src) into pinned host memory (dst).
 * copy_to_device:  enqueues `count` copies from pinned host memory (src) into device memory (dst).
 * count_nonfinite: enqueues, for each of `count` contiguous views on device_id, a count of its NaN, +Inf
 *                  and -Inf elements and the first NaN/non-finite index into results[i] (host memory
 *                  from alloc_pinned), classified as trainwatch/numerics.h says for its dtype (integer
 *                  and bool views: all 0, indices -1). One call covers a whole model: an implementation
 *                  should make it one launch. The views' data are device pointers; name, dtype, ndim and
 *                  shape are host memory valid during the call only.
 * record:          makes an event after everything enqueued so far on device_id (*out; released by
 *                  `release`). It should fail only when the device is unusable: after a failed
 *                  record nothing says when the work already enqueued completes, so the library
 *                  never frees the pinned buffers that work may still write (they stay allocated
 *                  until the process ends) rather than hand their memory to anything else.
 * wait:            blocks the calling thread until the event has completed.
 * query:           *out_done = 1 if the event has completed, else 0; never blocks.
 * release:         frees an event (completed or not).
 * alloc_pinned:    allocates `size` (> 0) bytes of host memory the device copies to and from at full
 *                  speed (cudaHostAlloc); *out is 64-byte aligned. The library reuses it from save to
 *                  save: one copy of the device state at most per session or saver.
 * free_pinned:     frees what alloc_pinned returned.
 * destroy:         frees user_data, once, when the registration is replaced or removed and no
 *                  operation, pinned buffer or event of this table is still in use. May be NULL.
 * Every slot but destroy is required.
 *
 * Errors: a slot that fails returns a non-OK status, having stored a message through tw_set_error that
 * says what failed (CUDA's error string, say). The library fails the call it was in with that status,
 * the message prefixed by the operation, the device and the tensor ("device cuda:0, copy_to_host of
 * 'dense/kernel': …"); a save then writes nothing, a restore changes no variable it had not yet
 * written, and a failed count is never taken as "all finite". An asynchronous failure reported by
 * `wait` or `query` is handled the same way, naming the tensors of the work it covered.
 *
 * Where the library calls it (always on the thread that called the library function named, never from
 * a background thread; several sessions on several threads may call one table at once, so it must be
 * thread-safe; a slot must not call back into the library except tw_set_error):
 *   1. tw_scan, tw_has_nonfinite, tw_check_numerics and TW_OPT_CHECK_NUMERICS: count_nonfinite of the
 *      one view, record, wait: 40 bytes cross to the host.
 *   2. NanTensorHook, after each run it checks (tw_session_run): one count_nonfinite over every device
 *      tensor it watches, record, wait.
 *   3. tw_tensor_stats, LoggingTensorHook (and tw_logging_tensor_hook_log_tensors), SummarySaverHook
 *      (a value it writes, a variable's too), tw_summary_writer_add_histogram, FinalOpsHook,
 *      tw_step_context_publish_copy (the kept copy is host memory): copy_to_host of the values they
 *      read into pinned memory, record, wait. The pinned buffers are reused from call to call.
 *   4. Every save (tw_saver_save, CheckpointSaverHook, a session's final or preemption save, a sharded
 *      save: each rank stages its own shards): for CheckpointSaverHook first one count_nonfinite over
 *      every device variable (its rule that no checkpoint holds NaN, trainwatch/hooks.h), then
 *      copy_to_host of every device variable into the pinned staging buffers, record, wait. Only then
 *      does an asynchronous save return to training; compression, checksums and the durable commit
 *      read the staging buffers on the host, as for host variables.
 *   5. Every restore (session creation, tw_saver_restore*, a NaN rollback, tw_checkpoint_load_variable
 *      into a device view): the checkpoint is read and proven on the host, decoded into the staging
 *      buffers, then copy_to_device into the variables, record, wait.
 *   6. alloc_pinned when staging first needs memory or a variable grew; free_pinned when the session or
 *      saver is destroyed (or the size changed); destroy as above.
 * Nothing else calls it: a run whose hooks read no device tensor makes no call at all.
 *
 * Which functions take device views: those above; tw_options_add_variable and tw_options_add_shard,
 * tw_session_run's feeds, tw_run_context_add_feed and tw_step_context_publish, which keep the view as
 * it is (zero copy) and call no slot for it; tw_tensor_element_count, which reads no data. Session
 * getters (tw_session_get_output / get_variable, tw_step_context_feed_at / get_feed) return device
 * views unchanged. Every other function refuses a device view with TW_INVALID_ARGUMENT naming it
 * (FinalOpsHook's feeds, say, which it copies when it is created). docs/tf-semantics.md, section V,
 * states these rules one by one (V1–V9).
 */
typedef struct tw_device {
  uint32_t struct_size;
  int32_t device_type;
  const char *name;
  tw_status (*copy_to_host)(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count);
  tw_status (*copy_to_device)(void *user_data, int32_t device_id, const tw_device_copy *copies, size_t count);
  tw_status (*count_nonfinite)(void *user_data, int32_t device_id, const tw_tensor *tensors, size_t count,
                               tw_device_scan *results);
  tw_status (*record)(void *user_data, int32_t device_id, tw_device_event **out);
  tw_status (*wait)(void *user_data, tw_device_event *event);
  tw_status (*query)(void *user_data, tw_device_event *event, int *out_done);
  void (*release)(void *user_data, tw_device_event *event);
  tw_status (*alloc_pinned)(void *user_data, size_t size, void **out);
  void (*free_pinned)(void *user_data, void *pointer);
  void (*destroy)(void *user_data);
} tw_device;

#define TW_DEVICE_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_device, destroy)
/* Initialiser of a table with no callbacks; fill in device_type, name and the slots. */
#define TW_DEVICE_INIT \
  { (uint32_t)sizeof(tw_device), 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/* Sets *device to TW_DEVICE_INIT (compiled into the caller). NULL is a no-op. */
static inline void tw_device_init(tw_device *device) {
  const tw_device init = TW_DEVICE_INIT;
  if (device != NULL) *device = init;
}

/* Registers `table` (copied) for the views whose device_type is table->device_type, for the whole
 * process, replacing an earlier registration of that type; user_data is passed to every slot. The
 * replaced table's destroy runs once nothing uses it any more (sessions and savers keep the table
 * their staging buffers came from until they are destroyed). A view of a type with no registration
 * is TW_FAILED_PRECONDITION naming the view and the type, when a function first needs to read it.
 * Errors: TW_INVALID_ARGUMENT (table NULL; struct_size smaller than the first version or larger than
 * this library knows with non-zero extra bytes; device_type a host type or negative; name NULL; a
 * required slot NULL). On error destroy is not called and the earlier registration stays.
 * Thread rules: any thread, any time; a call already running keeps the table it started with. */
TW_NODISCARD TW_API tw_status tw_set_device(const tw_device *table, void *user_data);

/* Removes the registration of `device_type` (its destroy runs as above). Removing a type with no
 * registration is not an error. Errors: TW_INVALID_ARGUMENT (device_type a host type or negative). */
TW_NODISCARD TW_API tw_status tw_unset_device(int32_t device_type);

#ifdef __cplusplus
}
#endif

#endif /* TW_EXPERIMENTAL_API */
