// tf.train.Saver for trainwatch checkpoints (tf-semantics C1–C13): names checkpoints
// "<prefix>-<global_step>", keeps the `checkpoint` state file, deletes old checkpoints past
// max_to_keep while preserving one every keep_checkpoint_every_n_hours, and restores variables in
// place. Two fixes over TF1: the keep-every-N-hours clock is persisted in the state file
// (last_preserved_timestamp, as TF2's CheckpointManager does) so it survives restarts, and a list
// recovered from the state file is trimmed to max_to_keep at once.
//
// Only files provably the saver's own inside the checkpoint directory are ever deleted or found by
// name (own_checkpoints.h): paths read from the state file are hints, and a checkpoint is this job's
// only when its origin names the directory's job identity and its own name (job_identity.h, C19).
// Whoever writes a directory holds its lock (dir_lock.h) until ReleaseDirectoryLocks or destruction.
// An evicted checkpoint's files are unlinked, as TF deletes them; with SaverOptions::recycle_files they
// become spares that the next save overwrites in place instead (spare_files.h, C15), and releasing the
// lock deletes them.
//
// Thread rules: one thread at a time, except that Capture may run while WriteSnapshot of an earlier
// snapshot runs on another thread (the asynchronous saver's pattern) — for a saver without device
// variables: their staging buffers are the saver's, one set, so a saver with device variables stages
// (Capture, Borrow, a restore) only once the write reading them has finished, as AsyncSaver does.
#ifndef TRAINWATCH_CHECKPOINT_SAVER_H
#define TRAINWATCH_CHECKPOINT_SAVER_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "checkpoint/device_variables.h"
#include "checkpoint/file/writer.h"
#include "checkpoint/io/dir_lock.h"
#include "checkpoint/own_checkpoints.h"
#include "checkpoint/restore_failure.h"
#include "checkpoint/sharded/sharded_save.h"
#include "checkpoint/snapshot.h"
#include "checkpoint/state_file.h"

namespace tw {
namespace checkpoint {

class RestorePlan;

// global_step value meaning "none": the prefix is the checkpoint's path as-is (C1). TW_UNSET's value.
constexpr int64_t kNoGlobalStep = INT64_MIN;

struct SaverOptions {
  int64_t max_to_keep = 5;  // 0: nothing is tracked or deleted; the state file lists only the newest (C9)
  double keep_checkpoint_every_n_hours = 10000.0;  // C3's default: in effect never
  bool pad_step_number = false;                    // "model.ckpt-00001000" (C1)
  bool save_relative_paths = false;                // state file paths relative to its directory (C6)
  std::string latest_filename = kDefaultStateFileName;
  WriteOptions write;
  // Opt-in (C15): an evicted checkpoint's file is kept as a spare and overwritten in place by a later
  // save, which saves creating and freeing a file per save; a program still reading it without the
  // library's lock (cp, tar, rsync, a backup agent) then gets bytes of two checkpoints.
  bool recycle_files = false;
  std::function<double()> clock;  // seconds since the epoch; empty: the wall clock (tests inject one)
  // A job of many ranks (trainwatch/distributed.h): with a collective and sharded variables, every
  // rank's saver writes its part of each checkpoint and the chief commits it (sharded_save.h); only the
  // chief takes the directory's lock, writes the state file and deletes old checkpoints. Without shards
  // the collective is not used here: the chief saves the replicated variables alone.
  std::shared_ptr<const Collective> collective;
  // Variables holding one box of a global tensor: restores read that box, with a collective or not.
  std::map<std::string, ShardSpec> shards;
  bool chief = true;
  double collective_timeout_secs = 600.0;
  // What holds the directory's lock while this saver writes there, for a second writer's message
  // (dir_lock.h, C24): a session says what makes it save.
  std::string lock_holder = "a Saver";
};

// "<prefix>-<step>" (8-digit zero padding when `pad`), or `prefix` for kNoGlobalStep.
std::string CheckpointPath(const std::string &prefix, int64_t global_step, bool pad);

// C20: the TW_DATA_LOSS a restore ends with when every checkpoint of `dir` it tried was proven damaged
// (`damaged`: "<path>: <damage>" each), saying that none was touched and how to start over.
Status EveryCheckpointDamaged(const std::string &dir, const std::vector<std::string> &damaged);

class Saver {
 public:
  // `variables`: contiguous buffers with unique non-empty names, borrowed: they must outlive the
  // saver. A variable on a device (trainwatch/device.h) is saved from, and restored through, pinned
  // staging buffers the saver keeps (device_variables.h). Errors: TW_INVALID_ARGUMENT (names, latest_filename with a
  // '/', max_to_keep < 0, keep_checkpoint_every_n_hours <= 0).
  static Status Create(std::vector<TensorRef> variables, SaverOptions options, std::unique_ptr<Saver> *out);

