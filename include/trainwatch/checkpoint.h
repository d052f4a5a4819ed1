/*
 * trainwatch/checkpoint.h — savers, checkpoint files and the `checkpoint` state file.
 *
 * A checkpoint is one file, "<prefix>-<global_step>" (tf.train.Saver's naming, e.g. model.ckpt-1000),
 * not TF's ".index" + ".data-*" pair: every tensor is compressed (zstd, after a byte-plane filter for
 * floats), checksummed, and listed in an index so one tensor can be read alone. The format is specified
 * in docs/checkpoint-format.md. Files are written durably: a temporary file in the same directory,
 * fsync, rename, fsync of the directory — a crash or a full disk never damages the previous checkpoint.
 *
 * Next to the checkpoints lives TensorFlow's text state file `checkpoint` (model_checkpoint_path,
 * all_model_checkpoint_paths oldest → newest, plus TF2's all_model_checkpoint_timestamps and
 * last_preserved_timestamp), so tf.train.latest_checkpoint and TensorBoard read trainwatch directories.
 * The state file is a hint: its paths are read for restore (absolute ones too) but never decide what is
 * deleted — only files provably the saver's own checkpoints inside the directory are ("<prefix>-<step>",
 * a regular file there, a trainwatch header, and an origin naming this job; anything else listed is
 * left, with a WARNING) — and when it is missing or damaged the saver finds its checkpoints by name.
 * A state file over 1 MiB or that is not a regular file is refused.
 *
 * Checkpoints belong to the job that wrote them (docs/tf-semantics.md C19): the first save into a
 * directory gives it a job identity (the hidden file "<dir>/.trainwatch.job", and a
 * "# trainwatch-job: …" comment in the state file), which every checkpoint records with its own name.
 * A file found by name is the saver's only when both match: a checkpoint copied in from another run,
 * or a copy under another name, is never restored by the name scan nor deleted (one WARNING). Restore
 * any checkpoint on purpose by its path (tw_saver_restore).
 *
 * One writer per directory: a saver holds the advisory lock "<dir>/.trainwatch.lock" (flock) from its
 * first save into, or recovery of, a directory until it is destroyed; a chief session holds it from
 * creation until close. A second writer — another process, or another saver or session of this
 * process — gets TW_FAILED_PRECONDITION naming the directory. The kernel releases the lock when the
 * holder exits or crashes. Reading (restore, latest_checkpoint, listing) takes no lock. The lock cannot
 * be bypassed (tf-semantics C16): a lock file that cannot be opened read-write in a writable directory
 * is TW_PERMISSION_DENIED, one that is a symbolic link, not a regular file or has another link
 * TW_INVALID_ARGUMENT; only a directory the process cannot write at all is used unlocked (a WARNING).
 *
 * Files that are not regular files (FIFOs, directories, devices, sockets) are refused at once with
 * TW_INVALID_ARGUMENT wherever a path is read, never blocked on.
 *
 * Formats: every save writes the current format (6, the format of 1.0). A checkpoint of an older format
 * (versions 1 to 5, written before 1.0) is read only by a library built with legacy formats (meson
 * option legacy_formats, on by default until 1.0); a library built without them refuses it wherever a
 * checkpoint is read with TW_UNIMPLEMENTED, whose message names the file, its version and the command
 * that converts it (`trainwatch-ckpt upgrade OLD NEW`, tw_checkpoint_upgrade, run with a library that
 * reads it). docs/checkpoint-format.md, "Versioning".
 *
 * Every read verifies checksums: corrupt or truncated data comes back as TW_DATA_LOSS with a message
 * naming the file and the tensor, never as wrong values. Operating-system failures come back as TW_IO
 * (or TW_RESOURCE_EXHAUSTED for a full disk or file size limit) with errno's text.
 *
 * Thread rules: a saver is used by one thread at a time. The free functions are reentrant. Each call
 * uses up to one thread per core for compression and decompression.
 */
