// Recycling evicted checkpoint files, as PostgreSQL recycles WAL segments — only when a saver opts in
// (SaverOptions::recycle_files, TW_OPT_CHECKPOINT_RECYCLE_FILES; tf-semantics C15). Creating a fresh
// file costs page allocation (tmpfs) or block allocation and journal work (ext4), and freeing the
// evicted one costs as much again; overwriting a file that already has its pages or blocks costs
// neither. So a file that retention evicts is not deleted but kept under a hidden spare name in its
// directory, one slot per part index (".tw-spare-<slot>": a part file's p of "<ckpt>.part-p-of-n", 0
// for a single-file checkpoint), and the next save of that slot takes it as its temporary file and
// overwrites it from offset 0 (durable_file.h), with the mode the umask gives a new file. At most one
// spare per slot, so the cost on disk (on tmpfs: memory) is bounded; the holder of the directory's lock
// drops them when it releases it (dir_lock.h: a saver's ReleaseDirectoryLocks or destruction).
//
// The risk that makes it opt-in: the evicted file was visible under a checkpoint name, so a program
// may still be reading it. trainwatch's own readers hold flock(LOCK_SH) on every file they read
// (private_file.h), and a writer takes a spare only with flock(LOCK_EX | LOCK_NB) — a spare one of them
// still holds is given up (deleted; the reader keeps its bytes) and the save writes a fresh file. No
// other program takes that lock: cp, tar, rsync or a backup agent still copying the evicted checkpoint
// gets bytes of two checkpoints. By default evicted files are unlinked, as TF deletes them, and a reader
// keeps the bytes it opened. docs/checkpoint-format.md, "Spare files".
#ifndef TRAINWATCH_CHECKPOINT_SPARE_FILES_H
#define TRAINWATCH_CHECKPOINT_SPARE_FILES_H

#include <cstdint>
#include <string>

namespace tw {
namespace checkpoint {

// No slot: the file is deleted, never kept as a spare (an index, a state file, a file kept for good).
constexpr int kNoSpareSlot = -1;

// ".tw-spare-<slot>" for slot >= 0.
std::string SpareFileName(int slot);
// True for the names SpareFileName gives.
bool IsSpareFileName(const std::string &name);

// Removes the entry `name` of the directory open as `dir_fd`, a file the caller proved its own. With a
// `slot` (>= 0) it becomes that slot's spare when it may be recycled: a regular file owned by this
// user with no other link (a user's hard link to a checkpoint keeps its bytes), the slot free (never a
// second spare: renameat2(RENAME_NOREPLACE)) and the file system able to say so. Otherwise it is
// unlinked, held across the unlink so that its storage is freed off this thread (background_close.h).
// Returns 0 when the name is gone (kept, deleted or already gone), else the errno of the unlink.
int RetireFile(int dir_fd, const std::string &name, int slot);

// Takes the spare of `slot` in `dir` ("" is ".") for writing as `temp_path` (a name of `dir` nobody
// else uses): renames it there, opens it write-only without following a link or blocking, and checks
// on the descriptor that it is a regular file owned by this user with no other link, then takes
// flock(LOCK_EX | LOCK_NB) — a reader still mapping it keeps it — and resets its mode to what the
// umask gives a new file (0666 & ~umask, as open(2) would). Returns the descriptor (blocking, at
// offset 0, its old bytes still there: the caller overwrites them and truncates to what it wrote) and
// its size in *size; -1 when there is no usable spare, with nothing left under `temp_path` that was
// the spare (a FIFO, directory or symbolic link planted under the spare name stays where it is,
// neither followed nor opened; a file that fails a check after the rename is deleted).
int TakeSpare(const std::string &dir, int slot, const std::string &temp_path, uint64_t *size);

// Deletes every spare of `dir` (regular files of this user under spare names; anything else planted
// there, another user's file included, stays). Returns how many went. A missing directory has none.
int DropSpares(const std::string &dir);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_SPARE_FILES_H
