/*
 * trainwatch/common.h — versions, status codes, error messages, dtypes, the tensor view, logging.
 *
 * Everything else in the API builds on these definitions. Include <trainwatch.h> rather than this file.
 *
 * Conventions used by every function in the library
 * --------------------------------------------------
 * - Functions that can fail return a tw_status. TW_OK (0) is success; every other value is a stable
 *   code listed below and is never renumbered.
 * - On failure a message naming the problem is stored for the calling thread and is readable through
 *   tw_last_error_message() until the next failing call on that thread. A successful call does not
 *   clear it.
 * - On failure out-parameters are left untouched.
 * - Out-parameters come first, callbacks and their user_data last.
 * - A query of an object's state that cannot fail on a valid handle returns the value itself
 *   (tw_session_should_stop, tw_session_global_step, tw_hook_name), and states what a NULL handle
 *   gives; a query that can fail otherwise (an index, a name, I/O) returns a tw_status and writes an
 *   out-parameter.
 * - Strings passed in are copied unless a function says otherwise; strings returned are owned by the
 *   library and stay valid as long as the object they came from (documented per function).
 * - Nothing thrown inside the library crosses the ABI, and no caller-triggerable input aborts the
 *   process: bad arguments come back as TW_INVALID_ARGUMENT with a message naming the argument.
 *
 * Experimental API
 * ----------------
 * What will still move — the collective seam (trainwatch/distributed.h), the device seam
 * (trainwatch/device.h), the hook extension points (trainwatch/hooks.h) — is declared only when
 * TW_EXPERIMENTAL_API is defined before the first trainwatch header is included (as zstd's
 * ZSTD_STATIC_LINKING_ONLY), and is outside
 * the ABI promise: it may change or go in any release (docs/abi.md). Everything else follows the rules
 * below.
 *
 * Versioned structs
 * -----------------
 * Every public struct starts with `uint32_t struct_size` and only ever grows at its end, so a program
 * and a library built from different versions of these headers work together:
 * - A struct the caller allocates (tw_tensor, tw_hook_callbacks, out-structs such as tw_scan_result or
 *   tw_event) carries the caller's own sizeof, set by its TW_<STRUCT>_INIT macro or the static inline
 *   tw_<struct>_init() — both compiled into the caller, never computed by the library. Bindings that
 *   declare the struct themselves set the size of their declaration.
 * - The library reads at most struct_size bytes: members past the caller's size take their defaults
 *   (0 / NULL, a NULL callback slot is "not set"). For an out-struct it writes at most struct_size
 *   bytes and never changes struct_size; members it does not know keep what the caller put there.
 * - struct_size below TW_<STRUCT>_SIZE_V1 (the first version, frozen) is TW_INVALID_ARGUMENT naming the
 *   struct. A struct larger than the library's own is accepted when every byte past the library's
 *   members is 0 (members left at their defaults); a non-zero byte there is TW_INVALID_ARGUMENT, since
 *   the caller asks for something this library cannot do. A struct_size more than 1024 bytes past the
 *   library's sizeof is TW_INVALID_ARGUMENT too, refused before any byte past the library's members is
 *   read: no version grows that much, so it is not a sizeof (a garbage or huge value would make the
 *   library read past the caller's struct).
 * - An array the caller passes (feeds, variables) is stepped through by its elements' struct_size:
 *   every element carries the same size, the caller's sizeof (TW_TENSOR_INIT does this).
 * - The library never hands out an array of structs: a list it gives a callback or an out-struct is
 *   an array of pointers (`const tw_tensor *const *values`). A struct the library owns and lends
 *   (tw_nan_event, tw_summary_value, tw_histogram, those views) carries the library's sizeof: a
 *   member added after the first version may be read only when TW_STRUCT_HAS(pointer, type, member).
 * - A later version appends members after the previous version's sizeof (never in its tail
 *   padding), so every version has its own size.
 */
#ifndef TRAINWATCH_COMMON_H
#define TRAINWATCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* TW_API marks every function of the library. On Windows it exports them while the library itself is
 * built (the build defines TW_BUILDING_LIBRARY) and imports them in programs using the DLL; define
 * TW_STATIC when linking a static build. Elsewhere it gives them default visibility (the library is
 * built with hidden visibility, so only these are exported). */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(TW_BUILDING_LIBRARY)
