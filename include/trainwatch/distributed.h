/*
 * trainwatch/distributed.h — many processes, one training run: sharded variables and the collective seam.
 *
 * In a data-parallel job every process (rank) runs its own session over its own replica. Without
 * agreement one rank stops, rolls back or recovers while the others wait forever inside their next
 * allreduce. trainwatch has no network layer of its own: the job's engine (MPI, torch.distributed,
 * NCCL's CPU side group, a company launcher) does the talking, through the small callback table below.
 * Adapters exist for MPI (libtrainwatch_mpi, trainwatch/mpi.h) and, in Python, for torch.distributed and
 * mpi4py (trainwatch.distributed). A session created without a collective behaves exactly as a single
 * process does.
 *
 * The collective seam (tw_collective, tw_options_set_collective) is experimental: it will still move
 * (with the device seam that is coming), so it is declared only when TW_EXPERIMENTAL_API is defined
 * before the first trainwatch header is included, and it is outside the ABI promise (docs/abi.md,
 * "Experimental API"), as zstd's ZSTD_STATIC_LINKING_ONLY. The MPI adapter and the bindings define it.
 *
 * Include <trainwatch.h> rather than this file.
 */
#ifndef TRAINWATCH_DISTRIBUTED_H
#define TRAINWATCH_DISTRIBUTED_H

#include <stddef.h>
#include <stdint.h>

#include "trainwatch/checkpoint.h"
#include "trainwatch/common.h"
#include "trainwatch/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers a variable that holds one box of a tensor sharded across the ranks (FSDP, ZeRO, tensor
 * parallelism), next to tw_options_add_variable's replicated variables. var is as for
 * tw_options_add_variable (copied view, borrowed memory, contiguous, unique name; a failure is kept on
 * the options, and the rank must still create its session or saver, which then fails on every rank); its shape is the
 * box's extent; global_shape and offset (var->ndim entries each, copied) give the whole tensor's shape and where the
 * box starts in it. Every rank registers its own box of the same name, dtype and global shape; checkpoints then hold
 * each rank's boxes in its own part file (docs/checkpoint-format.md, "Sharded checkpoints") and restore into any
 * slicing of the same global tensor. Options without a collective restore each box (tw_saver_create_from_options) but
 * save no box that is not its whole global tensor (TW_INVALID_ARGUMENT from the save). Errors: TW_INVALID_ARGUMENT
 * (opts, var, global_shape or offset NULL; var as tw_options_add_variable; a scalar; a negative offset or a box that
 * does not lie inside global_shape, naming the variable and the dimension), TW_ALREADY_EXISTS (the name is taken). */
TW_NODISCARD TW_API tw_status tw_options_add_shard(tw_options *opts, const tw_tensor *var, const int64_t *global_shape,
                                                   const int64_t *offset);

/* Creates a standalone saver (trainwatch/checkpoint.h) for one rank of a job, as a session created from
 * `opts` would hold (without global_step): over the variables and shards registered on `opts` (their
 * data borrowed as by tw_saver_create), with its collective, TW_OPT_IS_CHIEF (D11),
 * TW_OPT_COLLECTIVE_TIMEOUT_SECS, TW_OPT_MAX_TO_KEEP, TW_OPT_KEEP_CHECKPOINT_EVERY_N_HOURS and
 * TW_OPT_CHECKPOINT_RECYCLE_FILES (read now:
 * later changes to `opts` do not reach the saver). With a collective and sharded variables, every rank
 * calls tw_saver_save with the same prefix and step at the same point of its program: each writes its
 * part, the chief commits (point 6 above: the same collective calls as a session's save). With a collective,
 * creating the saver is itself a collective call (point 7 above): every rank creates its saver at the
 * same point of its program — also a rank whose registration failed (tw_options_add_variable,
 * tw_options_add_shard, tw_options_record_error), so that every rank's creation fails at once with that
 * rank's status and "rank k of n: <its reason>" (D1) instead of the others waiting for it in the first
 * save. Without sharded variables the collective is not used by saves: it is tw_saver_create's saver over
 * the variables, and only the chief should save (as a session does). Without a collective (one process,
 * or a rank restoring alone) a shard restores, but saves only when it is its whole global tensor: else
 * tw_saver_save fails with TW_INVALID_ARGUMENT naming it, before writing anything (one process holds only
 * part of the tensor). Its restores are this rank's alone, with a collective or without: each shard reads
 * its own box of the checkpoint's global tensor — from a sharded checkpoint written by any number of
 * ranks in any slicing, or from a single-process checkpoint of the whole tensor — all or nothing, and
 * none takes a vote, so after a damaged part ranks may fall back to different checkpoints — a session's
 * restore votes (D16) so that every rank falls back together. Variables and shards on a device are
 * staged through the saver's pinned buffers as tw_saver_create's (each rank stages its own shards); a
 * rank whose device copy fails still takes part in the save's collective calls, and every rank's save
 * fails with that rank's status.
 * Errors: TW_INVALID_ARGUMENT (out or opts NULL), TW_RESOURCE_EXHAUSTED, a failed registration's status
 * (this rank's or, with a collective, the lowest failing rank's), the collective's failures
 * (TW_DEADLINE_EXCEEDED, TW_UNAVAILABLE, …). */
