/*
 * trainwatch/summary.h — TensorBoard event files: writing summaries, reading them back.
 *
 * A summary writer appends events to one file "<logdir>/events.out.tfevents.<secs>.<hostname>"
 * (TF's name; ".<pid>" is appended only when that name is already taken, so nothing is overwritten).
 * The file is TFRecord-framed (length and data each protected by a masked CRC-32C) and holds
 * protobuf-encoded Event messages, the first being the file_version event "brain.Event:2", so
 * `tensorboard --logdir <logdir>` shows its scalars and histograms.
 *
 * Writers are shared per directory, like TF's FileWriterCache: every tw_summary_writer_open of the
 * same directory (compared by canonical path) while a writer for it is open returns a handle to the
 * same file, so hooks and the caller writing to one directory append to one file.
 *
 * Events are buffered and written (and synced) when 10 are pending, at the first event added 120 s
 * after the last write (TF FileWriter's max_queue and flush_secs), on tw_summary_writer_flush, and when
 * the writer is closed.
 *
 * Thread rules: a writer may be used from any number of threads at once. A reader is used by one
 * thread at a time; distinct readers are independent.
 */
#ifndef TRAINWATCH_SUMMARY_H
#define TRAINWATCH_SUMMARY_H

#include "trainwatch/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_summary_writer tw_summary_writer; /* a handle on a shared event file writer */
typedef struct tw_event_reader tw_event_reader;

/* SessionLog.status values. Values are stable (TF's). */
typedef enum tw_session_log_status {
  TW_SESSION_LOG_STATUS_UNSPECIFIED = 0,
  TW_SESSION_LOG_START = 1, /* a run started (SummarySaverHook writes it on the first run) */
  TW_SESSION_LOG_STOP = 2,
  TW_SESSION_LOG_CHECKPOINT = 3,        /* a checkpoint was saved; checkpoint_path names its prefix */
  TW_SESSION_LOG_MAX_ENUM_ = 0x7FFFFFFF /* keeps the enum 32 bits wide: any int is a valid value in C++ */
} tw_session_log_status;

/* ---------------------------------------------------------------------------------------------- */
/* Writing                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* Opens the writer of `logdir` (copied), creating the directory and its parents if needed: a handle on
 * the directory's shared writer if one is open, otherwise a new event file whose first record, the
 * file_version event, is already on disk. Free the handle with tw_summary_writer_destroy.
 * Errors: TW_INVALID_ARGUMENT (out or logdir NULL, logdir empty), TW_FAILED_PRECONDITION (logdir or a
 * parent exists and is not a directory), TW_IO (the directory or file cannot be created; the message
 * names the path and the OS error), TW_RESOURCE_EXHAUSTED (disk full, out of memory). */
TW_NODISCARD TW_API tw_status tw_summary_writer_open(tw_summary_writer **out, const char *logdir);

/* Adds a scalar summary (Summary.Value.simple_value, a float: `value` is rounded to float as TF does)
 * with tag `tag` (copied, non-empty) at `step`, stamped with the current wall time.
 * Errors: TW_INVALID_ARGUMENT (writer or tag NULL, tag empty), TW_FAILED_PRECONDITION (the shared
 * writer was closed), TW_IO / TW_RESOURCE_EXHAUSTED (a write this call triggered failed). */
TW_NODISCARD TW_API tw_status tw_summary_writer_add_scalar(tw_summary_writer *writer, const char *tag, int64_t step,
                                                           double value);

/* Adds the histogram of every element of `values` (borrowed for the call; any dtype and shape,
 * strides honoured; f16, bf16 and fp8 are widened exactly) with TF's default bucket edges, as TF's
 * histogram summary op computes it. values->name is ignored. A device view (trainwatch/device.h) is
 * copied to pinned host memory first.
 * Errors: as tw_summary_writer_add_scalar, plus TW_INVALID_ARGUMENT for a malformed view (the message
 * names "values") and, like TF, for a NaN or infinite element ("Nan in summary histogram for: <tag>");
 * for a device view TW_FAILED_PRECONDITION (no device registered) or a failing device operation's
 * status; nothing is written then. */
