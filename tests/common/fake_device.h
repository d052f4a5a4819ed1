/* A fake accelerator for tests: a tw_device (trainwatch/device.h) whose memory the host cannot read.
 *
 * Device memory is pages of a memfd mapped twice: the address handed out (fake_device_alloc) is a
 * PROT_NONE mapping, so a library that reads or writes it itself crashes; the fake's callbacks reach
 * the bytes through a second, read-write mapping. Copies and counts are queued and run late, in order,
 * on a worker thread (when an event after them is waited for or queried, or after a while), so a
 * library that reads a staging buffer before waiting reads poison: alloc_pinned fills new buffers
 * with 0xA5 bytes, and copy_to_host destinations and count results are re-poisoned when enqueued.
 * Every operation checks its pointers (device memory where the contract says device memory, pinned
 * buffers of this fake for the host side) and can be made to fail; each is counted.
 *
 * One process-wide fake: allocations, counters and injected failures are shared by every
 * registration (a test registers it for one or more device types). Thread-safe. Built as a static
 * library for the C tests and as libtw_fake_device.so (not installed) for tests in other languages.
 */
#ifndef TRAINWATCH_TESTS_FAKE_DEVICE_H
#define TRAINWATCH_TESTS_FAKE_DEVICE_H

#ifndef TW_EXPERIMENTAL_API
#define TW_EXPERIMENTAL_API
#endif
#include <stddef.h>
#include <stdint.h>

#include "trainwatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The byte alloc_pinned fills new buffers with, and copy_to_host / count_nonfinite write over their
 * destinations when enqueued. */
#define FAKE_DEVICE_POISON 0xA5

/* tw_set_device of a new fake table (name "fake") for device_type (TW_DEVICE_CUDA, TW_DEVICE_EXT, …).
 * fake_device_unregister is tw_unset_device: the table's destroy stops its worker once the library
 * holds no buffer of it. */
tw_status fake_device_register(int32_t device_type);
tw_status fake_device_unregister(int32_t device_type);

/* Device memory of `size` bytes (zero-filled), or NULL. The pointer may be handed to the library as a
 * device view's data (and any address inside it, for views into a larger allocation). */
void *fake_device_alloc(size_t size);
void fake_device_free(void *device_pointer);
/* Test-side access through the read-write mapping: 0, or -1 when [pointer, pointer + size) is not
 * inside one allocation. */
int fake_device_write(void *device_dst, const void *src, size_t size);
int fake_device_read(void *dst, const void *device_src, size_t size);

/* Operations, by their slot names: "copy_to_host", "copy_to_device", "count_nonfinite", "record",
 * "wait", "query", "release", "alloc_pinned", "free_pinned". */

/* Makes the nth call of `operation` from now fail with `status` (nth 1: the next one; nth 0: every
 * call until cleared), its message "fake device: injected failure of <operation>". status TW_OK clears
 * the operation's failure. A failed wait still lets the queued work complete (as a device that reports
 * an asynchronous error). */
void fake_device_fail(const char *operation, int64_t nth, tw_status status);
void fake_device_clear_failures(void);

typedef struct fake_device_counter {
  int64_t calls; /* calls of the slot (failed ones too) */
  int64_t items; /* copies, tensors or bytes allocated, per slot */
  int64_t bytes; /* bytes that cross between device and host: copy sizes, 40 per counted tensor */
} fake_device_counter;
fake_device_counter fake_device_counts(const char *operation);
/* Calls of every slot together. */
int64_t fake_device_total_calls(void);
void fake_device_reset_counts(void);

/* Pinned bytes allocated and not yet freed (the library's staging and scratch). */
int64_t fake_device_pinned_in_use(void);
/* Completes all queued work, then frees every pinned buffer still allocated; returns their bytes. For
 * a test that made `record` fail: the library must then abandon (never free nor reuse) the buffers the
 * enqueued work targets, which this reclaims, so that the next registration starts clean. */
int64_t fake_device_reclaim_pinned(void);
/* Breaches of the contract seen so far (a host pointer passed as device memory, a copy's host side not
 * from alloc_pinned, a pinned buffer freed while a queued copy still targets it, destroy while
 * buffers are in use, …): their count, and the first one's description in buf. Tests assert 0. */
int64_t fake_device_misuse(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TRAINWATCH_TESTS_FAKE_DEVICE_H */