#define TW_API __declspec(dllexport)
#elif defined(TW_STATIC)
#define TW_API
#else
#define TW_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#define TW_API __attribute__((visibility("default")))
#else
#define TW_API
#endif

/* TW_NODISCARD marks every function returning a tw_status: ignoring one is a compiler warning, since a
 * failed call leaves its out-parameters untouched. It comes first in a declaration
 * (`TW_NODISCARD TW_API tw_status f(…)`). In C++17 and C23 it is [[nodiscard]], which a cast to void
 * silences; GCC's warn_unused_result in older C and C++ ignores such a cast (use the value instead). */
#if defined(__cplusplus) && __cplusplus >= 201703L
#define TW_NODISCARD [[nodiscard]]
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L
#define TW_NODISCARD [[nodiscard]]
#elif defined(__GNUC__) || defined(__clang__)
#define TW_NODISCARD __attribute__((warn_unused_result))
#elif defined(_MSC_VER)
#include <sal.h>
#define TW_NODISCARD _Check_return_
#else
#define TW_NODISCARD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Versions                                                                                       */
/* ---------------------------------------------------------------------------------------------- */

#define TW_VERSION_MAJOR 0
#define TW_VERSION_MINOR 1
#define TW_VERSION_PATCH 0
/* MAJOR*10000 + MINOR*100 + PATCH, as zstd's ZSTD_VERSION_NUMBER. */
#define TW_VERSION_NUMBER (TW_VERSION_MAJOR * 10000 + TW_VERSION_MINOR * 100 + TW_VERSION_PATCH)
#define TW_VERSION_STRING "0.1.0"

/* The version of the library actually loaded; compare with TW_VERSION_NUMBER to detect a mismatch
 * between the header a program was compiled against and the shared object it runs with. */
TW_API unsigned tw_version_number(void);
/* "MAJOR.MINOR.PATCH", static storage. */
TW_API const char *tw_version_string(void);

/* "No value" for int64 arguments that TF spells None (e.g. StopAtStepHook's num_steps, a saver's
 * global_step). */
#define TW_UNSET INT64_MIN
/* "No value" for seconds arguments that TF spells None (e.g. StepCounterHook's every_n_secs): any
 * negative number reads as unset. */
#define TW_UNSET_SECS (-1.0)

/* ---------------------------------------------------------------------------------------------- */
/* Versioned structs (see the conventions above)                                                  */
/* ---------------------------------------------------------------------------------------------- */

/* The size of `type` up to and including `member`: TW_<STRUCT>_SIZE_V1 is this for the last member of
 * the first version. */
#define TW_STRUCT_SIZE_THROUGH(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* Non-zero when the struct the library lent at `pointer` has `member` (its struct_size covers it):
 * test this before reading a member added after the first version. */
#define TW_STRUCT_HAS(pointer, type, member) ((size_t)(pointer)->struct_size >= TW_STRUCT_SIZE_THROUGH(type, member))

/* ---------------------------------------------------------------------------------------------- */
/* Status codes                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

/* Codes 0–16 are TensorFlow's (and gRPC's) canonical codes, so TF's error classes map one to one. */
typedef int32_t tw_status;
enum {
  TW_OK = 0,
  TW_CANCELLED = 1,
  TW_UNKNOWN = 2,
  TW_INVALID_ARGUMENT = 3,  /* a caller passed something malformed; the message names it */
  TW_DEADLINE_EXCEEDED = 4, /* a bounded wait ran out (worker waiting for the chief, …) */
  TW_NOT_FOUND = 5,         /* a name (fetch, variable, file) does not exist */
  TW_ALREADY_EXISTS = 6,
  TW_PERMISSION_DENIED = 7,
  TW_RESOURCE_EXHAUSTED = 8,  /* out of memory, disk full */
  TW_FAILED_PRECONDITION = 9, /* the object is in the wrong state (closed, stopped, failed, in use) */
  TW_ABORTED = 10,            /* preemption: triggers recovery in a MonitoredSession */
  TW_OUT_OF_RANGE = 11,       /* end of input: a clean end of training */
  TW_UNIMPLEMENTED = 12,
  TW_INTERNAL = 13,    /* a bug in trainwatch; please report it */
  TW_UNAVAILABLE = 14, /* transient unavailability: triggers recovery in a MonitoredSession */
  TW_DATA_LOSS = 15,   /* corrupt or truncated data (checkpoint checksum mismatch, …) */
  TW_UNAUTHENTICATED = 16,
  /* trainwatch's own codes */
  TW_NAN_LOSS = 100,       /* a watched value was NaN/Inf (TF's NanLossDuringTrainingError) */
  TW_IO = 101,             /* an operating-system I/O call failed; the message has errno's text */
  TW_STOP_ITERATION = 102, /* the step asked to stop (TF's StepContext.request_stop): a clean end */
  TW_CALLBACK_FAILED = 103 /* reserved for bindings: a foreign-language callback raised; the
                              binding re-raises the original exception after the C call returns */
};