#ifndef TRAINWATCH_CHECKPOINT_H
#define TRAINWATCH_CHECKPOINT_H

#include "trainwatch/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_saver tw_saver;                               /* tf.train.Saver over a set of variables */
typedef struct tw_checkpoint_variables tw_checkpoint_variables; /* a checkpoint's tensor list */

/* ---------------------------------------------------------------------------------------------- */
/* Saver                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* Creates a saver over `n_variables` views (TF's var_list). Each view needs a non-empty, unique name,
 * a valid dtype and shape, and contiguous row-major data (strides NULL or row-major). The views are
 * copied but their data is borrowed: the buffers must stay valid until tw_saver_destroy; save reads
 * them, restore writes them in place.
 * A view may live on a device (tw_tensor.device_type, trainwatch/device.h): the saver then keeps one
 * pinned staging buffer per device variable (allocated by the device's table at the first save or
 * restore, reused by every later one, freed by tw_saver_destroy). A save copies the device variables
 * into them and writes from host memory; a restore decodes into them on the host and copies them to
 * the device. The library never reads device memory itself. variables may be NULL when n_variables is 0 (saving then
 * writes nothing, as TF's empty saver). Defaults (TF's, C3): max_to_keep 5, keep_checkpoint_every_n_hours 10000, no
 * step padding. Errors: TW_INVALID_ARGUMENT (out NULL; variables NULL with n_variables > 0; a malformed, strided,
 * unnamed or duplicate-named view — the message names it), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_saver_create(tw_saver **out, const tw_tensor *variables, size_t n_variables);

/* Frees the saver and releases its directory locks at once (tf-semantics C25: another saver or session
 * may then write there). Checkpoint files and variables are not touched. NULL is a no-op. */
TW_API void tw_saver_destroy(tw_saver *saver);

/* How many recent checkpoints to keep (default 5). Saving past it deletes the oldest, unless it is due
 * to be kept by keep_checkpoint_every_n_hours. 0 keeps every file and lists only the newest in the
 * state file (TF's C9). Errors: TW_INVALID_ARGUMENT (NULL saver, negative value). */
TW_NODISCARD TW_API tw_status tw_saver_set_max_to_keep(tw_saver *saver, int64_t max_to_keep);

/* A checkpoint leaving the kept list is kept forever when it is at least `hours` newer than the last one
 * kept that way (default 10000, i.e. never). The clock is stored in the state file
 * (last_preserved_timestamp) and restored by tw_saver_recover_last_checkpoints, so it survives restarts.
 * Errors: TW_INVALID_ARGUMENT (NULL saver, hours not > 0). */
TW_NODISCARD TW_API tw_status tw_saver_set_keep_checkpoint_every_n_hours(tw_saver *saver, double hours);

/* 1: name checkpoints "<prefix>-%08d" (TF's pad_step_number); 0 (default): "<prefix>-<step>".
 * Errors: TW_INVALID_ARGUMENT (NULL saver, value not 0 or 1). */
TW_NODISCARD TW_API tw_status tw_saver_set_pad_step_number(tw_saver *saver, int pad);

/* 0 (default): a checkpoint evicted by max_to_keep is unlinked, as TF deletes it; a program still
 * reading it keeps its bytes. 1: its file is recycled — kept as a hidden spare (".tw-spare-<n>", deleted
 * when the saver releases the directory) that a later save overwrites in place, which saves creating
 * and freeing a file per save (docs/performance/checkpoint.md). The risk: an evicted checkpoint's file
 * is overwritten in place by a later save: a program that is still reading it without trainwatch's
 * lock (cp, tar, rsync, a backup agent) gets bytes of two checkpoints. trainwatch's own readers are
 * safe (tf-semantics C15). A session's saver takes it from TW_OPT_CHECKPOINT_RECYCLE_FILES.
 * Errors: TW_INVALID_ARGUMENT (NULL saver, value not 0 or 1). */
TW_NODISCARD TW_API tw_status tw_saver_set_recycle_files(tw_saver *saver, int recycle);