TW_NODISCARD TW_API tw_status tw_summary_writer_add_histogram(tw_summary_writer *writer, const char *tag, int64_t step,
                                                              const tw_tensor *values);

/* Adds a SessionLog event at `step`. checkpoint_path (TW_SESSION_LOG_CHECKPOINT) and msg may be NULL
 * or empty; both are copied.
 * Errors: TW_INVALID_ARGUMENT (writer NULL, status not a tw_session_log_status), and as
 * tw_summary_writer_add_scalar. */
TW_NODISCARD TW_API tw_status tw_summary_writer_add_session_log(tw_summary_writer *writer, int64_t step,
                                                                tw_session_log_status status,
                                                                const char *checkpoint_path, const char *msg);

/* Adds an event holding `size` bytes of an already serialized Summary protobuf (TF's
 * add_summary(bytes), e.g. from another summary library) at `step`. The bytes are copied after being
 * checked to parse as a Summary.
 * Errors: TW_INVALID_ARGUMENT (writer NULL, summary NULL with size > 0), TW_DATA_LOSS (not a valid
 * Summary; the message says what is malformed), and as tw_summary_writer_add_scalar. */
TW_NODISCARD TW_API tw_status tw_summary_writer_add_summary(tw_summary_writer *writer, int64_t step,
                                                            const void *summary, size_t size);

/* Writes every buffered event to the file and syncs it to disk. A no-op once the writer is closed.
 * Errors: TW_INVALID_ARGUMENT (NULL), TW_IO / TW_RESOURCE_EXHAUSTED (after which the file is left as it
 * is and every later write of this writer reports the same error). */
TW_NODISCARD TW_API tw_status tw_summary_writer_flush(tw_summary_writer *writer);

/* The event file's path (absolute); valid while the handle lives. NULL for NULL. */
TW_API const char *tw_summary_writer_path(const tw_summary_writer *writer);

/* Flushes and closes the shared writer for every handle on it (TF's FileWriter.close): later adds
 * through any of them return TW_FAILED_PRECONDITION, and the next tw_summary_writer_open of the
 * directory starts a new file. Idempotent. Errors: TW_INVALID_ARGUMENT (NULL), TW_IO /
 * TW_RESOURCE_EXHAUSTED (the last write or close failed; the file is closed anyway). */
TW_NODISCARD TW_API tw_status tw_summary_writer_close(tw_summary_writer *writer);

/* Frees the handle. When it was the last handle on its writer (hooks hold their own), the writer is
 * flushed and closed; a failure then is logged, not returned — call tw_summary_writer_close first to
 * see it. NULL is a no-op. */
TW_API void tw_summary_writer_destroy(tw_summary_writer *writer);

/* ---------------------------------------------------------------------------------------------- */
/* Reading                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* HistogramProto: bucket i counts the values in [bucket_limit[i-1], bucket_limit[i]) (bucket 0 from
 * -DBL_MAX); a run of empty buckets is written as one. Lent by the reader: struct_size is the
 * library's (read later members only when TW_STRUCT_HAS says so, trainwatch/common.h). */
typedef struct tw_histogram {
  uint32_t struct_size;
  double min;
  double max;
  double num;
  double sum;
  double sum_squares;
  size_t bucket_count;
  const double *bucket_limit; /* bucket_count entries */
  const double *bucket;       /* bucket_count entries */
} tw_histogram;

#define TW_HISTOGRAM_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_histogram, bucket)

/* What a Summary.Value holds. Values are stable. */
typedef enum tw_summary_value_kind {
  TW_SUMMARY_VALUE_OTHER = 0,     /* an image, audio, tensor, …: not decoded */
  TW_SUMMARY_VALUE_SCALAR = 1,    /* simple_value */
  TW_SUMMARY_VALUE_HISTOGRAM = 2, /* histogram */
  TW_SUMMARY_VALUE_MAX_ENUM_ = 0x7FFFFFFF
} tw_summary_value_kind;

