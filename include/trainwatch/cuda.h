/*
 * trainwatch/cuda.h — the tw_device of CUDA (libtrainwatch_cuda; link -ltrainwatch_cuda -ltrainwatch).
 * Not part of <trainwatch.h>: the core library never links CUDA. This header needs no CUDA header
 * either (the stream is a void pointer), so a program compiles against it without the CUDA toolkit.
 *
 *   tw_device table;
 *   void *user_data;
 *   if (tw_cuda_device_create(&table, &user_data, stream) != TW_OK) ...;   // stream: a cudaStream_t
 *   if (tw_set_device(&table, user_data) != TW_OK) table.destroy(user_data);
 *   // from here on a tw_tensor with device_type TW_DEVICE_CUDA is read through the table
 *
 * What the table does (trainwatch/device.h says when the library calls each slot):
 * - Ordering: for each CUDA device it uses, the table makes a side stream (cudaStreamNonBlocking) and
 *   enqueues all its work there, after an event recorded on the program's stream (so a copy or count
 *   sees everything the program enqueued before the call) and before an event the program's stream
 *   then waits for (so the program's later work, an optimizer step that overwrites a weight, never
 *   races with the copy or count). The program's stream is `stream` on the device it belongs to and the
 *   legacy default stream (the one PyTorch's default stream is) on every other device.
 * - copy_to_host / copy_to_device: one cudaMemcpyAsync per copy on the side stream.
 * - count_nonfinite: ONE kernel launch for all the views of the call, whatever their number and
 *   dtypes (float16, bfloat16, float32, float64, float8_e4m3fn, float8_e5m2; integer and bool views are
 *   not read: counts 0, indices -1). The table of views and the results' initial values go to the
 *   device in one copy from a pinned buffer the table reuses; each block reads 64 KiB of one tensor
 *   with 16-byte loads (element by element where the data is not 16-byte aligned) and adds what it
 *   found with atomics; the 40-byte results are copied into the caller's pinned buffer. No call
 *   blocks the host.
 * - record / wait / query / release: a CUDA event recorded on the side stream; wait is
 *   cudaEventSynchronize, query cudaEventQuery (an asynchronous fault of earlier work surfaces there).
 * - alloc_pinned / free_pinned: cudaHostAlloc (cudaHostAllocPortable: pinned for every device) and
 *   cudaFreeHost.
 * - destroy: waits for the side streams, frees their events, streams and buffers, and user_data.
 *   The program's stream must outlive the table.
 * Errors of the slots: a CUDA call that fails stores "<call> (<what>): <CUDA's error string>
 * (<error name>)" through tw_set_error and returns TW_RESOURCE_EXHAUSTED (cudaErrorMemoryAllocation),
 * TW_INVALID_ARGUMENT (an invalid value, device pointer, device or handle; a device_id that is not a
 * CUDA ordinal of this process; a malformed view), TW_FAILED_PRECONDITION (no device, a driver older
 * than the runtime) or TW_INTERNAL (any other CUDA error: a sticky fault of the context included).
 *
 * Threads: every slot may be called from any thread, several at once (one lock per table serialises
 * the enqueueing, never a wait); each restores the calling thread's current CUDA device before it
 * returns.
 *
 * The device seam is experimental (trainwatch/device.h): define TW_EXPERIMENTAL_API before including
 * this header, whose one function is outside the ABI promise as the seam is.
 */
#ifndef TRAINWATCH_CUDA_H
#define TRAINWATCH_CUDA_H

#ifndef TW_EXPERIMENTAL_API
#error "trainwatch/cuda.h fills the experimental tw_device: define TW_EXPERIMENTAL_API before including it"
#endif

#include "trainwatch/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *out_table (device_type TW_DEVICE_CUDA, name "cuda", every slot and destroy) and
 * *out_user_data (the table's state, freed by out_table->destroy). `stream` is the cudaStream_t the
 * program computes on, or NULL for the legacy default stream; it is not owned. Creates no stream or
 * event yet (each device's are made at its first use). Pass both to tw_set_device; if that is never
 * done or fails, call out_table->destroy(*out_user_data) yourself.
 * Errors: TW_INVALID_ARGUMENT (out_table or out_user_data NULL; stream not a valid stream),
 * TW_FAILED_PRECONDITION (no CUDA device, or a driver older than the CUDA runtime this library was
 * built with), TW_RESOURCE_EXHAUSTED, TW_INTERNAL (another CUDA error), each with CUDA's error
 * string. On error *out_user_data is NULL (when out_user_data is not NULL).
 * Threads: any thread. */
TW_NODISCARD TW_API tw_status tw_cuda_device_create(tw_device *out_table, void **out_user_data, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* TRAINWATCH_CUDA_H */