/* Saves the variables as they are now to "<prefix>-<global_step>" (or `prefix` itself when global_step
 * is TW_UNSET), records it in "<dirname(prefix)>/checkpoint" and deletes checkpoints past max_to_keep.
 * The variables must not change during the call.
 * *out_path receives the checkpoint's path, owned by the saver and valid until the next call on it;
 * it is set to NULL for a saver without variables (nothing is written). out_path may be NULL.
 * Stale temporary files from interrupted saves are removed from the directory on the first save, and
 * every save first removes a complete checkpoint that an earlier save cut short (its process killed)
 * left unlisted in the state file — written but never recorded, or evicted but never deleted — unless
 * the saver restored from it (C14; docs/checkpoint-format.md, "A save cut short").
 * Errors: TW_INVALID_ARGUMENT (NULL saver or prefix, empty prefix; the prefix collides with the state
 * file: "'latest_filename' collides with 'save_path': …" / "Save path '<p>' conflicts with path used for
 * checkpoint state.  Please use a different save path."), TW_NOT_FOUND ("Parent directory of <path>
 * doesn't exist, can't save."; a saver of tw_saver_create_from_options without a collective holding a
 * shard that is not its whole global tensor: "variable '<name>' holds only a box of its global tensor:
 * saving it needs the job's collective …", trainwatch/distributed.h), TW_IO, TW_RESOURCE_EXHAUSTED (disk
 * full, file size limit, memory), TW_FAILED_PRECONDITION ("checkpoint directory <dir> is in use: a
 * Saver of this process …": another saver or a saving session, of this process or another, holds
 * <dir>/.trainwatch.lock, named in the message, C24), TW_PERMISSION_DENIED (the directory
 * is writable but its lock file cannot be opened read-write, e.g. another user's: the saver refuses to
 * write unlocked), TW_INVALID_ARGUMENT (the lock file is a symbolic link, not a regular file, or has
 * more than one link; tf-semantics C16).
 * Device variables are first copied into the saver's pinned staging buffers (copy_to_host, waited
 * for); a device operation that fails writes nothing and fails the save with the device's status, the
 * message naming the operation, the device and the tensor ("device fake:0, copy_to_host of 'w': …").
 * On any error the previous checkpoints and state file are untouched and the failed save is not
 * recorded: a checkpoint written whose state-file update then failed is removed again. */
TW_NODISCARD TW_API tw_status tw_saver_save(const char **out_path, tw_saver *saver, const char *prefix,
                                            int64_t global_step);

/* Restores every variable from the checkpoint at `path`, in place. All or nothing: names, dtypes,
 * shapes, checksums, and that every chunk decodes to its recorded size and checksum, are all verified
 * before the first variable byte is written (a verify pass, then a second decode into the variables:
 * no staging copy of the model). On any error every variable is byte-identical to before.
 * `path` may be a sharded checkpoint (its index, docs/checkpoint-format.md): it restores as whole
 * tensors. A shard of a saver from tw_saver_create_from_options (trainwatch/distributed.h) — with a
 * collective or without — receives its own box of the checkpoint's global tensor, whether one process or
 * any number of ranks in any slicing wrote it; a restore makes no collective call.
 * Errors: TW_INVALID_ARGUMENT (NULL arguments; "variable 'w' is float32[3,4] but checkpoint <path>
 * holds float32[4,3]"; "variable 'w' is a shard of float32[8,4] but checkpoint <path> holds
 * float32[6,4]"; `path` is not a regular file, e.g. a FIFO), TW_NOT_FOUND (no such file; "Key
 * <name> not found in checkpoint <path>"), TW_DATA_LOSS (corrupt or truncated file: the message names
 * the file and the tensor), TW_RESOURCE_EXHAUSTED (out of memory, the file cannot be mapped, no
 * descriptor left), TW_IO.
 * Device variables: the checkpoint is read and proven on the host as above, decoded into the saver's
 * pinned staging buffers, then copied to the device (copy_to_device, waited for before the call
 * returns). A device operation that fails ends the call with the device's status naming the operation
 * and the tensor: failing to allocate the staging buffers, every variable is untouched; failing a copy
 * to the device (the last step), the host variables hold the checkpoint's values and each device
 * variable either its old or its restored values — restore again before using them. The checkpoint is
 * never touched, and the next restore starts afresh. */
