// Why a checkpoint could not be restored, and what a restore that tries several (the newest intact
// one, tf-semantics C20) may do about it. Only proof that the file is unusable lets a restore skip a
// checkpoint and try an older one: a failure for lack of memory, address space or descriptors, or an
// I/O error, says nothing about the file, and skipping would let the job start over and its saves
// overwrite intact checkpoints. Shared by the single process (Saver::RestoreNewestGood) and the ranks
// of a job (the restore vote, D16), so both decide alike.
#ifndef TRAINWATCH_CHECKPOINT_RESTORE_FAILURE_H
#define TRAINWATCH_CHECKPOINT_RESTORE_FAILURE_H

#include <string>

#include "base/status.h"

namespace tw {
namespace checkpoint {

enum class RestoreFailure {
  kNone,      // restored (or proven, for a restore in two halves)
  kMisfit,    // the checkpoint was read and does not fit the variables: a dtype or shape that differs
              // (TW_INVALID_ARGUMENT), a variable it lacks (TW_NOT_FOUND "Key <name> not found ...")
  kAbsent,    // the path names no checkpoint file: it does not exist, was deleted while being opened,
              // cannot exist (a name too long) — TW_NOT_FOUND — or is not a regular file
              // (TW_INVALID_ARGUMENT from base/regular_file.h: a directory, FIFO, device)
  kDamaged,   // proven damaged: TW_DATA_LOSS, what the reader reports for a bad header, index or footer,
              // a checksum mismatch, a truncated file, a chunk that does not decode, or a part of a
              // sharded checkpoint missing, damaged or not the one its index pinned
  kUnproven,  // anything else (TW_RESOURCE_EXHAUSTED: out of memory, mmap refused under RLIMIT_AS, no
              // descriptor left; TW_IO; TW_PERMISSION_DENIED; TW_INTERNAL): no proof about the file
};

// The failure `status` of opening, planning or proving one checkpoint, as RestorePlan reports it;
// `misfit` is RestorePlan::Open's verdict that the file was read and the failure is the caller's.
RestoreFailure ClassifyRestoreFailure(const Status &status, bool misfit);

// Whether a restore trying several checkpoints may go on to an older one after `failure`. A misfit is
// skippable only for a checkpoint found by name (it may be another model's); the caller decides that.
inline bool ProvesFileUnusable(RestoreFailure failure) {
  return failure == RestoreFailure::kAbsent || failure == RestoreFailure::kDamaged;
}

// `status` (a kUnproven failure of restoring `path`) with a message saying that it ended the restore:
// "cannot restore checkpoint <path> (not a sign of damage: nothing was skipped, deleted or written):
// <cause>".
Status UnprovenFailure(const std::string &path, const Status &status);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_RESTORE_FAILURE_H
