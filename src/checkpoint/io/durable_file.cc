#include "checkpoint/io/durable_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "checkpoint/io/background_close.h"
#include "checkpoint/io/path.h"
#include "checkpoint/io/spare_files.h"

namespace tw {
namespace checkpoint {
namespace {

constexpr char kTempMarker[] = ".tw-tmp-";

// Written bytes between two writeback kicks (Append). Small enough that the final fsync finds little
// left to write, large enough that the disk gets long sequential writes.
constexpr uint64_t kWritebackKickBytes = 2 << 20;

std::atomic<uint64_t> g_temp_counter{0};

Status OsError(int err, const std::string &what) {
  if (err == ENOENT) return Status(TW_NOT_FOUND, what + ": " + std::strerror(err));
  return ErrnoStatus(err, what);
}

std::string DirectoryOf(const std::string &path) {
  const std::string dir = Dirname(path);
  return dir.empty() ? "." : dir;
}

Status SyncDirectory(const std::string &dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return OsError(errno, "open directory " + dir + " to fsync it");
  Status status;
  if (::fsync(fd) != 0) status = OsError(errno, "fsync directory " + dir);
  ::close(fd);
  return status;
}

// Parses the pid out of ".<name>.tw-tmp-<pid>-<n>"; 0 if `name` is not such a name.
pid_t TemporaryFileOwner(const std::string &name) {
  if (name.empty() || name[0] != '.') return 0;
  const size_t marker = name.rfind(kTempMarker);
  if (marker == std::string::npos) return 0;
  const char *p = name.c_str() + marker + sizeof(kTempMarker) - 1;
  char *end = nullptr;
  const long pid = std::strtol(p, &end, 10);
  if (end == p || *end != '-' || pid <= 0) return 0;
  const char *counter = end + 1;
  std::strtoull(counter, &end, 10);
  if (end == counter || *end != '\0') return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace

DurableFile::DurableFile(std::string path, std::string temp_path, int fd, uint64_t spare_size)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd), spare_size_(spare_size) {}

DurableFile::~DurableFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(temp_path_.c_str());
}

Status DurableFile::Create(const std::string &path, std::unique_ptr<DurableFile> *out, int spare_slot) {
  const std::string temp = JoinPath(Dirname(path), "." + Basename(path) + kTempMarker + std::to_string(::getpid()) +
                                                       "-" + std::to_string(g_temp_counter.fetch_add(1)));
  uint64_t spare_size = 0;
  int fd = spare_slot >= 0 ? TakeSpare(Dirname(path), spare_slot, temp, &spare_size) : -1;
  if (fd < 0) fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return OsError(errno, "create " + temp);
  out->reset(new DurableFile(path, temp, fd, spare_size));
  return Status();
}

Status DurableFile::Append(const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return OsError(errno, "write " + temp_path_);
    }
    p += n;
    size -= static_cast<size_t>(n);
    size_ += static_cast<uint64_t>(n);
  }
  // Start the disk writing what is written so far without waiting for it, so that the write-out
  // overlaps the compression of later chunks and Commit's fsync finds little left to do (the trick
  // of RocksDB's bytes_per_sync). Only a hint: fsync still decides durability and reports the errors,
  // and file systems without writeback (tmpfs) return at once.
  if (size_ - kicked_ >= kWritebackKickBytes) {
    ::sync_file_range(fd_, static_cast<off_t>(kicked_), static_cast<off_t>(size_ - kicked_), SYNC_FILE_RANGE_WRITE);
    kicked_ = size_;
  }
  return Status();
}

Status DurableFile::Commit(bool sync_directory) {
  // A recycled spare longer than the new contents keeps its old tail until cut (before the fsync,
  // which makes the new size durable with the data).
  if (spare_size_ > size_ && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    return OsError(errno, "truncate " + temp_path_);
  }
  if (::fsync(fd_) != 0) return OsError(errno, "fsync " + temp_path_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return OsError(errno, "close " + temp_path_);
  // A file replaced by the rename would be freed inside it: hold it so that happens in the background.
  const int replaced = ::open(path_.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    if (replaced >= 0) ::close(replaced);
    return OsError(err, "rename " + temp_path_ + " to " + path_);
  }
  CloseInBackground(replaced);
  committed_ = true;  // the temp name is gone; from here on the destructor has nothing to undo
  return sync_directory ? SyncDirectoryOf(path_) : Status();
}

Status SyncDirectoryOf(const std::string &path) { return SyncDirectory(DirectoryOf(path)); }

Status WriteFileDurably(const std::string &path, const std::string &contents) {
  std::unique_ptr<DurableFile> file;
  TW_RETURN_IF_ERROR(DurableFile::Create(path, &file));
  TW_RETURN_IF_ERROR(file->Append(contents.data(), contents.size()));
  return file->Commit();
}

bool IsTemporaryFileName(const std::string &name) { return TemporaryFileOwner(name) != 0; }

Status RemoveStaleTemporaryFiles(const std::string &dir, int *removed) {
  int count = 0;
  DIR *d = ::opendir(dir.empty() ? "." : dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return Status();
    return OsError(errno, "list directory " + dir);
  }
  while (const struct dirent *entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    const pid_t owner = TemporaryFileOwner(name);
    if (owner == 0 || owner == ::getpid()) continue;
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue;  // the writer may still be running
    const std::string path = JoinPath(dir, name);
    if (::unlink(path.c_str()) == 0) {
      ++count;
      Log(TW_LOG_INFO, "Removed %s, left by an interrupted checkpoint write", path.c_str());
    }
  }
  ::closedir(d);
  if (removed != nullptr) *removed = count;
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