TW_NODISCARD TW_API tw_status tw_saver_restore(tw_saver *saver, const char *path);

/* The same for the `n_names` variables named in `names` only (the others are not touched; n_names 0
 * restores nothing). A name that is not a variable of this saver fails with TW_NOT_FOUND; names NULL
 * with n_names > 0 or a NULL entry with TW_INVALID_ARGUMENT. Other errors as tw_saver_restore. */
TW_NODISCARD TW_API tw_status tw_saver_restore_variables(tw_saver *saver, const char *path, const char *const *names,
                                                         size_t n_names);

/* Restores every variable from the newest intact checkpoint of `dir`: those its state file lists,
 * newest first, then — when the state file is missing, damaged (a WARNING names the damage) or lists
 * nothing intact — the checkpoints found in `dir` by name ("<prefix>-<step>" regular files with a
 * trainwatch header whose origin names this directory's job and that name, C19), newest step first. A
 * corrupt, truncated, missing or non-regular one (directory, FIFO, device, a name too long) is skipped
 * with a WARNING naming it, and the next one is tried; a failure that proves nothing about the file ends
 * the call (docs/tf-semantics.md C20).
 * *out_path (may be NULL) receives the checkpoint restored, valid until the next call on the saver.
 * Takes no lock. Errors: TW_INVALID_ARGUMENT (NULL arguments, a listed checkpoint's dtype/shape does
 * not match), TW_NOT_FOUND (no checkpoint listed or found, or only missing ones), TW_DATA_LOSS (every
 * checkpoint there proved damaged: the message names each and its damage), TW_RESOURCE_EXHAUSTED (out
 * of memory, a checkpoint that cannot be mapped, e.g. under RLIMIT_AS, no descriptor left), TW_IO; the
 * message then names the checkpoint, and no older one was tried. */
TW_NODISCARD TW_API tw_status tw_saver_restore_newest_good(const char **out_path, tw_saver *saver, const char *dir);

/* Takes `dir`'s lock, then re-seeds the saver's kept list and retention clock from `dir`'s state file,
 * as TF's recover_last_checkpoints after a restore (files that vanished are dropped), removes stale
 * temporary files, and — unlike TF — trims the list to max_to_keep at once (deleting the extras that
 * are provably its own, or keeping them by keep_checkpoint_every_n_hours; never the checkpoint it last
 * restored) and rewrites the state file. When the state file is missing, damaged (unparsable, too
 * large, not a regular file, empty model_checkpoint_path) or names no existing file, the list is
 * rebuilt from the checkpoints found in `dir` by name and the state file rewritten from it (a WARNING
 * names the damage; nothing is deleted). Nothing found: nothing to recover, OK.
 * Errors: TW_INVALID_ARGUMENT (NULL arguments; a lock file that is a symbolic link, not a regular file
 * or has another link), TW_FAILED_PRECONDITION (another saver, session or process holds `dir`'s lock),
 * TW_PERMISSION_DENIED (`dir` is writable but its lock file cannot be opened read-write), TW_IO,
 * TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_saver_recover_last_checkpoints(tw_saver *saver, const char *dir);

/* The saver's kept checkpoints, oldest → newest: count, and the i-th path (valid until the next call
 * on the saver). Errors: TW_INVALID_ARGUMENT (NULL), TW_OUT_OF_RANGE (index). */
TW_API size_t tw_saver_last_checkpoint_count(const tw_saver *saver);
TW_NODISCARD TW_API tw_status tw_saver_last_checkpoint_at(const char **out_path, const tw_saver *saver, size_t index);