  // Replaces the options (same checks as Create); the kept list and retention clock carry over.
  Status SetOptions(SaverOptions options);
  const SaverOptions &options() const { return options_; }

  // Saves the variables as they are now: Borrow, then WriteSnapshot. *path receives
  // the checkpoint's path, "" for a saver without variables (TF returns None and writes nothing).
  // The first save into a directory takes its lock (TW_FAILED_PRECONDITION when another holds it).
  Status Save(const std::string &prefix, int64_t global_step, std::string *path);

  // The halves of Save for an asynchronous saver: Capture copies the variables into `snapshot`
  // (reusing its buffers); WriteSnapshot writes it durably, records it in the state file and applies
  // retention. Errors of WriteSnapshot (C4/C6): TW_INVALID_ARGUMENT (prefix collides with the state
  // file), TW_NOT_FOUND ("Parent directory of <path> doesn't exist, can't save."), TW_IO /
  // TW_RESOURCE_EXHAUSTED (write, fsync or rename failed: the previous checkpoints and state file are
  // untouched and the failed one is not recorded; when only the state-file update failed, the new
  // checkpoint file is removed so that it is never left unlisted), TW_FAILED_PRECONDITION (the
  // directory's lock is held elsewhere), TW_INVALID_ARGUMENT (without a collective, a shard that is not
  // its whole global tensor: CheckSavesWholeTensors). Before writing, it removes the checkpoint an
  // earlier save that was cut short (killed) after writing it left unlisted in the state file
  // (SettleSavingNote), unless this saver restored from it.
  // Capture's failure (a device variable's copy to the host; the status names the operation and the
  // tensor) is also kept in the snapshot, which WriteSnapshot then refuses, writing nothing (and, in a
  // sharded save, failing every rank's save through its vote).
  Status Capture(Snapshot *snapshot);
  // The variables themselves, for a synchronous write: host variables borrowed, device variables
  // staged (copied to the host and waited for) as Capture does.
  Status Borrow(Snapshot *snapshot);
  // `threads` > 0 overrides options().write.threads (an asynchronous write uses one core, so that it
  // slows the training step it overlaps by at most that core).
  Status WriteSnapshot(const Snapshot &snapshot, const std::string &prefix, int64_t global_step, std::string *path,
                       int threads = 0);

  // Restores the named variables (all when `names` is empty) from the checkpoint at `path`, all or
  // nothing: every name, dtype, shape and checksum is checked before the first byte is written. A
  // device variable is decoded into its staging buffer on the host, then copied to the device (waited
  // for). A copy to the device that fails ends the restore with the device's status (never taken as
  // damage of the file): the host variables then hold the checkpoint's values and each device variable
  // its old or its new values, undefined which — restore again before using them. The
  // checkpoint may be sharded (its index and parts) or a single file: a variable the options declare a
  // shard reads only its box, whatever slicing wrote it — with or without a collective, which a restore
  // never calls; any other reads its whole tensor (restore_plan.h).
  // Errors: TW_NOT_FOUND (file; "Key <name> not found in checkpoint <path>"; a name that is not a
  // variable of this saver), TW_INVALID_ARGUMENT (dtype/shape mismatch naming the variable),
  // TW_DATA_LOSS (corrupt file, naming it and the tensor), TW_IO, TW_RESOURCE_EXHAUSTED (out of
  // memory, the file cannot be mapped, no descriptor left).
  Status Restore(const std::string &path, const std::vector<std::string> &names = {});

  // The halves of a restore that the ranks of a job agree on between them (session/restore_vote.cc, D16):
  // PrepareRestore opens the checkpoint at `path` as RestoreFrom does, checks every variable and
  // proves every byte this rank would read (only its rows of a shard), writing nothing; *failure and
  // the errors as RestoreFrom's. FinishRestore then writes the variables.
  Status PrepareRestore(const std::string &path, const std::vector<std::string> &optional,
                        std::vector<std::string> *missing, RestoreFailure *failure, std::unique_ptr<RestorePlan> *plan);
  Status FinishRestore(const RestorePlan &plan);
  // What RestoreNewestGood tries, in its order (the state file's entries, newest first, then the
  // saver's own checkpoints found in `dir` by name); *listed: how many come from the state file.
  // Errors: those of scanning `dir`.
  Status RestoreCandidates(const std::string &dir, std::vector<std::string> *candidates, size_t *listed);