TW_NODISCARD TW_API tw_status tw_saver_create_from_options(tw_saver **out, const tw_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* TRAINWATCH_DISTRIBUTED_H */

/* ---------------------------------------------------------------------------------------------- */
/* Experimental: the collective seam (define TW_EXPERIMENTAL_API before including; no ABI promise)  */
/* ---------------------------------------------------------------------------------------------- */
#if defined(TW_EXPERIMENTAL_API) && !defined(TRAINWATCH_DISTRIBUTED_H_EXPERIMENTAL)
#define TRAINWATCH_DISTRIBUTED_H_EXPERIMENTAL

#ifdef __cplusplus
extern "C" {
#endif

/* Reductions of tw_collective.allreduce_int64. Values are stable. */
typedef enum tw_reduce_op {
  TW_REDUCE_SUM = 1,
  TW_REDUCE_MIN = 2,
  TW_REDUCE_MAX = 3,
  TW_REDUCE_OP_MAX_ENUM_ = 0x7FFFFFFF /* keeps the enum 32 bits wide */
} tw_reduce_op;

/* The job's communication engine, as a callback table. Every rank of the job sets one on the options
 * of its session; the session calls it at the points listed below, always from the thread that called
 * the session function (tw_*_session_create, tw_session_run, tw_session_close), never concurrently for
 * one session. Every rank makes the same calls in the same order with the same sizes: an engine needs
 * no tags.
 *
 * struct_size:     sizeof(tw_collective) as the caller compiled it (TW_COLLECTIVE_INIT). The table only
 *                  grows at its end; slots past the caller's size are treated as absent.
 * rank:            this process's rank, 0 <= rank < world_size. Rank 0 is the chief unless
 *                  TW_OPT_IS_CHIEF says otherwise (exactly one rank must be chief).
 * world_size:      the number of ranks, >= 1.
 * allreduce_int64: in place, values[i] becomes op(values[i] of every rank), for i < count.
 * broadcast:       in place, the `size` bytes at data on rank `root` are copied into data on every
 *                  other rank.
 * barrier:         returns when every rank has entered it.
 * destroy:         frees user_data; called exactly once, when the options and every session created
 *                  from them no longer need it. May be NULL.
 *
 * timeout_secs is TW_OPT_COLLECTIVE_TIMEOUT_SECS (negative: no limit). An operation that does not
 * complete in time returns TW_DEADLINE_EXCEEDED (or TW_UNAVAILABLE when the engine knows a peer is
 * gone), having stored a message through tw_set_error that says what it waited for; the session then
 * fails the call it was in with that status, the message prefixed by the operation and this rank
 * ("collective allreduce at the end of run 12 (rank 1 of 4): …"). Any non-OK status is handled the
 * same way. A callback must not call back into the session.
 *
 * Where a session calls the collective (every rank, in this order; docs/tf-semantics.md D1–D17). "A
 * string from R" is two broadcasts from rank R: its length as one int64 (8 bytes), then its bytes (none
 * when empty). "A vote" is one allreduce_int64 (MAX) of 6 int64 — stop requested, preemption noted,
 * rollback requested, recoverable error, other failure, a save due by the chief's clock (D17); an
 * event slot holds (world_size - rank) << 32 | status code, so MAX picks the lowest rank — followed,
 * only when some rank failed, must recover or asks for a rollback, by a string from the lowest such
 * rank (its message).
 *   1. Session creation (tw_monitored_session_create and the like), after begin on every hook:
 *      a. once per session, one allreduce_int64 (MAX) of 5 int64 that finds the chief, carries any
 *         rank's failure so far as an event slot (D1) — a failed registration of its variables (kept on
 *         its options, tw_options_add_variable), a failed begin — and checks that every rank or none
 *         declares sharded variables (else creation fails on every rank with TW_INVALID_ARGUMENT, D17);
 *         only when a rank failed, a string from the lowest such rank (its message), and creation fails
 *         on every rank with that status and "rank k of n: <its message>";
 *      b. the restore vote (D16): one `broadcast` from the chief of 2 int64 (its outcome as a
 *         tw_status, how many of its candidates its state file lists) and a string from the chief (its
 *         candidate checkpoints, one path per line, newest first; or its error message); then, for
 *         each candidate in turn until one is restored or refused, a vote (each rank first proves, without
 *         writing, every byte it would read of it). Then the chief initializes if nothing was restored,
 *         every rank meets in `barrier`, and one `broadcast` from the chief of 3 int64 (its outcome,
 *         its global_step, whether it restored a checkpoint) and a string from the chief (the
 *         checkpoint's path, or its error message) follow; every other rank checks it restored the
 *         chief's step (D2, D3) or initializes as the chief did. With TW_OPT_RESTORE_VIA_BROADCAST
 *         there is no restore vote: the chief restores (or initializes) as a single process does while
 *         every other rank waits in `barrier`, the same broadcasts follow, then a string from the chief
 *         (its variables' names and byte sizes) and one `broadcast` per variable of non-zero size
 *         (D13). Then after_create_session on every hook, and a vote of 8 int64 (the 6 above, then
 *         global_step and -global_step, so every rank learns the highest and lowest step, D3).
 *   2. The end of every run (or of every TW_OPT_VOTE_EVERY_N_RUNS-th run, and at once of a run that
 *      failed, must recover or ended the input): a vote, so that after run k every rank goes on to run
 *      k+1 or none does (D4–D10).
 *   3. Recovery (a recoverable status on any rank, agreed through 2): every rank re-creates its
 *      session, which repeats 1b (D8).
 *   4. A rollback of NanTensorHook with TW_NAN_ACTION_ROLLBACK (agreed through 2): 1b's exchanges,
 *      without initializing, then a vote of 8 int64 as at the end of 1b (D7).
 *   5. tw_session_close, after end on every hook: one `barrier`, so that no rank tears down while
 *      another still waits; skipped by a session that failed (D12).
 * A preemption adds no exchange: the vote carries it. tw_session_run_without_hooks makes none either
 * (it is one rank's work, D15). A collective operation that fails ends the call
 * that made it and fails the session (or ends the standalone saver's use of the collective): from then
 * on that session or saver makes no call to the table at all — not the end-of-run vote after a failed
 * sharded save, not a restore vote, not close's barrier, not the rounds of end's final save — and each
 * later operation fails at once with the first failure's status and message, which name the operation
 * that failed (D9). The other ranks are inside that same operation and fail in it, within one timeout.
 *   6. Every checkpoint save of a job with sharded variables (tw_options_add_shard), on every rank:
 *      one `allreduce_int64` (MAX) preparing it (an event slot: the chief could not prepare the
 *      directory, or a rank cannot save there), at the first save two more agreeing on the layout —
 *      or, when a rank could not prepare, instead a string from the lowest such rank (its message) and
 *      the save fails on every rank with "rank k of n: <its message>" —
 *      then, once this rank's part is written, one `allreduce_int64` (SUM, the vote) and one
 *      `allreduce_int64` (MAX) carrying the chief's commit outcome — or, when a rank could not write its
 *      part, instead a string from the lowest such rank (its message, which every rank's error quotes).
 *      MonitoredTrainingSession therefore adds CheckpointSaverHook on every rank of such a job (not only
 *      the chief's), and its saves are synchronous whatever TW_OPT_ASYNC_CHECKPOINT says: a background
 *      write would call the collective from another thread. Every rank must save at the same steps (the
 *      same checkpoint frequency).
 *      Each save of CheckpointSaverHook first makes one allreduce_int64 (MAX) of 1 int64 naming the
 *      lowest rank whose variables hold NaN or Inf, and every rank skips that save together (D17); with
 *      a period in seconds only the chief's clock counts, carried by the vote of 2 (D17).
 *      The preemption save (D10) is one of these saves, on every rank, after a string from the chief
 *      (the checkpoint prefix, empty for no save).
 *   7. tw_saver_create_from_options with a collective, on every rank: one allreduce_int64 (MAX) of 1
 *      int64, an event slot carrying a failed registration (D1); only when one failed, a string from
 *      the lowest such rank, and every rank's creation fails with "rank k of n: <its message>".
 * Nothing else calls it: a job pays one allreduce of a few int64 per voted run.
 */
typedef struct tw_collective {
  uint32_t struct_size;
  int32_t rank;
  int32_t world_size;
  tw_status (*allreduce_int64)(void *user_data, int64_t *values, size_t count, tw_reduce_op op, double timeout_secs);
  tw_status (*broadcast)(void *user_data, void *data, size_t size, int32_t root, double timeout_secs);
  tw_status (*barrier)(void *user_data, double timeout_secs);
  void (*destroy)(void *user_data);
} tw_collective;

#define TW_COLLECTIVE_SIZE_V1 TW_STRUCT_SIZE_THROUGH(tw_collective, destroy)
/* Initialiser of a single-rank table with no callbacks; fill in rank, world_size and the slots. */
#define TW_COLLECTIVE_INIT \
  { (uint32_t)sizeof(tw_collective), 0, 1, NULL, NULL, NULL, NULL }

/* Sets *collective to TW_COLLECTIVE_INIT (compiled into the caller). NULL is a no-op. */
static inline void tw_collective_init(tw_collective *collective) {
  const tw_collective init = TW_COLLECTIVE_INIT;
  if (collective != NULL) *collective = init;
}

/* Sets the collective every session created from these options uses (the table is copied). NULL
 * removes it: sessions then run alone, as without this call. user_data is passed to every slot;
 * collective->destroy(user_data) runs once, when the options and every session created from them no
 * longer need it (also when a later call replaces it).
 * Errors: TW_INVALID_ARGUMENT (opts NULL; struct_size smaller than the first version or larger than
 * this library knows with non-zero extra bytes; world_size < 1; rank outside [0, world_size);
 * allreduce_int64, broadcast or barrier NULL). On error destroy is not called and the options keep
 * what they had. */
TW_NODISCARD TW_API tw_status tw_options_set_collective(tw_options *opts, const tw_collective *collective,
                                                        void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* TW_EXPERIMENTAL_API */