/* ---------------------------------------------------------------------------------------------- */
/* Checkpoint directories and files                                                               */
/* ---------------------------------------------------------------------------------------------- */

/* tf.train.latest_checkpoint(dir): copies the newest checkpoint's path from "<dir>/checkpoint" into
 * out_path (NUL-terminated; relative paths are joined onto dir). There is none when the state file is
 * missing, unparsable, over 1 MiB or not a regular file (two WARNING lines) or names a file that does
 * not exist (an ERROR line). Takes no lock.
 * Errors: TW_INVALID_ARGUMENT (NULL out_path or dir; a state file with an empty model_checkpoint_path),
 * TW_NOT_FOUND (no checkpoint), TW_OUT_OF_RANGE (out_size too small: the message gives the size
 * needed). */
TW_NODISCARD TW_API tw_status tw_latest_checkpoint(char *out_path, size_t out_size, const char *dir);

/* Reads the index of the checkpoint at `path` (no tensor data) into a new list; free it with
 * tw_checkpoint_variables_destroy. Errors: TW_INVALID_ARGUMENT (NULL; not a regular file, e.g. a
 * FIFO: refused at once), TW_NOT_FOUND, TW_IO,
 * TW_DATA_LOSS (not a checkpoint, truncated, corrupt index), TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_checkpoint_list_variables(tw_checkpoint_variables **out, const char *path);

/* Number of tensors in the list (0 for NULL), in the order they were saved. */
TW_API size_t tw_checkpoint_variables_count(const tw_checkpoint_variables *list);

/* Fills *out with the i-th tensor's name, dtype and shape (data NULL); the strings and arrays are owned
 * by the list. Errors: TW_INVALID_ARGUMENT (NULL, out->struct_size too small), TW_OUT_OF_RANGE. */
TW_NODISCARD TW_API tw_status tw_checkpoint_variables_at(tw_tensor *out, const tw_checkpoint_variables *list,
                                                         size_t index);

/* Frees the list. NULL is a no-op. */
TW_API void tw_checkpoint_variables_destroy(tw_checkpoint_variables *list);

/* tf.train.load_variable: reads the tensor named destination->name from the checkpoint at `path` into
 * destination->data, which must be contiguous and have the tensor's dtype and shape. The buffer is
 * written only after every chunk of the tensor has been read into the library's memory, decoded and
 * checked, and only from those bytes (untouched on error; a file changed or truncated meanwhile by
 * another program is either refused or not seen). The library allocates no copy of the tensor: the
 * caller's buffer bounds what is written. A caller allocating it from the size
 * tw_checkpoint_variables_at declares should bound that size first (a file of a few kilobytes can
 * declare gigabytes of zeros): the Python package and trainwatch-ckpt refuse more than
 * TRAINWATCH_MAX_LOAD_BYTES, 1 GiB by default (docs/tf-semantics.md C22).
 * Errors: TW_INVALID_ARGUMENT (NULL or malformed view, NULL name, strided view, dtype/shape mismatch,
 * `path` not a regular file), TW_NOT_FOUND (no such file; "Key <name> not found in checkpoint <path>"),
 * TW_DATA_LOSS (corrupt; or "<path> was truncated while being read"), TW_RESOURCE_EXHAUSTED (out of
 * memory; the buffer is then untouched), TW_IO.
 * `destination` may be a device view (trainwatch/device.h): the tensor is decoded into pinned memory
 * from the device's table (allocated for this call), then copied to the device, waited for. A device
 * operation that fails is its status naming the operation and the tensor; only a failing copy to the
 * device can leave the view partly written. */
TW_NODISCARD TW_API tw_status tw_checkpoint_load_variable(const char *path, const tw_tensor *destination);

/* Decodes every tensor of the checkpoint at `path` and checks every checksum, keeping nothing.
 * TW_OK means the file is intact. Errors: TW_INVALID_ARGUMENT (NULL; not a regular file), TW_NOT_FOUND,
 * TW_IO, TW_DATA_LOSS (the message names the file and the first corrupt tensor and chunk),
 * TW_RESOURCE_EXHAUSTED. */