/* Stable name of a status code ("TW_ABORTED"), or "TW_UNKNOWN_STATUS" for a value not listed. */
TW_API const char *tw_status_name(tw_status status);

/* The message of the last call on this thread that failed, or "" if none has. The pointer stays valid
 * until the next trainwatch call on this thread. */
TW_API const char *tw_last_error_message(void);

/* Stores `message` as this thread's last error message and returns `status` unchanged, so that a
 * callback can write `return tw_set_error(TW_INVALID_ARGUMENT, "batch is empty");`. The library
 * prefixes the text with where the callback ran (hook name, phase) when it propagates it.
 * A NULL message stores "". */
TW_NODISCARD TW_API tw_status tw_set_error(tw_status status, const char *message);

/* ---------------------------------------------------------------------------------------------- */
/* Data types                                                                                     */
/* ---------------------------------------------------------------------------------------------- */

/* Element types. Values are stable. */
typedef enum tw_dtype {
  TW_DTYPE_INVALID = 0,
  TW_BOOL = 1,
  TW_INT8 = 2,
  TW_INT16 = 3,
  TW_INT32 = 4,
  TW_INT64 = 5,
  TW_UINT8 = 6,
  TW_UINT16 = 7,
  TW_UINT32 = 8,
  TW_UINT64 = 9,
  TW_FLOAT16 = 10,  /* IEEE 754 binary16 */
  TW_BFLOAT16 = 11, /* the upper half of a binary32 */
  TW_FLOAT32 = 12,
  TW_FLOAT64 = 13,
  TW_FLOAT8_E4M3FN = 14,          /* OCP fp8: no infinities, NaN iff (bits & 0x7F) == 0x7F */
  TW_FLOAT8_E5M2 = 15,            /* OCP fp8: IEEE-like, 5 exponent bits */
  TW_DTYPE_MAX_ENUM_ = 0x7FFFFFFF /* keeps the enum 32 bits wide, so any int is a valid value in C++ */
} tw_dtype;

/* Size of one element in bytes, or 0 for a value that is not a tw_dtype. */
TW_API size_t tw_dtype_size(tw_dtype dtype);
/* Lower-case name ("float32", "bfloat16", "float8_e4m3fn"), or "invalid". */
TW_API const char *tw_dtype_name(tw_dtype dtype);

/* ---------------------------------------------------------------------------------------------- */
/* Tensor view                                                                                    */
/* ---------------------------------------------------------------------------------------------- */

/* A borrowed, DLPack-shaped view of caller-owned memory: the library never frees `data`, `shape`,
 * `strides` or `name`. Which call keeps a reference and for how long is stated by each function that
 * takes one.
 *
 * - struct_size: sizeof(tw_tensor) as the caller compiled it (set it with TW_TENSOR_INIT or
 *   tw_tensor_init). The struct only ever grows at its end; the library reads only what the caller's
 *   size covers.
 * - ndim == 0 is a scalar (one element); shape may then be NULL. ndim is at most TW_MAX_RANK.
 * - strides are in elements, as in DLPack; NULL means row-major contiguous. Negative strides are
 *   allowed where a function says so.
 * - device_type and device_id say where `data` lives (DLPack's device codes). 0 or TW_DEVICE_CPU is
 *   host memory, which is what a view of the first version (TW_TENSOR_SIZE_V1, without these members)
 *   always is. Any other type is memory the library never reads or writes itself: every access goes
 *   through the tw_device table registered for that type (trainwatch/device.h), and a device view must
 *   be contiguous (strides NULL or row-major). Functions that accept device views say so; the others
 *   return TW_INVALID_ARGUMENT naming the view. */
