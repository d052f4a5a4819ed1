// Crash-safe file replacement, the protocol of PostgreSQL's durable_rename and LevelDB's CURRENT:
// write a temporary file in the destination's directory, fsync it, rename it over the destination,
// fsync the directory. A reader sees the old file or the complete new one, never a torn one, and once
// Commit returns OK the new file survives a power cut. Any failure (write, fsync, rename) fails the
// whole operation and removes the temporary file; it is never retried as if it had succeeded.
#ifndef TRAINWATCH_CHECKPOINT_DURABLE_FILE_H
#define TRAINWATCH_CHECKPOINT_DURABLE_FILE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace tw {
namespace checkpoint {

class DurableFile {
 public:
  // Creates the temporary file for `path`: ".<basename>.tw-tmp-<pid>-<n>" next to it (hidden, and
  // never matched by a "<prefix>-*" glob). With a `spare_slot` (>= 0; a checkpoint's data file only)
  // that slot's spare in the directory becomes the temporary file when it is usable (spare_files.h:
  // TakeSpare), to be overwritten in place; otherwise, and always without a slot, the file is created
  // fresh. Errors: TW_NOT_FOUND when the directory is missing, TW_IO.
  static Status Create(const std::string &path, std::unique_ptr<DurableFile> *out, int spare_slot = -1);
  ~DurableFile();  // without a successful Commit: closes and removes the temporary file

  DurableFile(const DurableFile &) = delete;
  DurableFile &operator=(const DurableFile &) = delete;

  // Appends all of `data` (retrying short writes and EINTR), starting writeback every few MiB.
  // TW_RESOURCE_EXHAUSTED for ENOSPC/EFBIG.
  Status Append(const void *data, size_t size);
  // (truncate a recycled spare to what was written →) fsync → close → rename over the destination →
  // fsync the directory. Without `sync_directory` the rename is not durable yet: the caller fsyncs the
  // directory (SyncDirectoryOf) before anything that relies on the name — a sharded save's chief does
  // it once for every rank's part.
  Status Commit(bool sync_directory = true);

  const std::string &path() const { return path_; }
  uint64_t size() const { return size_; }

 private:
  DurableFile(std::string path, std::string temp_path, int fd, uint64_t spare_size);

  std::string path_;
  std::string temp_path_;
  int fd_;
  uint64_t size_ = 0;
  uint64_t kicked_ = 0;  // bytes handed to writeback so far (Append)
  uint64_t spare_size_;  // the recycled spare's size (0 for a fresh file): longer is truncated at Commit
  bool committed_ = false;
};

// fsyncs the directory holding `path`, making the renames done in it durable.
Status SyncDirectoryOf(const std::string &path);

// Replaces `path` with `contents` through a DurableFile.
Status WriteFileDurably(const std::string &path, const std::string &contents);

// True for names DurableFile gives its temporary files.
bool IsTemporaryFileName(const std::string &name);

// Deletes temporary files in `dir` whose writer process is gone (a crash or kill mid-save); files of a
// live process (an async save in flight, another trainer) are left alone. *removed (may be NULL)
// receives the count. A missing directory is not an error.
Status RemoveStaleTemporaryFiles(const std::string &dir, int *removed);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_DURABLE_FILE_H
