// A checkpoint file read into private memory, a range at a time: the reader proves and decodes only
// bytes it has copied out of the file, never the file itself.
//
// Why not a mapping of the file: a shared (or copy-on-write) mapping shows what another program writes
// into the file after the reader proved it, so a restore could prove one set of bytes and copy another
// into the variables; and a file truncated under a mapping raises SIGBUS in the host process on the next
// read. Here every byte comes in through pread into an anonymous buffer owned by this object (huge pages
// asked for), is proven there and decoded from there: an outside rewrite during a restore is either
// caught by the proof or not seen at all, and an outside truncation is a short read, TW_DATA_LOSS
// "checkpoint <path> was truncated while being read" (docs/tf-semantics.md C21).
//
// The buffer spans the whole file in address space, but only the ranges Load()ed are touched: a
// restore holds the stored bytes of the chunks it reads (never more than the compressed size of the
// variables it restores) between its proof and its write, where a mapping held none. A buffer of up to
// 256 MiB is kept for the process's next read (MADV_FREE: the kernel may take it back), so that a
// repeated restore does not fault fresh pages in.
//
// A checkpoint file is never modified under its name by our saver, but once evicted by a saver that
// recycles files (opt-in) a later save overwrites it in place (spare_files.h, C15). So this object holds flock(LOCK_SH)
// on the file for its whole life, and a writer recycles a file only with flock(LOCK_EX | LOCK_NB). A file being
// recycled, or recycled between the open and the lock, is reported as deleted.
#ifndef TRAINWATCH_CHECKPOINT_PRIVATE_FILE_H
#define TRAINWATCH_CHECKPOINT_PRIVATE_FILE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "base/status.h"

namespace tw {
namespace checkpoint {

class PrivateFile {
 public:
  // Opens `path`, takes the shared lock and reserves the buffer; reads nothing yet.
  // Errors: TW_NOT_FOUND (no such file; or "<path> was deleted while being opened": a save is
  // recycling it, or `path` names another file once the lock is held), TW_INVALID_ARGUMENT (not a
  // regular file: a directory, FIFO, device..., refused without blocking; see base/regular_file.h),
  // TW_RESOURCE_EXHAUSTED (no memory for the buffer), TW_IO.
  static Status Open(const std::string &path, std::unique_ptr<PrivateFile> *out);
  ~PrivateFile();  // releases the lock and the buffer

  PrivateFile(const PrivateFile &) = delete;
  PrivateFile &operator=(const PrivateFile &) = delete;

  // The buffer: byte i is the file's byte i once a Load covered it (zero before).
  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }  // of the file when it was opened

  // Reads the file's bytes [offset, offset + size) into data() + offset (pread, retried until complete).
  // A range loaded again is read again: what the file holds then replaces what the buffer held. Ranges
  // may be loaded from several threads at once if they do not overlap. Errors: TW_DATA_LOSS ("checkpoint
  // <path> was truncated while being read": the file ended before the range), TW_IO,
  // TW_INVALID_ARGUMENT (a range past size()).
  Status Load(uint64_t offset, uint64_t size);
  // Gives back the memory of the pages wholly inside [offset, offset + size), which read as zero
  // afterwards: a pass that proves chunks and keeps nothing (Verify) holds one chunk's bytes at a time.
  void Release(uint64_t offset, uint64_t size);

 private:
  PrivateFile(int fd, std::string path, uint8_t *data, uint64_t size, uint64_t capacity)
      : fd_(fd), path_(std::move(path)), data_(data), size_(size), capacity_(capacity) {}

  int fd_;  // holds the shared lock
  std::string path_;
  uint8_t *data_;  // size_ bytes (NULL when empty), page-aligned
  uint64_t size_;
  uint64_t capacity_;  // of the buffer, which may be a larger one reused (private_file.cc)
};

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_PRIVATE_FILE_H