  // Restores from the newest intact checkpoint of `dir`: those its state file lists (newest first),
  // then the saver's own checkpoints found in `dir` by name (own_checkpoints.h; newest step first), so a
  // missing or damaged state file (WARNING naming the damage) never costs a checkpoint. C20: a
  // candidate is skipped, with a WARNING naming it, only on proof that it is unusable
  // (restore_failure.h): missing, not a regular file (FIFO, directory, device: refused at once), a name
  // too long, or damaged (TW_DATA_LOSS: corrupt, truncated, a part missing). Any other failure ends the
  // restore with that status, the message naming the checkpoint: TW_RESOURCE_EXHAUSTED (out of
  // memory, the file cannot be mapped under RLIMIT_AS, no descriptor left), TW_IO,
  // TW_PERMISSION_DENIED, TW_INTERNAL — a restore that could not read a checkpoint never counts it
  // as damaged, so the caller never starts over on top of it; nor does a state file that could not be
  // read for lack of memory or descriptors count as damaged (TW_RESOURCE_EXHAUSTED).
  // Variables named in `optional` may be absent from a checkpoint: they are left as they are and
  // listed in *missing (a standalone Saver's checkpoint has no global_step). *path receives the
  // checkpoint restored, or the one that ended the restore (else it is left empty). Errors:
  // TW_DATA_LOSS when candidates were tried and each present one proved damaged
  // (EveryCheckpointDamaged: nothing to start over on top of); TW_NOT_FOUND when there is no candidate
  // (*path empty: none listed or found, or all gone), or when a listed checkpoint lacks a variable
  // ("Key <name> not found in checkpoint <path>", as TF: starting afresh would let retention delete
  // the checkpoints of the model as it was); TW_INVALID_ARGUMENT when a listed checkpoint does not fit
  // the variables (dtype/shape); the failures above. A checkpoint found only by name that does not fit
  // or lacks a variable is skipped (it may be another model's). Reads only: takes no lock.
  Status RestoreNewestGood(const std::string &dir, std::string *path, const std::vector<std::string> &optional = {},
                           std::vector<std::string> *missing = nullptr);

  // Takes `dir`'s lock, then re-seeds the kept list and the retention clock from `dir`'s state file
  // (C12; timestamps from the file, else file mtimes; vanished files dropped), removes stale temporary
  // files, then trims the list to max_to_keep (deleting or preserving the extras, never the checkpoint
  // this saver last restored) and rewrites the state file if it changed. When the state file is
  // missing, damaged or names no existing checkpoint, the list is rebuilt from the checkpoints found in
  // `dir` by name and the state file rewritten from it (WARNING naming the damage; nothing deleted).
  // Errors: TW_FAILED_PRECONDITION (the lock is held elsewhere), TW_IO, TW_RESOURCE_EXHAUSTED.
  Status RecoverLastCheckpoints(const std::string &dir);

  // Takes `dir`'s advisory lock (dir_lock.h) unless this saver holds it already; a missing directory
  // is not locked. TW_FAILED_PRECONDITION when another saver or process holds it.
  Status LockDirectory(const std::string &dir);
  // Releases every directory lock (a session does at close).
  void ReleaseDirectoryLocks();
  // SaverOptions::lock_holder, for the locks taken from now on.
  void set_lock_holder(std::string holder) { options_.lock_holder = std::move(holder); }

  // Takes `checkpoint` (a path this saver wrote, known bad: a NaN rollback's, B48) off the kept list
  // and the state file — removed when nothing else is listed — then deletes it, whatever
  // keep_checkpoint_every_n_hours would have kept. A path not on the kept list is ignored, except with
  // max_to_keep 0 (C9: nothing kept, the state file names the newest save): the state file is removed
  // and the checkpoint deleted. Errors: those of writing or removing the state file (nothing deleted).
  Status Discard(const std::string &checkpoint);

  // Kept checkpoints, oldest → newest, as the state file lists them.
  std::vector<std::string> last_checkpoints() const;
  size_t last_checkpoint_count() const { return kept_.size(); }
  const std::vector<TensorRef> &variables() const { return variables_; }
  // The staging of the device variables (also what a restore via broadcast sends from and receives into).
  DeviceVariables &device_variables() { return *device_; }

 private:
  struct Kept {
    std::string path;
    double timestamp;
  };

