#include "checkpoint/saver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <new>
#include <unordered_map>
#include <unordered_set>

#include "base/log.h"
#include "checkpoint/file/reader.h"
#include "checkpoint/io/dir_lock.h"
#include "checkpoint/io/durable_file.h"
#include "checkpoint/io/parallel.h"
#include "checkpoint/io/path.h"
#include "checkpoint/io/spare_files.h"
#include "checkpoint/job_identity.h"
#include "checkpoint/own_checkpoints.h"
#include "checkpoint/restore_failure.h"
#include "checkpoint/restore_plan.h"
#include "distributed/shared_failure.h"

namespace tw {
namespace checkpoint {
namespace {

std::string DirectoryOf(const std::string &path) {
  const std::string dir = Dirname(path);
  return dir.empty() ? "." : dir;
}

double ModificationTime(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9;
}

// A restore's allocation that fails is a resource failure, never damage of the checkpoint (C20): the
// exception becomes TW_RESOURCE_EXHAUSTED here, where the restore decides what to skip (the reader's
// worker threads turn theirs into the same status, parallel.h).
template <typename Body>
Status CatchingOutOfMemory(const std::string &path, const Body &body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return Status(TW_RESOURCE_EXHAUSTED, "restoring checkpoint " + path + ": out of memory");
  }
}

}  // namespace

std::string CheckpointPath(const std::string &prefix, int64_t global_step, bool pad) {
  if (global_step == kNoGlobalStep) return prefix;
  char step[32];
  std::snprintf(step, sizeof(step), pad ? "%08" PRId64 : "%" PRId64, global_step);
  return prefix + "-" + step;
}

Saver::Saver(std::vector<TensorRef> variables, SaverOptions options)
    : variables_(std::move(variables)), device_(new DeviceVariables(variables_)), options_(std::move(options)) {
  last_preserved_timestamp_ = Now();  // C13: the clock starts when the saver is built, unless recovered
}

namespace {

Status CheckOptions(const SaverOptions &options) {
  if (options.max_to_keep < 0) {
    return Errorf(TW_INVALID_ARGUMENT, "max_to_keep must be >= 0, got %" PRId64, options.max_to_keep);
  }
  if (!(options.keep_checkpoint_every_n_hours > 0)) {
    return Errorf(TW_INVALID_ARGUMENT, "keep_checkpoint_every_n_hours must be > 0, got %g",
                  options.keep_checkpoint_every_n_hours);
  }
  if (options.latest_filename.empty() || options.latest_filename.find('/') != std::string::npos) {
    return Status(TW_INVALID_ARGUMENT, "'latest_filename' must not contain path components");
  }
  return Status();
}

}  // namespace

Status Saver::SetOptions(SaverOptions options) {
  TW_RETURN_IF_ERROR(CheckOptions(options));
  options_ = std::move(options);
  return Status();
}

Status Saver::Create(std::vector<TensorRef> variables, SaverOptions options, std::unique_ptr<Saver> *out) {
  TW_RETURN_IF_ERROR(CheckOptions(options));
  std::unordered_set<std::string> names;
  for (const TensorRef &v : variables) {
    if (v.name().empty()) return Status(TW_INVALID_ARGUMENT, "a variable to save has an empty name");
    if (!names.insert(v.name()).second) {
      return Status(TW_INVALID_ARGUMENT, "two variables to save are named '" + v.name() + "'");
    }
  }
  out->reset(new Saver(std::move(variables), std::move(options)));
  return Status();
}

double Saver::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// C6: as produced (absolute stays absolute); a relative path, or any with save_relative_paths, is
// recorded relative to the state file's directory, which is the checkpoint's own directory.
std::string Saver::StatePath(const std::string &path) const {
  return options_.save_relative_paths || !IsAbsolutePath(path) ? Basename(path) : path;
}

Status Saver::CheckSavePath(const std::string &prefix, int64_t global_step, const std::string &path) const {
  if (global_step == kNoGlobalStep && Basename(prefix) == options_.latest_filename) {
    return Status(TW_INVALID_ARGUMENT, "'latest_filename' collides with 'save_path': '" + options_.latest_filename +
                                           "' and '" + prefix + "'");
  }
  if (!IsDirectory(DirectoryOf(path))) {
    return Status(TW_NOT_FOUND, "Parent directory of " + path + " doesn't exist, can't save.");
  }
  if (Basename(path) == options_.latest_filename) {
    return Status(TW_INVALID_ARGUMENT, "Save path '" + path +
                                           "' conflicts with path used for checkpoint state.  Please use a "
                                           "different save path.");
  }
  return Status();
}

Status Saver::PrepareSave(const std::string &dir, const std::string &checkpoint) {
  TW_RETURN_IF_ERROR(LockDirectory(dir));
  TW_RETURN_IF_ERROR(CleanOnce(dir));
  // The directory's job identity, recorded in every checkpoint saved there (job_identity.h, C19).
  if (jobs_.count(dir) == 0) {
    JobId job{};
    TW_RETURN_IF_ERROR(EnsureJobIdentity(dir, options_.latest_filename, &job));
    jobs_[dir] = job;
  }
  // A checkpoint an interrupted save left complete but unlisted goes now, after any restore (which may
  // have needed it) and before this save writes anything (own_checkpoints.h).
  SettleSavingNote(dir, options_.latest_filename, last_restored_, /*remove_unlisted=*/true, JobOf(dir));
  NoteSaving(checkpoint, options_.latest_filename);
  return Status();
}

JobId Saver::JobOf(const std::string &dir) const {
  const auto it = jobs_.find(dir);
  return it != jobs_.end() ? it->second : ReadJobIdentity(dir, options_.latest_filename);
}

Status Saver::FindOwnCheckpoints(const std::string &dir, std::vector<FoundCheckpoint> *found) {
  std::vector<NotOwned> not_owned;
  TW_RETURN_IF_ERROR(ScanOwnCheckpoints(dir, JobOf(dir), found, &not_owned));
  for (const NotOwned &file : not_owned) {
    if (reported_not_owned_.insert(file.path).second) {
      Log(TW_LOG_WARNING, "Leaving %s alone: %s", file.path.c_str(), file.why.c_str());
    }
  }
  return Status();
}

Status Saver::CleanOnce(const std::string &dir) {
  if (cleaned_dirs_.count(dir) != 0) return Status();
  TW_RETURN_IF_ERROR(RemoveStaleTemporaryFiles(dir, nullptr));
  TW_RETURN_IF_ERROR(RemoveOrphanParts(dir, nullptr));
  cleaned_dirs_.insert(dir);
  return Status();
}

Status Saver::Capture(Snapshot *snapshot) { return snapshot->Capture(variables_, device_.get()); }

Status Saver::Borrow(Snapshot *snapshot) { return snapshot->Borrow(variables_, device_.get()); }

Status Saver::Save(const std::string &prefix, int64_t global_step, std::string *path) {
  Snapshot live;
  (void)Borrow(&live);  // a failure stays in the snapshot, which WriteSnapshot refuses
  return WriteSnapshot(live, prefix, global_step, path);
}

Status Saver::WriteSnapshot(const Snapshot &snapshot, const std::string &prefix, int64_t global_step, std::string *path,
                            int threads) {
  if (snapshot.status().ok() && snapshot.tensors().empty()) {  // C4: an empty saver saves nothing
    path->clear();
    return Status();
  }
  TW_RETURN_IF_ERROR(CheckSavesWholeTensors());
  const std::string checkpoint = CheckpointPath(prefix, global_step, options_.pad_step_number);
  // A snapshot whose device variables could not be staged is never written; in a sharded save this
  // rank still takes part in the save's votes, failing them.
  const Status checked =
      snapshot.status().ok()
          ? CheckSavePath(prefix, global_step, checkpoint)
          : snapshot.status().WithPrefix(sharded() ? "" : "Saving checkpoint " + checkpoint + " failed: ");
  const std::string dir = DirectoryOf(checkpoint);
  // Sharded variables need every rank's part; replicated ones the chief writes alone (a job's other
  // ranks do not save them).
  if (sharded()) return WriteSharded(snapshot, dir, checkpoint, path, threads, checked);
  TW_RETURN_IF_ERROR(checked);
  TW_RETURN_IF_ERROR(PrepareSave(dir, checkpoint));
  WriteOptions write = options_.write;
  if (threads > 0) write.threads = threads;
  // An evicted checkpoint's file, overwritten in place, only when recycling was asked for (C15).
  write.spare_slot = options_.recycle_files ? 0 : kNoSpareSlot;
  write.job = JobOf(dir);
  TW_RETURN_IF_ERROR(WriteCheckpoint(checkpoint, snapshot.tensors(), write, &write_buffers_)
                         .WithPrefix("Saving checkpoint " + checkpoint + " failed: "));
  return RecordOrRemove(dir, checkpoint, path);
}

Status Saver::CheckSavesWholeTensors() const {
  if (options_.collective != nullptr) return Status();
  // Alone, a box of a tensor would be saved under the tensor's name as if it were all of it.
  for (const TensorRef &v : variables_) {
    const auto shard = options_.shards.find(v.name());
    if (shard == options_.shards.end()) continue;
    const ShardSpec &spec = shard->second;
    if (v.shape() == spec.global_shape) continue;  // its offsets are then 0: the whole tensor
    return Status(TW_INVALID_ARGUMENT, "variable '" + v.name() +
                                           "' holds only a box of its global tensor: saving it needs the job's "
                                           "collective (tw_options_set_collective), every rank writing its part");
  }
  return Status();
}

Status Saver::WriteSharded(const Snapshot &snapshot, const std::string &dir, const std::string &checkpoint,
                           std::string *path, int threads, const Status &checked) {
  // Every rank reaches the same collective calls whatever fails locally: a rank that returned early
  // would leave the others waiting in the vote.
  const Collective &collective = *options_.collective;
  const double timeout = options_.collective_timeout_secs;
  // The chief's preparation (the directory's lock, its first cleaning, the saving note) must end
  // before any rank writes a part — one round more, or on a saver's first save the layout's first
  // round — unless the previous save of this saver committed into the same directory: the lock is then
  // held and the directory cleaned, and what preparing does then (settling the note) goes into the
  // vote. Every rank knows that outcome alike.
  const bool prepared_before = shard_layout_ != nullptr && committed_dir_ == dir;
  committed_dir_.clear();
  if (!prepared_before) {
    Status prepared = checked;
    if (prepared.ok() && options_.chief) prepared = PrepareSave(dir, checkpoint);
    // A failure slot (distributed/shared_failure.h): every rank learns which rank could not prepare or
    // save there, and why.
    int64_t job_prepared = FailureSlot(collective, prepared);
    const std::string preparing = "preparing checkpoint " + checkpoint;
    if (shard_layout_ == nullptr) {  // the first save: the outcome travels with the layout's first round
      auto layout = std::make_unique<ShardLayout>();
      TW_RETURN_IF_ERROR(AgreeShardLayout(variables_, options_.shards, collective, timeout, options_.chief,
                                          &job_prepared, layout.get()));
      if (job_prepared == 0) shard_layout_ = std::move(layout);
    } else {
      std::vector<int64_t> ready = {job_prepared};
      TW_RETURN_IF_ERROR(collective.Allreduce(&ready, TW_REDUCE_MAX, timeout, preparing));
      job_prepared = ready[0];
    }
    Status failure;
    TW_RETURN_IF_ERROR(ShareFailure(collective, timeout, job_prepared, prepared.message(), preparing, &failure));
    if (!failure.ok()) return failure.WithPrefix("checkpoint " + checkpoint + " not saved: ");
  }
  ShardedSave save{shard_layout_.get(), &collective, timeout, options_.chief, nullptr, checked};
  if (prepared_before) save.prepare = [&] { return PrepareSave(dir, checkpoint); };
  WriteOptions write = options_.write;
  write.threads = threads > 0 ? threads : Threads();
  // The part index: the chief keeps evicted part p as spare p when recycling was asked for (C15).
  write.spare_slot = options_.recycle_files ? collective.rank() : kNoSpareSlot;
  // The index's origin (C19): the chief has prepared the directory, so its identity exists.
  if (options_.chief) write.job = JobOf(dir);
  std::string recorded_path;
  // The evicted checkpoints go once every rank has heard the outcome (the state file no longer names them).
  defer_deletions_ = true;
  const Status saved = WriteShardedCheckpoint(save, checkpoint, snapshot.tensors(), write, &write_buffers_,
                                              [&] { return RecordOrRemove(dir, checkpoint, &recorded_path); });
  defer_deletions_ = false;
  if (saved.ok() && options_.chief) {
    // The parts of an earlier save of this name with another number of parts (own_checkpoints.h).
    std::vector<std::string> listed;
    for (const std::string &part : PartPaths(checkpoint, shard_layout_->part_count)) listed.push_back(Basename(part));
    RemoveReplacedParts(checkpoint, listed);
  }
  DeleteDoomed(dir);
  TW_RETURN_IF_ERROR(saved);
  committed_dir_ = dir;
  *path = checkpoint;
  return Status();
}

int Saver::Threads() const {
  if (options_.write.threads > 0 || !sharded()) return options_.write.threads;
  // The ranks of a job sharing a machine save and restore at the same time: each takes its share of the
  // cores. How many share it is known once the layout is agreed (the first save), else from the launcher.
  return ThreadsForLocalRanks(shard_layout_ != nullptr ? shard_layout_->local_ranks : LocalRanksFromEnvironment());
}

Status Saver::RecordOrRemove(const std::string &dir, const std::string &checkpoint, std::string *path) {
  const Status recorded = RecordSaved(dir, checkpoint);
  if (!recorded.ok()) {
    // The state file does not name the new file: an orphan no later retention would ever delete. It
    // goes, unless the old state file lists this very path (a re-save of the same step).
    bool listed = false;
    for (const Kept &k : kept_) listed = listed || k.path == checkpoint;
    if (!listed && ::unlink(checkpoint.c_str()) == 0) {
      Log(TW_LOG_WARNING, "Removed %s: its state-file update failed", checkpoint.c_str());
    }
    return recorded;
  }
  *path = checkpoint;
  return Status();
}

Status Saver::RecordSaved(const std::string &dir, const std::string &checkpoint) {
  const double now = Now();
  if (options_.max_to_keep == 0) {  // C9: nothing tracked; the state file names only the newest
    TW_RETURN_IF_ERROR(CommitRetention(dir, {Kept{checkpoint, now}}, {}));
    kept_.clear();
  } else {
    std::vector<Kept> kept;
    for (const Kept &k : kept_) {
      if (k.path != checkpoint) kept.push_back(k);
    }
    kept.push_back(Kept{checkpoint, now});
    const size_t excess = kept.size() > static_cast<size_t>(options_.max_to_keep)
                              ? kept.size() - static_cast<size_t>(options_.max_to_keep)
                              : 0;
    std::vector<Kept> evicted(kept.begin(), kept.begin() + static_cast<ptrdiff_t>(excess));
    kept.erase(kept.begin(), kept.begin() + static_cast<ptrdiff_t>(excess));
    TW_RETURN_IF_ERROR(CommitRetention(dir, std::move(kept), std::move(evicted)));
  }
  return Status();
}

Status Saver::CommitRetention(const std::string &dir, std::vector<Kept> kept, std::vector<Kept> evicted) {
  // C10/C13: a checkpoint leaving the list is kept forever when it is at least N hours newer than the
  // last one kept that way.
  double last_preserved = last_preserved_timestamp_;
  std::vector<std::string> doomed;
  for (const Kept &e : evicted) {
    if (e.timestamp - options_.keep_checkpoint_every_n_hours * 3600.0 >= last_preserved) {
      last_preserved = e.timestamp;
      Log(TW_LOG_INFO, "Keeping %s for good (keep_checkpoint_every_n_hours=%g)", e.path.c_str(),
          options_.keep_checkpoint_every_n_hours);
    } else {
      doomed.push_back(e.path);
    }
  }
  // Cut short between the state file and the deletions, the next save deletes them (own_checkpoints.h).
  if (options_.chief) NoteDoomed(dir, options_.latest_filename, doomed);
  if (!kept.empty()) TW_RETURN_IF_ERROR(WriteState(dir, kept, last_preserved));
  kept_ = std::move(kept);
  last_preserved_timestamp_ = last_preserved;
  doomed_.insert(doomed_.end(), doomed.begin(), doomed.end());
  if (!defer_deletions_) DeleteDoomed(dir);
  return Status();
}

Status Saver::WriteState(const std::string &dir, const std::vector<Kept> &kept, double last_preserved) {
  CheckpointState state;
  state.model_checkpoint_path = StatePath(kept.back().path);
  for (const Kept &k : kept) {
    state.all_model_checkpoint_paths.push_back(StatePath(k.path));
    state.all_model_checkpoint_timestamps.push_back(k.timestamp);
  }
  state.has_last_preserved_timestamp = true;
  state.last_preserved_timestamp = last_preserved;
  const JobId job = JobOf(dir);
  if (!IsNoJob(job)) state.job_identity = FormatJobId(job);
  return WriteCheckpointState(dir, options_.latest_filename, state)
      .WithPrefix("Writing the checkpoint state file failed: ");
}

Status Saver::Discard(const std::string &checkpoint) {
  const std::string dir = DirectoryOf(checkpoint);
  std::vector<Kept> kept;
  bool listed = false;
  for (const Kept &k : kept_) {
    if (k.path == checkpoint) {
      listed = true;
    } else {
      kept.push_back(k);
    }
  }
  // C9 tracks nothing, and its state file names only the newest checkpoint: this one.
  if (!listed && options_.max_to_keep != 0) return Status();
  if (options_.chief) NoteDoomed(dir, options_.latest_filename, {checkpoint});
  if (!kept.empty()) {
    TW_RETURN_IF_ERROR(WriteState(dir, kept, last_preserved_timestamp_));
  } else {
    // Nothing else is listed: no state file is better than one naming a checkpoint about to go.
    const std::string state_path = JoinPath(dir, options_.latest_filename);
    if (::unlink(state_path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "Removing " + state_path);
  }
  kept_ = std::move(kept);
  doomed_.push_back(checkpoint);
  DeleteDoomed(dir);
  return Status();
}

void Saver::DeleteDoomed(const std::string &dir) {
  // Deleted only once the state file no longer names them, so a crash never leaves it dangling.
  // Only files provably the saver's own, inside `dir` (own_checkpoints.h): a crafted state file may
  // list anything.
  const JobId job = doomed_.empty() ? JobId{} : JobOf(dir);
  for (const std::string &path : doomed_) DeleteOwnCheckpoint(dir, path, job, options_.recycle_files);
  doomed_.clear();
  if (options_.chief) {
    SettleSavingNote(dir, options_.latest_filename, last_restored_, /*remove_unlisted=*/false, JobOf(dir));
  }
}

Status Saver::LockDirectory(const std::string &dir) {
  for (const auto &lock : locks_) {
    if (lock->Covers(dir)) return Status();
  }
  std::unique_ptr<DirectoryLock> lock;
  TW_RETURN_IF_ERROR(DirectoryLock::Acquire(dir, options_.lock_holder, &lock));
  if (lock) locks_.push_back(std::move(lock));
  return Status();
}

void Saver::ReleaseDirectoryLocks() {
  locks_.clear();
  committed_dir_.clear();  // the next save takes the lock again before any part is written
}

Status Saver::Restore(const std::string &path, const std::vector<std::string> &names) {
  RestoreFailure failure = RestoreFailure::kNone;
  return RestoreFrom(path, names, {}, nullptr, &failure);
}

Status Saver::RestoreFrom(const std::string &path, const std::vector<std::string> &names,
                          const std::vector<std::string> &optional, std::vector<std::string> *missing,
                          RestoreFailure *failure) {
  *failure = RestoreFailure::kUnproven;
  std::vector<const TensorRef *> selected;
  if (names.empty()) {
    for (const TensorRef &v : variables_) selected.push_back(&v);
  } else {
    std::unordered_map<std::string, const TensorRef *> by_name;
    for (const TensorRef &v : variables_) by_name.emplace(v.name(), &v);
    std::unordered_set<std::string> seen;
    for (const std::string &name : names) {
      const auto it = by_name.find(name);
      if (it == by_name.end()) {
        *failure = RestoreFailure::kMisfit;  // the caller's mistake, not the file's
        return Status(TW_NOT_FOUND, "the saver has no variable named '" + name + "'");
      }
      if (seen.insert(name).second) selected.push_back(it->second);
    }
  }
  std::unique_ptr<RestorePlan> plan;
  TW_RETURN_IF_ERROR(PlanRestore(path, selected, optional, missing, failure, &plan));
  const Status filled = FinishRestore(*plan);
  // After the proof, a failure may have written part of the variables: never a reason to go on to an
  // older checkpoint.
  *failure = filled.ok() ? RestoreFailure::kNone : RestoreFailure::kUnproven;
  return filled;
}

Status Saver::PlanRestore(const std::string &path, const std::vector<const TensorRef *> &selected,
                          const std::vector<std::string> &optional, std::vector<std::string> *missing,
                          RestoreFailure *failure, std::unique_ptr<RestorePlan> *plan) {
  // Device variables are decoded into their staging buffers (FinishRestore copies them to the device):
  // the buffers first, a failure of the device's that proves nothing about the file.
  const Status reserved = device_->Reserve();
  if (!reserved.ok()) {
    *failure = RestoreFailure::kUnproven;
    return reserved.WithPrefix("restoring checkpoint " + path + ": ");
  }
  bool misfit = false;
  std::vector<size_t> staged;
  const Status status = CatchingOutOfMemory(path, [&] {
    std::vector<RestoreTarget> targets;
    for (const TensorRef *v : selected) {
      const auto shard = options_.shards.find(v->name());
      const size_t index = static_cast<size_t>(v - variables_.data());
      const TensorRef *into = device_->on_device(index) ? &device_->Staged(index) : v;
      targets.push_back({into, shard != options_.shards.end() ? &shard->second : nullptr});  // with a collective or not
    }
    TW_RETURN_IF_ERROR(RestorePlan::Open(path, targets, optional, missing, &misfit, plan));
    for (const TensorRef *v : selected) {
      const size_t index = static_cast<size_t>(v - variables_.data());
      const bool absent =
          missing != nullptr && std::find(missing->begin(), missing->end(), v->name()) != missing->end();
      if (device_->on_device(index) && !absent) staged.push_back(index);
    }
    (*plan)->set_staged(std::move(staged));
    return (*plan)->Prove(Threads());
  });
  *failure = ClassifyRestoreFailure(status, misfit);
  return status;
}

Status Saver::PrepareRestore(const std::string &path, const std::vector<std::string> &optional,
                             std::vector<std::string> *missing, RestoreFailure *failure,
                             std::unique_ptr<RestorePlan> *plan) {
  std::vector<const TensorRef *> selected;
  for (const TensorRef &v : variables_) selected.push_back(&v);
  return PlanRestore(path, selected, optional, missing, failure, plan);
}

Status Saver::FinishRestore(const RestorePlan &plan) {
  TW_RETURN_IF_ERROR(CatchingOutOfMemory(plan.path(), [&] { return plan.Fill(); }));
  const Status unstaged = device_->Unstage(plan.staged());
  if (!unstaged.ok()) return unstaged.WithPrefix("restoring checkpoint " + plan.path() + ": ");
  last_restored_ = plan.path();
  return Status();
}

Status Saver::ListedCandidates(const std::string &dir, std::vector<std::string> *out) {
  CheckpointState state;
  const Status loaded = LoadCheckpointState(dir, options_.latest_filename, &state);
  // A state file that could not be read for lack of memory or descriptors is not damaged (C20).
  if (loaded.code() == TW_RESOURCE_EXHAUSTED) return loaded;
  std::vector<std::string> &candidates = *out;
  candidates.clear();
  if (loaded.ok()) {
    candidates.push_back(state.model_checkpoint_path);
    for (auto it = state.all_model_checkpoint_paths.rbegin(); it != state.all_model_checkpoint_paths.rend(); ++it) {
      if (*it != state.model_checkpoint_path) candidates.push_back(*it);
    }
  } else if (loaded.code() != TW_NOT_FOUND) {
    Log(TW_LOG_WARNING, "Checkpoint state file %s is damaged (%s): looking for checkpoints by name",
        JoinPath(dir, options_.latest_filename).c_str(), loaded.message().c_str());
  }
  return Status();
}

Status Saver::RestoreCandidates(const std::string &dir, std::vector<std::string> *candidates, size_t *listed) {
  TW_RETURN_IF_ERROR(ListedCandidates(dir, candidates));
  *listed = candidates->size();
  std::vector<FoundCheckpoint> found;
  TW_RETURN_IF_ERROR(FindOwnCheckpoints(dir, &found));
  for (const FoundCheckpoint &f : found) {
    if (std::find(candidates->begin(), candidates->end(), f.path) == candidates->end()) candidates->push_back(f.path);
  }
  return Status();
}

Status Saver::RestoreNewestGood(const std::string &dir, std::string *path, const std::vector<std::string> &optional,
                                std::vector<std::string> *missing) {
  path->clear();
  const std::string state_path = JoinPath(dir, options_.latest_filename);
  std::vector<std::string> candidates;
  TW_RETURN_IF_ERROR(ListedCandidates(dir, &candidates));
  // The state file is a hint: after its entries come the saver's own checkpoints found in the
  // directory by name, newest step first (scanned only when needed), so a lost or damaged state file
  // never costs a checkpoint.
  const size_t listed = candidates.size();
  bool scanned = false;
  std::vector<std::string> damaged;  // "<path>: <damage>" of each skipped for proven damage
  for (size_t i = 0;; ++i) {
    if (i == candidates.size()) {
      if (scanned) break;
      scanned = true;
      std::vector<FoundCheckpoint> found;
      TW_RETURN_IF_ERROR(FindOwnCheckpoints(dir, &found));
      for (const FoundCheckpoint &f : found) {
        if (std::find(candidates.begin(), candidates.end(), f.path) == candidates.end()) candidates.push_back(f.path);
      }
      if (i == candidates.size()) break;
      if (listed > 0) {
        Log(TW_LOG_WARNING, "No checkpoint listed in %s is intact: trying those found in %s by name",
            state_path.c_str(), dir.c_str());
      }
    }
    const std::string candidate = candidates[i];
    RestoreFailure failure = RestoreFailure::kNone;
    const Status status = RestoreFrom(candidate, {}, optional, missing, &failure);
    if (status.ok()) {
      *path = candidate;
      return status;
    }
    // C20: only proof that the file is unusable skips it. A listed checkpoint that does not fit the
    // variables is the caller's error, and a failure that proves nothing (memory, address space,
    // descriptors, I/O) ends the restore: skipping would let the job start over on intact checkpoints.
    // One found by name that does not fit may belong to another model sharing the directory.
    const bool skip = ProvesFileUnusable(failure) || (failure == RestoreFailure::kMisfit && i >= listed);
    if (!skip) {
      *path = candidate;
      if (failure == RestoreFailure::kMisfit) return status;
      return UnprovenFailure(candidate, status);
    }
    if (failure == RestoreFailure::kDamaged) damaged.push_back(candidate + ": " + status.message());
    Log(TW_LOG_WARNING, "Skipping checkpoint %s: %s", candidate.c_str(), status.message().c_str());
  }
  if (!damaged.empty()) return EveryCheckpointDamaged(dir, damaged);
  return Status(TW_NOT_FOUND, "no intact checkpoint is listed in " + state_path + " or found in " +
                                  (dir.empty() ? std::string(".") : dir));
}

Status EveryCheckpointDamaged(const std::string &dir_arg, const std::vector<std::string> &damaged) {
  const std::string dir = dir_arg.empty() ? "." : dir_arg;
  std::string text = "every checkpoint of " + dir +
                     " that the restore tried is damaged, and none was deleted or "
                     "overwritten (to start over from the initial values, move them out of " +
                     dir + ")";
  for (size_t i = 0; i < damaged.size(); ++i) text += (i == 0 ? ": " : "; ") + damaged[i];
  return Status(TW_DATA_LOSS, text);
}

Status Saver::RecoverLastCheckpoints(const std::string &dir_arg) {
  const std::string dir = dir_arg.empty() ? "." : dir_arg;
  // A job's other ranks only write their parts: the directory, its state file and its cleaning are
  // the chief's.
  if (options_.chief) {
    TW_RETURN_IF_ERROR(LockDirectory(dir));
    TW_RETURN_IF_ERROR(CleanOnce(dir));
  }
  CheckpointState state;
  const Status loaded = LoadCheckpointState(dir_arg, options_.latest_filename, &state);
  // Not a damaged state file to rebuild from the directory: no memory or descriptor to read it (C20).
  if (loaded.code() == TW_RESOURCE_EXHAUSTED) return loaded;
  std::vector<Kept> kept;
  // A save cut short after its state file listed its checkpoint: the note goes before a trim below
  // could preserve (unlist) that checkpoint, which the note would otherwise doom at the next save.
  if (options_.chief && loaded.ok()) SettleSavingNote(dir, options_.latest_filename, last_restored_, false, JobOf(dir));
  if (loaded.ok()) {
    if (state.has_last_preserved_timestamp) last_preserved_timestamp_ = state.last_preserved_timestamp;
    const bool has_timestamps = state.all_model_checkpoint_timestamps.size() == state.all_model_checkpoint_paths.size();
    for (size_t i = 0; i < state.all_model_checkpoint_paths.size(); ++i) {
      const std::string &p = state.all_model_checkpoint_paths[i];
      if (!PathExists(p)) continue;  // C12: vanished files are dropped
      kept.push_back(Kept{p, has_timestamps ? state.all_model_checkpoint_timestamps[i] : ModificationTime(p)});
    }
  }
  // A TF state file may name only model_checkpoint_path and list nothing: that one is not a loss.
  const bool names_only_newest =
      loaded.ok() && state.all_model_checkpoint_paths.empty() && PathExists(state.model_checkpoint_path);
  if (kept.empty() && !names_only_newest) return ReseedFromDirectory(dir, loaded);
  if (options_.max_to_keep == 0) return Status();  // C9: nothing is tracked

  const size_t limit = static_cast<size_t>(options_.max_to_keep);
  if (kept.size() <= limit) {
    kept_ = std::move(kept);
    return Status();
  }
  // The fix over TF's C12: a list longer than max_to_keep (max_to_keep was lowered) shrinks now, but
  // never by the checkpoint just restored (the newer ones may be the damaged ones it was chosen over).
  std::vector<Kept> evicted;
  std::vector<Kept> survivors;
  for (size_t i = 0; i < kept.size(); ++i) {
    const bool protect = kept[i].path == last_restored_;
    (i + limit < kept.size() && !protect ? evicted : survivors).push_back(kept[i]);
  }
  return CommitRetention(dir, std::move(survivors), std::move(evicted));
}

// The state file is missing, damaged or names no existing checkpoint: the kept list is rebuilt from
// the checkpoints found by name (oldest step first, timestamps from mtimes) and the state file is
// rewritten from it. Nothing is deleted here: the newest ones may be damaged, and the next save (an
// intact checkpoint) applies max_to_keep.
Status Saver::ReseedFromDirectory(const std::string &dir, const Status &state_damage) {
  std::vector<FoundCheckpoint> found;
  TW_RETURN_IF_ERROR(FindOwnCheckpoints(dir, &found));
  if (found.empty()) {
    if (state_damage.ok()) kept_.clear();
    return Status();
  }
  const std::string damage = state_damage.code() == TW_NOT_FOUND ? "is missing"
                             : state_damage.ok()                 ? "lists no existing checkpoint"
                                                                 : "is damaged (" + state_damage.message() + ")";
  Log(TW_LOG_WARNING, "Checkpoint state file %s %s: rewriting it from the %zu checkpoints found in %s",
      JoinPath(dir, options_.latest_filename).c_str(), damage.c_str(), found.size(), dir.c_str());
  std::vector<Kept> kept;
  for (auto it = found.rbegin(); it != found.rend(); ++it) kept.push_back(Kept{it->path, it->mtime});
  if (options_.max_to_keep == 0) {
    TW_RETURN_IF_ERROR(CommitRetention(dir, {kept.back()}, {}));
    kept_.clear();
    return Status();
  }
  return CommitRetention(dir, std::move(kept), {});
}

std::vector<std::string> Saver::last_checkpoints() const {
  std::vector<std::string> paths;
  for (const Kept &k : kept_) paths.push_back(k.path);
  return paths;
}

}  // namespace checkpoint
}  // namespace tw
