// The `checkpoint` state file: TensorFlow's CheckpointState protocol buffer in text format, so TF
// tools (tf.train.latest_checkpoint, get_checkpoint_state, TensorBoard) read trainwatch directories
// and trainwatch reads theirs (tf-semantics C5–C8):
//
//   model_checkpoint_path: "model.ckpt-3"
//   all_model_checkpoint_paths: "model.ckpt-1"         (oldest → newest; the last one is the newest)
//   all_model_checkpoint_paths: "model.ckpt-3"
//   all_model_checkpoint_timestamps: 1700000000.5      (fields 3 and 4, as TF2's CheckpointManager
//   all_model_checkpoint_timestamps: 1700003600.25      writes them: they carry the retention clock
//   last_preserved_timestamp: 1699990000.0              across restarts)
//
// A trainwatch saver also writes its directory's job identity (job_identity.h) as a first comment line,
// "# trainwatch-job: <32 hex digits>", which TF's text-format parser skips.
#ifndef TRAINWATCH_CHECKPOINT_STATE_FILE_H
#define TRAINWATCH_CHECKPOINT_STATE_FILE_H

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tw {
namespace checkpoint {

constexpr char kDefaultStateFileName[] = "checkpoint";
// A state file larger than this is refused (TF's are a few hundred bytes; the cap keeps a planted
// huge file from being read into memory).
constexpr uint64_t kMaxStateFileBytes = uint64_t{1} << 20;

struct CheckpointState {
  std::string model_checkpoint_path;
  std::vector<std::string> all_model_checkpoint_paths;
  std::vector<double> all_model_checkpoint_timestamps;  // empty, or one per path (seconds since epoch)
  bool has_last_preserved_timestamp = false;
  double last_preserved_timestamp = 0;
  std::string job_identity;  // from the "# trainwatch-job: " comment; empty when absent
};
constexpr char kJobIdentityComment[] = "# trainwatch-job: ";

// Text format, fields in field-number order, strings C-escaped as protobuf's text format does.
std::string FormatCheckpointState(const CheckpointState &state);
// Accepts what protobuf's text parser accepts for this message: fields in any order, '#' comments,
// single or double quotes. TW_INVALID_ARGUMENT naming the line on anything else. A comment line that is
// exactly kJobIdentityComment and 32 lowercase hex digits sets job_identity (the first such line).
Status ParseCheckpointState(const std::string &text, CheckpointState *state);

// Replaces <dir>/<filename> atomically and durably.
Status WriteCheckpointState(const std::string &dir, const std::string &filename, const CheckpointState &state);

// get_checkpoint_state (C7): *found = false when the file is missing, or unreadable, not a regular
// file (a FIFO is refused without blocking), over kMaxStateFileBytes or unparsable (two WARNING lines:
// "<Type>: <error>", "<file>: Checkpoint ignored"). Relative paths are joined onto
// `dir`. A parsed state with an empty model_checkpoint_path fails with TW_INVALID_ARGUMENT
// "Invalid checkpoint state loaded from <dir>".
Status ReadCheckpointState(const std::string &dir, const std::string &filename, CheckpointState *state, bool *found);

// The state file for a saver that treats it as a hint: OK with *state (relative paths joined onto
// `dir`); TW_NOT_FOUND when it is missing; any other status describes the damage (unreadable, not a
// regular file, too large, unparsable, no model_checkpoint_path). Logs nothing.
Status LoadCheckpointState(const std::string &dir, const std::string &filename, CheckpointState *state);

// latest_checkpoint (C8): the newest checkpoint's path, or "" when there is none or its file is gone
// (ERROR "Couldn't match files for checkpoint <path>"). Errors only as ReadCheckpointState.
Status LatestCheckpoint(const std::string &dir, std::string *path, const std::string &filename = kDefaultStateFileName);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_STATE_FILE_H