  Saver(std::vector<TensorRef> variables, SaverOptions options);
  double Now() const;
  std::string StatePath(const std::string &path) const;
  Status CheckSavePath(const std::string &prefix, int64_t global_step, const std::string &path) const;
  Status CleanOnce(const std::string &dir);
  // The job identity of `dir` (job_identity.h): the one this saver prepared it with, else as the
  // directory holds it (no job when it holds none).
  JobId JobOf(const std::string &dir) const;
  // ScanOwnCheckpoints for this saver's job, with a WARNING once per file (per saver) for each
  // trainwatch checkpoint that is not this job's (C19).
  Status FindOwnCheckpoints(const std::string &dir, std::vector<FoundCheckpoint> *found);
  // Before a save of `checkpoint` into `dir` (the chief's): the directory's lock, CleanOnce, the
  // removal of a checkpoint an interrupted save left unlisted, and this save's note (own_checkpoints.h).
  Status PrepareSave(const std::string &dir, const std::string &checkpoint);
  // Records a checkpoint just written in the kept list and the state file, applying retention.
  Status RecordSaved(const std::string &dir, const std::string &checkpoint);
  // RecordSaved, removing the new checkpoint when its state-file update failed; *path on success.
  Status RecordOrRemove(const std::string &dir, const std::string &checkpoint, std::string *path);
  // Without a collective a shard that is not its whole global tensor cannot be saved (one process
  // holds only part of it): TW_INVALID_ARGUMENT naming it, before anything is written.
  Status CheckSavesWholeTensors() const;
  // WriteSnapshot in a job of many ranks (sharded_save.h). `checked` is CheckSavePath's verdict on
  // this rank: a rank that cannot save there still makes the save's collective calls, failing them.
  Status WriteSharded(const Snapshot &snapshot, const std::string &dir, const std::string &checkpoint,
                      std::string *path, int threads, const Status &checked);
  // Threads for a save or restore: options().write.threads, or in a sharded job this rank's share of
  // its machine's cores (0: every core).
  int Threads() const;
  Status ReseedFromDirectory(const std::string &dir, const Status &state_damage);
  // Restore with the candidate's verdict in *failure (restore_failure.h): kNone when restored; kMisfit
  // when the file was read and does not fit the variables or a name is not one of them; otherwise what
  // the failure proves about the file.
  Status RestoreFrom(const std::string &path, const std::vector<std::string> &names,
                     const std::vector<std::string> &optional, std::vector<std::string> *missing,
                     RestoreFailure *failure);
  // Opens and proves `path` for the selected variables (RestoreFrom's first half).
  Status PlanRestore(const std::string &path, const std::vector<const TensorRef *> &selected,
                     const std::vector<std::string> &optional, std::vector<std::string> *missing,
                     RestoreFailure *failure, std::unique_ptr<RestorePlan> *plan);
  // The state file's entries, newest first (RestoreNewestGood's first candidates); a damaged state
  // file is logged and lists none. TW_RESOURCE_EXHAUSTED when it could not be read for lack of memory
  // or descriptors (C20).
  Status ListedCandidates(const std::string &dir, std::vector<std::string> *out);
  // Saves by shard: a collective and shards (WriteSnapshot's condition). Restores read a shard's box
  // with a collective or without.
  bool sharded() const { return options_.collective != nullptr && !options_.shards.empty(); }
  // Writes the state file for `kept` (newest last), then deletes the evicted checkpoints that are not
  // preserved (DeleteDoomed; in a sharded save once every rank heard the outcome). The saver's own
  // list and clock change only if the state file was written.
  Status CommitRetention(const std::string &dir, std::vector<Kept> kept, std::vector<Kept> evicted);
  // Writes the state file of `dir` listing `kept` (not empty, newest last).
  Status WriteState(const std::string &dir, const std::vector<Kept> &kept, double last_preserved);
  // Deletes the checkpoints CommitRetention evicted (unless defer_deletions_ kept them for later), then
  // settles the chief's saving note.
  void DeleteDoomed(const std::string &dir);

  std::vector<TensorRef> variables_;
  std::unique_ptr<DeviceVariables> device_;  // over variables_, never reallocated
  SaverOptions options_;
  std::vector<Kept> kept_;
  double last_preserved_timestamp_;
  std::set<std::string> cleaned_dirs_;
  std::map<std::string, JobId> jobs_;         // of the directories this saver prepared for saving
  std::set<std::string> reported_not_owned_;  // checkpoints found not to be this job's, logged once
  std::string last_restored_;                 // never evicted by RecoverLastCheckpoints
  std::vector<std::unique_ptr<DirectoryLock>> locks_;
  WriteBuffers write_buffers_;                 // reused from save to save
  std::unique_ptr<ShardLayout> shard_layout_;  // agreed by the ranks at the first sharded save
  std::vector<std::string> doomed_;            // evicted, to delete once the save's outcome is out
  bool defer_deletions_ = false;               // inside a sharded save's commit
  std::string committed_dir_;                  // of this saver's last sharded save, if it committed
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_SAVER_H
