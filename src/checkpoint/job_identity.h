// The job identity of a checkpoint directory: which job's checkpoints are which (tf-semantics C19,
// docs/checkpoint-format.md, "Origin"). 128 random bits, created by the first save into a directory
// that has none, kept in the hidden file "<dir>/.trainwatch.job" (32 hex digits and a newline) and as a
// comment of the state file (state_file.h), and recorded in every checkpoint's origin (format.h). A
// saver finds by name, and retention deletes, only files whose origin names this identity and their
// own name (own_checkpoints.h): a checkpoint copied in from another run, or a user's copy under another
// name, is left alone.
//
// A restarted job (a new process, the same directory) is the same job; so is a whole run directory
// copied elsewhere with its hidden file. Deleting the state file keeps the identity (the hidden file);
// deleting both makes the directory's checkpoints nobody's: they are then restored only on purpose
// (an explicit path), never found by name or deleted.
#ifndef TRAINWATCH_CHECKPOINT_JOB_IDENTITY_H
#define TRAINWATCH_CHECKPOINT_JOB_IDENTITY_H

#include <string>

#include "base/status.h"
#include "checkpoint/format/format.h"

namespace tw {
namespace checkpoint {

constexpr char kJobFileName[] = ".trainwatch.job";

// 32 lowercase hex digits, and back (false for anything else).
std::string FormatJobId(const JobId &job);
bool ParseJobId(const std::string &hex, JobId *job);

// The identity of `dir`: its job file's, else the comment of its state file `latest_filename`; no job
// (all zero) when neither holds one. A job file that is not a regular file (a symbolic link, a FIFO) or
// does not hold an identity is not read (WARNING). Reads only: any process may call it.
JobId ReadJobIdentity(const std::string &dir, const std::string &latest_filename);

// The identity of `dir`, creating its job file when it has none: with the state file's identity when
// that has one (the job file was deleted), else 128 new random bits (getrandom). The file is written
// durably (a temporary file, fsync, rename, directory fsync). Only the holder of the directory's lock
// (dir_lock.h) may call it. Errors: TW_IO / TW_RESOURCE_EXHAUSTED (writing), TW_INTERNAL (no random bits).
Status EnsureJobIdentity(const std::string &dir, const std::string &latest_filename, JobId *job);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_JOB_IDENTITY_H