TW_NODISCARD TW_API tw_status tw_checkpoint_verify(const char *path);

/* ---------------------------------------------------------------------------------------------- */
/* Progress of long saves and restores                                                            */
/* ---------------------------------------------------------------------------------------------- */

typedef enum tw_progress_kind {
  TW_PROGRESS_SAVE = 1,    /* writing one checkpoint file (a sharded checkpoint: each rank's part) */
  TW_PROGRESS_RESTORE = 2, /* restoring variables from one checkpoint (single-file or sharded) */
  TW_PROGRESS_KIND_MAX_ENUM_ = 0x7FFFFFFF
} tw_progress_kind;

/* One report on a save or restore in progress. bytes_done / bytes_total count the tensors' bytes as
 * they are held in memory (the variables' bytes, not the compressed file's): a save counts each chunk
 * once compressed and handed to the file, a restore once read and proven (it is written into the
 * variables after every chunk is proven).
 * bytes_done never goes back from one report of an operation to the next; its last report (finished 1,
 * made after the variables are written or the file is committed) has bytes_done == bytes_total.
 * elapsed_secs: since the operation began. path: the file, valid during the call only. */
typedef void (*tw_progress_fn)(void *user_data, tw_progress_kind kind, const char *path, int64_t bytes_done,
                               int64_t bytes_total, double elapsed_secs, int finished);

/* Where the progress of the saves and restores of this process goes (tw_saver_* savers, sessions'
 * checkpoint hooks and restores, background saves; docs/tf-semantics.md C26). An operation is reported
 * on once it has run every_n_secs (default 2), then every every_n_secs, and once when it ends
 * successfully (a failed one is reported by its status only); 0 reports after every chunk. fn == NULL
 * restores the default sink: INFO lines of the library's logger (tw_set_log_sink), "Saving checkpoint
 * <path>: 512.0 of 1073.7 MB (48%), 250.3 MB/s, 2.2 s left" and "Saved checkpoint <path>: 1073.7 MB in
 * 4.3 s, 250.1 MB/s" (Restoring/Restored for restores). An operation keeps the sink set when it began.
 * fn is called from the thread doing the work (a background save's thread, one of a save's compressing
 * threads), one call at a time per operation; operations running at once may call it at once: it must
 * be thread-safe, return quickly and not call back into the saver or session doing the work. user_data
 * is not freed by the library. Thread rules: as tw_set_log_sink.
 * Errors: TW_INVALID_ARGUMENT (every_n_secs negative, NaN or infinite); the sink is then unchanged. */
TW_NODISCARD TW_API tw_status tw_set_progress_sink(double every_n_secs, tw_progress_fn fn, void *user_data);

/* ---------------------------------------------------------------------------------------------- */
/* Upgrading a checkpoint to the current format                                                   */
/* ---------------------------------------------------------------------------------------------- */

/* Rewrites the checkpoint at `from` — any format this library reads, a sharded checkpoint's index
 * included (its whole tensors go into the one file) — as one checkpoint file of the current format at
 * `to`, every tensor bit for bit, written durably (`to` appears complete or not at all). Every tensor is
 * held in memory at once. The new file records no job: a saver never deletes it or finds it by name;
 * restore it by its path. `trainwatch-ckpt upgrade`.
 * Errors: TW_INVALID_ARGUMENT (NULL; `from` not a regular file; `to` the same file as `from`),
 * TW_NOT_FOUND (no `from`; `to`'s directory missing), TW_DATA_LOSS (`from` corrupt), TW_UNIMPLEMENTED
 * (`from` has a format before 1.0 and this library was built without legacy formats),
 * TW_RESOURCE_EXHAUSTED (memory, disk full), TW_IO. On failure `to` is untouched. */
TW_NODISCARD TW_API tw_status tw_checkpoint_upgrade(const char *from, const char *to);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_CHECKPOINT_H */