/* Where a view's memory lives: DLPack's DLDeviceType codes. Values are stable. */
typedef enum tw_device_type {
  TW_DEVICE_HOST = 0,      /* host memory: what a v1 view and a zero-initialised member mean */
  TW_DEVICE_CPU = 1,       /* host memory too (DLPack's kDLCPU) */
  TW_DEVICE_CUDA = 2,      /* CUDA device memory (kDLCUDA); device_id is the CUDA ordinal */
  TW_DEVICE_CUDA_HOST = 3, /* CUDA pinned host memory (kDLCUDAHost): host memory to this library */
  TW_DEVICE_EXT = 12,      /* any other device (kDLExtDev), served by the table registered for it */
  TW_DEVICE_TYPE_MAX_ENUM_ = 0x7FFFFFFF
} tw_device_type;

/* The most dimensions a view may have (TensorFlow's and DLPack's practical limit is far below; PyTorch
 * and numpy allow 64). Views checked by the library also must not span more bytes than int64 holds:
 * element count × element size, and the farthest element's offset Σ |stride| × (extent − 1) × element
 * size. Either violation is TW_INVALID_ARGUMENT naming the view. */
#define TW_MAX_RANK 64

typedef struct tw_tensor {
  uint32_t struct_size;
  int32_t dtype;    /* a tw_dtype */
  const char *name; /* may be NULL where the function's context supplies the name */
  void *data;
  int32_t ndim;
  const int64_t *shape;   /* ndim entries, each >= 0 */
  const int64_t *strides; /* ndim entries in elements, or NULL for row-major */
  /* Second version (TW_TENSOR_SIZE_V2): */
  int32_t device_type; /* a tw_device_type; 0 (host) in a v1 view */
  int32_t device_id;   /* which device of that type (CUDA's ordinal); 0 for host memory */
} tw_tensor;

#define TW_TENSOR_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_tensor, strides)
#define TW_TENSOR_SIZE_V2 TW_STRUCT_SIZE_THROUGH(tw_tensor, device_id)
#define TW_TENSOR_INIT \
  { (uint32_t)sizeof(tw_tensor), TW_DTYPE_INVALID, NULL, NULL, 0, NULL, NULL, 0, 0 }

/* Sets *t to TW_TENSOR_INIT (for code that cannot expand the macro): compiled into the caller, so
 * struct_size is the caller's sizeof. t must not be NULL. */
static inline void tw_tensor_init(tw_tensor *t) {
  const tw_tensor init = TW_TENSOR_INIT;
  *t = init;
}

/* Number of elements of a view (product of shape; 1 for a scalar), or -1 if the view is malformed
 * (NULL, bad struct_size, bad dtype, ndim negative or above TW_MAX_RANK, negative extent, NULL shape
 * with ndim > 0, a size or stride span that overflows int64). */
TW_API int64_t tw_tensor_element_count(const tw_tensor *t);

/* ---------------------------------------------------------------------------------------------- */
/* Logging                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* Levels share Python logging's numbers so bindings can forward them unchanged. */
typedef enum tw_log_level {
  TW_LOG_DEBUG = 10,
  TW_LOG_INFO = 20,
  TW_LOG_WARNING = 30,
  TW_LOG_ERROR = 40,
  TW_LOG_MAX_ENUM_ = 0x7FFFFFFF
} tw_log_level;

typedef void (*tw_log_fn)(void *user_data, tw_log_level level, const char *message);

/* Routes every log line of the library to `fn` (message without trailing newline, valid only during
 * the call). fn == NULL restores the default sink: lines at or above the minimum level go to stderr
 * as "I1122 12:00:00.123456 trainwatch] message", TF's style. The previous user_data is not freed.
 * The sink may be called from any thread that runs library code; it must be thread-safe.
 * Thread rules: set it before creating sessions; replacing it while another thread logs is safe. */
TW_API void tw_set_log_sink(tw_log_fn fn, void *user_data);

/* Drops lines below `level` before they reach the sink. Default TW_LOG_INFO. */
TW_API void tw_set_log_level(tw_log_level level);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_COMMON_H */
