// What the library may treat as its own inside a checkpoint directory. Paths read from the state file
// are only hints (a crafted or damaged file can name anything, "../x" or "/abs/x" included), so the
// saver deletes a file only when it can prove it is one of its checkpoints in the directory, and a
// chief that cannot trust the state file finds its checkpoints by name instead.
//
// Proof of ownership, all of: the basename is a name the saver produces ("<prefix>-<step>", see
// CheckpointPath in saver.h); "<dir>/<basename>" is the very file the listed path names (so a path
// leading elsewhere fails); it is a regular file, checked without following a symbolic link; its
// header is a trainwatch checkpoint's (format.h); its origin (format.h, inside the checksummed index)
// names the directory's job identity (job_identity.h) and this very basename (tf-semantics C19). So a
// checkpoint another job wrote and copied in, a user's copy of one of ours under another name, a file
// of a format before version 6 and any file of a directory without a job identity are never found by
// name or deleted. (The part files of a sharded checkpoint are owned through their index.)
#ifndef TRAINWATCH_CHECKPOINT_OWN_CHECKPOINTS_H
#define TRAINWATCH_CHECKPOINT_OWN_CHECKPOINTS_H

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "checkpoint/format/format.h"

namespace tw {
namespace checkpoint {

// True for "<prefix>-<step>" with a non-empty prefix not starting with '.' (temporary and lock files
// are hidden), no '/', and a decimal int64 step (zero-padded or negative as CheckpointPath writes
// them). *step (may be NULL) receives the step.
bool ParseCheckpointName(const std::string &basename, int64_t *step);

// Deletes `path` (a listed or produced path) when the ownership proof above holds for it, `dir` and `job`,
// by its name inside `dir` (unlinkat on the directory's descriptor: never a file elsewhere, never a
// symbolic link's target). Otherwise leaves it and logs a WARNING naming it and the reason. A file
// already gone is fine. With `recycle` the checkpoint's file, or each part of an index (the index itself
// is deleted), becomes its slot's spare when it may (spare_files.h: RetireFile, C15) instead of being
// unlinked. Returns whether it removed the file.
bool DeleteOwnCheckpoint(const std::string &dir, const std::string &path, const JobId &job, bool recycle = false);

// A save cut short after its checkpoint became complete (renamed into place, or its index written) and
// before the state file listed it — the process killed, the machine down — leaves a complete checkpoint
// nothing lists, which retention (it walks the state file's list) would never delete; one cut short
// after the state file dropped an evicted checkpoint and before deleting it leaves that one so. So the
// holder of the directory's lock keeps a note, the hidden file "<dir>/.<latest_filename>.tw-saving", of
// the checkpoints that must not outlive the save unlisted: the one it writes (before writing it) and
// the ones it evicts (before the state file drops them); the save settles the note once done, and the
// next save settles what a cut-short one left (docs/checkpoint-format.md, "A save cut short"). The note
// is written without fsync: a power cut may lose it, which leaves a checkpoint as TF would (C14), never
// deletes one. Checkpoints kept for good (keep_checkpoint_every_n_hours) are never noted.
std::string SavingNoteName(const std::string &latest_filename);
// Notes `checkpoint` (a path), about to be written; a name the saver does not produce is not noted.
void NoteSaving(const std::string &checkpoint, const std::string &latest_filename);
// Notes the evicted `paths` that are the saver's names inside `dir` (what DeleteOwnCheckpoint may delete).
void NoteDoomed(const std::string &dir, const std::string &latest_filename, const std::vector<std::string> &paths);
// Settles the note of `dir` against its state file: a noted checkpoint that the state file lists, that
// is `keep` (the one the saver restored from; may be empty) or that is gone needs nothing; one that
// exists unlisted is deleted when `remove_unlisted` (by DeleteOwnCheckpoint for `job`: only a file this
// job wrote, an index with its parts; anything else stays with a WARNING) and otherwise stays noted. The
// note then lists what stays, or goes. A missing or damaged state file proves nothing: the note and its
// checkpoints stay (a restore finds them by name and recovery lists them). A note that is not a regular
// file is ignored, with a WARNING. Only the holder of the directory's lock may call it, with no save
// of its own in flight.
void SettleSavingNote(const std::string &dir, const std::string &latest_filename, const std::string &keep,
                      bool remove_unlisted, const JobId &job);

// The part files of a sharded checkpoint go with its index: DeleteOwnCheckpoint of an index deletes
// "<name>.part-*-of-*" after it. Deletes, in the directory open as dir_fd, the part files of
// `checkpoint_name` ("" : of every checkpoint), only those whose index is absent when
// `only_without_index`, never those named in `keep`, never a file the saver did not write (a warning
// names it). With `recycle` each part becomes the spare of its part index's slot when it may
// (spare_files.h: RetireFile). Returns how many it removed.
int DeleteParts(int dir_fd, const std::string &checkpoint_name, bool only_without_index,
                const std::vector<std::string> &keep = {}, bool recycle = false);

// Removes part files whose index does not exist: what a save that failed or was killed before its
// commit left. Only the holder of the directory's lock may call it, before its job writes new parts.
Status RemoveOrphanParts(const std::string &dir, int *removed);

// After the index at `index_path` was committed listing `parts` (bare names): removes the parts of an
// earlier save of the same name that it replaced with another number of parts (4 ranks re-saving a
// step 2 ranks had saved), which its presence would otherwise keep from RemoveOrphanParts forever.
void RemoveReplacedParts(const std::string &index_path, const std::vector<std::string> &parts);

struct FoundCheckpoint {
  std::string path;  // JoinPath(dir, name)
  int64_t step;
  double mtime;  // seconds since the epoch
};

// A trainwatch checkpoint named like one of ours that is not this job's, and why.
struct NotOwned {
  std::string path;
  std::string why;
};

// Every file of `dir` the ownership proof accepts for `job`, newest step first (equal steps: newest
// mtime first). Nothing is verified beyond the header and the origin: restore checks the data.
// *not_owned (may be NULL) receives the trainwatch checkpoints with a checkpoint's name that are not
// this job's (the caller says so once). A missing directory finds nothing. Errors: TW_IO (the
// directory cannot be listed).
Status ScanOwnCheckpoints(const std::string &dir, const JobId &job, std::vector<FoundCheckpoint> *found,
                          std::vector<NotOwned> *not_owned = nullptr);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_OWN_CHECKPOINTS_H