/* One Summary.Value, lent by the reader like tw_histogram (struct_size is the library's). */
typedef struct tw_summary_value {
  uint32_t struct_size;
  int32_t kind; /* a tw_summary_value_kind */
  const char *tag;
  float simple_value;            /* TW_SUMMARY_VALUE_SCALAR */
  const tw_histogram *histogram; /* TW_SUMMARY_VALUE_HISTOGRAM, else NULL */
} tw_summary_value;

#define TW_SUMMARY_VALUE_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_summary_value, histogram)

/* Which member of Event's `what` oneof an event carries. Values are stable. */
typedef enum tw_event_kind {
  TW_EVENT_NONE = 0, /* only wall_time / step */
  TW_EVENT_FILE_VERSION = 1,
  TW_EVENT_SUMMARY = 2,
  TW_EVENT_LOG_MESSAGE = 3,
  TW_EVENT_SESSION_LOG = 4,
  TW_EVENT_OTHER = 5, /* a graph, run metadata, …: not decoded */
  TW_EVENT_KIND_MAX_ENUM_ = 0x7FFFFFFF
} tw_event_kind;

/* One decoded event: a versioned out-struct (trainwatch/common.h). The caller allocates it and sets
 * struct_size (TW_EVENT_INIT or tw_event_init); the reader fills the members the caller's size
 * covers. values is an array of pointers, one per Summary.Value. Every pointer points into the reader and is
 * valid until the next tw_event_reader_next or tw_event_reader_destroy on it. Strings are
 * NUL-terminated copies of the protobuf strings (a string with an embedded NUL appears cut there). */
typedef struct tw_event {
  uint32_t struct_size;
  int32_t kind;     /* a tw_event_kind */
  double wall_time; /* seconds since the Unix epoch */
  int64_t step;
  const char *file_version;              /* TW_EVENT_FILE_VERSION: "brain.Event:2"; otherwise "" */
  size_t value_count;                    /* TW_EVENT_SUMMARY: the Summary's values; otherwise 0 */
  const tw_summary_value *const *values; /* value_count pointers */
  int32_t session_log_status;            /* TW_EVENT_SESSION_LOG: a tw_session_log_status; otherwise 0 */
  const char *checkpoint_path;           /* TW_EVENT_SESSION_LOG; otherwise "" */
  const char *message;                   /* SessionLog.msg or LogMessage.message; otherwise "" */
  int32_t log_level;                     /* TW_EVENT_LOG_MESSAGE: 10 debug … 50 fatal; otherwise 0 */
} tw_event;

#define TW_EVENT_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_event, log_level)
#define TW_EVENT_INIT \
  { (uint32_t)sizeof(tw_event), 0, 0.0, 0, NULL, 0, NULL, 0, NULL, NULL, 0 }

/* Sets *event to TW_EVENT_INIT (compiled into the caller, as tw_tensor_init). NULL is a no-op. */
static inline void tw_event_init(tw_event *event) {
  const tw_event init = TW_EVENT_INIT;
  if (event != NULL) *event = init;
}

/* Opens an event file (or any TFRecord file of Events) for reading from its first record.
 * Errors: TW_INVALID_ARGUMENT (out or path NULL; `path` is not a regular file — a FIFO, directory or
 * device is refused at once, never blocked on), TW_NOT_FOUND (no such file), TW_IO. */
TW_NODISCARD TW_API tw_status tw_event_reader_open(tw_event_reader **out, const char *path);

/* Reads the next event into *out, verifying both CRCs of its record.
 * Returns TW_OK; TW_OUT_OF_RANGE after the last event (a clean end, *out untouched); TW_DATA_LOSS for a
 * corrupt record (CRC mismatch), a truncated record or bytes that are not an Event — the message names
 * the file and the record's byte offset, and the reader stays at that record; TW_INVALID_ARGUMENT
 * (reader or out NULL, out->struct_size smaller than TW_EVENT_SIZE_V1); TW_IO. */
TW_NODISCARD TW_API tw_status tw_event_reader_next(tw_event *out, tw_event_reader *reader);

/* Closes the file and frees the reader and every event it handed out. NULL is a no-op. */
TW_API void tw_event_reader_destroy(tw_event_reader *reader);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_SUMMARY_H */
