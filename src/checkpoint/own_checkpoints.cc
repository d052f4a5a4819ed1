#include "checkpoint/own_checkpoints.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "base/log.h"
#include "base/regular_file.h"
#include "checkpoint/format/format.h"
#include "checkpoint/format/wire.h"
#include "checkpoint/format/xxhash64.h"
#include "checkpoint/io/path.h"
#include "checkpoint/io/spare_files.h"
#include "checkpoint/job_identity.h"
#include "checkpoint/sharded/shard_index.h"
#include "checkpoint/state_file.h"

namespace tw {
namespace checkpoint {
namespace {

// The directory's descriptor for the *at calls, closed on scope exit.
class DirectoryFd {
 public:
  explicit DirectoryFd(const std::string &dir)
      : fd_(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}
  ~DirectoryFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  DirectoryFd(const DirectoryFd &) = delete;
  DirectoryFd &operator=(const DirectoryFd &) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The origin (format.h) of the checkpoint or index open as `fd` (`size` bytes, format `version`), read
// from its footer and index after checking the index checksum. The index is hashed a block at a time:
// a damaged footer claiming a huge index allocates nothing.
Status ReadOrigin(int fd, uint64_t size, uint32_t version, const std::string &name, Origin *origin) {
  uint8_t tail[kFooterSize];
  if (::pread(fd, tail, sizeof(tail), static_cast<off_t>(size - kFooterSize)) != static_cast<ssize_t>(sizeof(tail))) {
    return Status(TW_DATA_LOSS, "its footer cannot be read");
  }
  Footer footer;
  TW_RETURN_IF_ERROR(ParseFooter(tail, size, name, &footer));
  constexpr size_t kBlock = 64 * 1024;  // more than an origin record
  std::vector<uint8_t> block(kBlock), first;
  Xxh64Stream hash(IndexChecksumSeed(version));
  for (uint64_t at = 0; at < footer.index_size;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kBlock, footer.index_size - at));
    if (::pread(fd, block.data(), want, static_cast<off_t>(footer.index_offset + at)) != static_cast<ssize_t>(want)) {
      return Status(TW_DATA_LOSS, "its index cannot be read");
    }
    if (at == 0) first.assign(block.begin(), block.begin() + static_cast<ptrdiff_t>(want));
    hash.Update(block.data(), want);
    at += want;
  }
  if (hash.Digest() != footer.index_xxh64) return Status(TW_DATA_LOSS, "index checksum mismatch");
  Origin parsed;
  if (version >= kFirstOriginVersion) {
    Cursor in(first.data(), first.size());
    TW_RETURN_IF_ERROR(ParseOriginRecord(&in, name, &parsed));
  }
  *origin = std::move(parsed);
  return Status();
}

// Why the checkpoint `name` with `origin` is not this job's (`job`), or "" when it is.
std::string NotThisJobs(const Origin &origin, const std::string &name, const JobId &job) {
  if (IsNoJob(origin.job)) return "it records no job: an older format, or written outside a saver";
  const std::string writer = "written as " + origin.name + " by job " + FormatJobId(origin.job);
  if (IsNoJob(job)) return writer + ", and the directory has no job identity yet (" + kJobFileName + ")";
  if (origin.job != job) return writer;
  if (origin.name != name) return "a copy of this job's " + origin.name;
  return "";
}

// The proof that the entry `name` of the open directory `dir_fd` is a file the saver wrote (a regular
// file with a checkpoint's or an index's header), whatever its name; `listed` (may be NULL) must then
// be that same file. With `job`, its origin must also name that job and `name` (a checkpoint or index
// this job wrote under this name); *foreign (may be NULL) then tells a trainwatch file that is not.
// *st receives the entry's lstat, *is_index (may be NULL) whether it is an index.
bool ProveOwnFile(int dir_fd, const std::string &name, const std::string *listed, struct stat *st, std::string *why,
                  bool *is_index = nullptr, const JobId *job = nullptr, bool *foreign = nullptr) {
  if (foreign != nullptr) *foreign = false;
  if (::fstatat(dir_fd, name.c_str(), st, AT_SYMLINK_NOFOLLOW) != 0) {
    *why = listed != nullptr ? "the path leads outside the checkpoint directory"
                             : std::string("cannot be examined (") + std::strerror(errno) + ")";
    return false;
  }
  if (!S_ISREG(st->st_mode)) {
    *why = std::string("it is ") + FileTypeName(st->st_mode) + ", not a regular file";
    return false;
  }
  if (listed != nullptr) {
    struct stat target;
    if (::lstat(listed->c_str(), &target) != 0 || target.st_dev != st->st_dev || target.st_ino != st->st_ino) {
      *why = "the path leads outside the checkpoint directory";
      return false;
    }
  }
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    *why = std::string("cannot be opened (") + std::strerror(errno) + ")";
    return false;
  }
  uint8_t header[kHeaderSize];
  struct stat opened;
  const bool same = ::fstat(fd, &opened) == 0 && opened.st_ino == st->st_ino && opened.st_dev == st->st_dev;
  const ssize_t n = same ? ::pread(fd, header, sizeof(header), 0) : -1;
  const bool read = same && n == static_cast<ssize_t>(sizeof(header));
  const uint64_t size = static_cast<uint64_t>(opened.st_size);
  uint32_t version = 0;
  const bool index = read && ParseHeader(header, size, name, kHeaderFlagShardIndex, &version).ok();
  if (!index && !(read && ParseHeader(header, size, name, 0, &version).ok())) {
    ::close(fd);
    *why = "its header is not a trainwatch checkpoint's";
    return false;
  }
  Origin origin;
  const Status origin_read = job != nullptr ? ReadOrigin(fd, size, version, name, &origin) : Status();
  ::close(fd);
  const std::string not_ours = job == nullptr      ? ""
                               : !origin_read.ok() ? "its origin cannot be read: " + origin_read.message()
                                                   : NotThisJobs(origin, name, *job);
  if (!not_ours.empty()) {
    *why = "it is not this job's checkpoint (" + not_ours + ")";
    if (foreign != nullptr) *foreign = true;
    return false;
  }
  if (is_index != nullptr) *is_index = index;
  return true;
}

// ProveOwnFile for a checkpoint of `job`, whose name is also one the saver produces.
bool ProveOwn(int dir_fd, const std::string &name, const std::string *listed, const JobId &job, struct stat *st,
              std::string *why, bool *is_index = nullptr, bool *foreign = nullptr) {
  if (!ParseCheckpointName(name, nullptr)) {
    *why = "not a checkpoint name the saver produces (\"<prefix>-<step>\" inside the directory)";
    return false;
  }
  return ProveOwnFile(dir_fd, name, listed, st, why, is_index, &job, foreign);
}

}  // namespace

int DeleteParts(int dir_fd, const std::string &checkpoint_name, bool only_without_index,
                const std::vector<std::string> &keep, bool recycle) {
  const int list_fd = ::dup(dir_fd);
  DIR *d = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
  if (d == nullptr) {
    if (list_fd >= 0) ::close(list_fd);
    return 0;
  }
  std::vector<std::pair<std::string, int>> doomed;  // names and their spare slots
  while (const struct dirent *entry = ::readdir(d)) {
    std::string owner;
    uint32_t part = 0;
    if (!ParsePartFileName(entry->d_name, &owner, &part)) continue;
    if (!checkpoint_name.empty() && owner != checkpoint_name) continue;
    if (std::find(keep.begin(), keep.end(), entry->d_name) != keep.end()) continue;
    struct stat st;
    if (only_without_index && ::fstatat(dir_fd, owner.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) continue;
    std::string why;  // a file that only borrows a part's name is not ours to delete
    if (!ProveOwnFile(dir_fd, entry->d_name, nullptr, &st, &why)) {
      Log(TW_LOG_WARNING, "Not deleting %s (named like a part of checkpoint %s): %s", entry->d_name, owner.c_str(),
          why.c_str());
      continue;
    }
    doomed.emplace_back(entry->d_name, recycle ? static_cast<int>(part) : kNoSpareSlot);
  }
  ::closedir(d);
  int removed = 0;
  // The chief deletes the parts of an evicted checkpoint inside a sharded save's commit, which every
  // other rank waits for: RetireFile frees nothing on this thread.
  for (const auto &[name, slot] : doomed) removed += RetireFile(dir_fd, name, slot) == 0 ? 1 : 0;
  return removed;
}

Status RemoveOrphanParts(const std::string &dir, int *removed) {
  const DirectoryFd dir_fd(dir);
  if (dir_fd.get() < 0) return Status();
  const int n = DeleteParts(dir_fd.get(), "", true);
  if (removed != nullptr) *removed = n;
  if (n > 0) Log(TW_LOG_WARNING, "Removed %d part file(s) of uncommitted sharded checkpoints from %s", n, dir.c_str());
  return Status();
}

void RemoveReplacedParts(const std::string &index_path, const std::vector<std::string> &parts) {
  const std::string dir = Dirname(index_path);
  const DirectoryFd dir_fd(dir);
  if (dir_fd.get() < 0) return;
  const int n = DeleteParts(dir_fd.get(), Basename(index_path), false, parts);
  if (n > 0) Log(TW_LOG_INFO, "Removed %d part file(s) of an earlier save of %s", n, index_path.c_str());
}

bool ParseCheckpointName(const std::string &basename, int64_t *step) {
  if (basename.empty() || basename[0] == '.' || basename.find('/') != std::string::npos) return false;
  // "<ckpt>.part-00001-of-00004" ends in a number too, but is a piece of <ckpt>, never a checkpoint.
  if (ParsePartFileName(basename, nullptr)) return false;
  size_t dash = basename.rfind('-');
  if (dash == std::string::npos) return false;
  // "<prefix>--5": a negative step; the sign's dash belongs to the step.
  if (dash > 0 && basename[dash - 1] == '-') --dash;
  if (dash == 0) return false;
  const char *begin = basename.c_str() + dash + 1;
  const char *end = basename.c_str() + basename.size();
  if (begin == end) return false;
  int64_t value = 0;
  const auto result = std::from_chars(begin, end, value);
  if (result.ec != std::errc() || result.ptr != end) return false;
  if (step != nullptr) *step = value;
  return true;
}

bool DeleteOwnCheckpoint(const std::string &dir, const std::string &path, const JobId &job, bool recycle) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return false;  // already gone
  const DirectoryFd dir_fd(dir);
  std::string why = "the checkpoint directory cannot be opened";
  bool index = false;
  if (dir_fd.get() >= 0 && ProveOwn(dir_fd.get(), Basename(path), &path, job, &st, &why, &index)) {
    // Recycled, a single-file checkpoint is slot 0's spare; an index (small) is deleted and its parts
    // recycled.
    const int err = RetireFile(dir_fd.get(), Basename(path), recycle && !index ? 0 : kNoSpareSlot);
    if (err == 0) {
      DeleteParts(dir_fd.get(), Basename(path), false, {}, recycle);
      return true;
    }
    why = std::strerror(err);
  }
  Log(TW_LOG_WARNING, "Not deleting %s (due for removal from checkpoint directory %s): %s", path.c_str(), dir.c_str(),
      why.c_str());
  return false;
}

namespace {

constexpr size_t kMaxNoteBytes = 64 * 1024;  // a save notes its checkpoint and the ones it evicts

// The names the note `note` of the open directory lists: false when there is no note; a note that is
// not a regular file is not the saver's (a WARNING, and it stays).
bool ReadNote(int dir_fd, const std::string &note, std::vector<std::string> *names) {
  const int fd = ::openat(dir_fd, note.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  struct stat st;
  if (fd < 0 && errno == ENOENT) return false;
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    if (fd < 0 && ::fstatat(dir_fd, note.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) st.st_mode = 0;
    Log(TW_LOG_WARNING, "Ignoring %s in the checkpoint directory: %s", note.c_str(),
        st.st_mode != 0 && !S_ISREG(st.st_mode) ? FileTypeName(st.st_mode) : std::strerror(err));
    if (fd >= 0) ::close(fd);
    return false;
  }
  std::string text(kMaxNoteBytes, '\0');
  const ssize_t n = ::pread(fd, &text[0], text.size(), 0);
  ::close(fd);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  names->clear();
  // Whole lines only: a line cut short while written could name another checkpoint ("model.ckpt-1" of
  // "model.ckpt-12").
  for (size_t begin = 0, end; (end = text.find('\n', begin)) != std::string::npos; begin = end + 1) {
    names->push_back(text.substr(begin, end - begin));
  }
  return true;
}

// Writes `names` to the note of the open directory, appending or replacing it; an empty replacement
// removes it. A note that cannot be written is a WARNING: a save cut short may then stay unlisted.
void WriteNote(int dir_fd, const std::string &note, const std::vector<std::string> &names, bool append) {
  if (names.empty()) {
    struct stat st;
    if (!append && ::fstatat(dir_fd, note.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
      ::unlinkat(dir_fd, note.c_str(), 0);
    }
    return;
  }
  std::string text;
  for (const std::string &name : names) text += name + "\n";
  // O_NOFOLLOW | O_NONBLOCK: a symbolic link or FIFO planted as the note neither redirects nor blocks.
  const int fd =
      ::openat(dir_fd, note.c_str(),
               O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (append ? O_APPEND : O_TRUNC), 0644);
  struct stat st;
  const bool written = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                       ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!written) {
    Log(TW_LOG_WARNING, "Cannot write %s in the checkpoint directory (%s): a save cut short may leave %s unlisted",
        note.c_str(), std::strerror(err), names.front().c_str());
  }
}

// Whether `st` is the file `path` names (without following a final symbolic link).
bool SameFile(const std::string &path, const struct stat &st) {
  struct stat other;
  return !path.empty() && ::lstat(path.c_str(), &other) == 0 && other.st_dev == st.st_dev && other.st_ino == st.st_ino;
}

}  // namespace

std::string SavingNoteName(const std::string &latest_filename) { return "." + latest_filename + ".tw-saving"; }

void NoteSaving(const std::string &checkpoint, const std::string &latest_filename) {
  const std::string name = Basename(checkpoint);
  if (!ParseCheckpointName(name, nullptr)) return;  // retention never deletes such a name: nothing to settle
  const DirectoryFd dir_fd(Dirname(checkpoint));
  if (dir_fd.get() >= 0) WriteNote(dir_fd.get(), SavingNoteName(latest_filename), {name}, true);
}

void NoteDoomed(const std::string &dir, const std::string &latest_filename, const std::vector<std::string> &paths) {
  if (paths.empty()) return;
  const DirectoryFd dir_fd(dir);
  if (dir_fd.get() < 0) return;
  std::vector<std::string> names;
  for (const std::string &path : paths) {
    // Only the entry of `dir` that is the very file `path` names: what DeleteOwnCheckpoint would delete.
    const std::string name = Basename(path);
    struct stat st;
    if (ParseCheckpointName(name, nullptr) && ::fstatat(dir_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        SameFile(path, st)) {
      names.push_back(name);
    }
  }
  WriteNote(dir_fd.get(), SavingNoteName(latest_filename), names, true);
}

void SettleSavingNote(const std::string &dir, const std::string &latest_filename, const std::string &keep,
                      bool remove_unlisted, const JobId &job) {
  const DirectoryFd dir_fd(dir);
  const std::string note = SavingNoteName(latest_filename);
  std::vector<std::string> names;
  if (dir_fd.get() < 0 || !ReadNote(dir_fd.get(), note, &names)) return;
  CheckpointState state;
  bool loaded = false;  // read only when a noted checkpoint exists
  std::vector<std::string> pending;
  for (const std::string &name : names) {
    struct stat noted;
    // A line that is not a checkpoint name and a checkpoint gone settle nothing.
    if (!ParseCheckpointName(name, nullptr) ||
        ::fstatat(dir_fd.get(), name.c_str(), &noted, AT_SYMLINK_NOFOLLOW) != 0) {
      continue;
    }
    if (!loaded && !LoadCheckpointState(dir, latest_filename, &state).ok()) return;
    loaded = true;
    bool listed = SameFile(keep, noted) || SameFile(state.model_checkpoint_path, noted);
    for (const std::string &path : state.all_model_checkpoint_paths) listed = listed || SameFile(path, noted);
    if (listed) continue;
    if (!remove_unlisted) {
      pending.push_back(name);
      continue;
    }
    const std::string path = JoinPath(dir, name);
    if (DeleteOwnCheckpoint(dir, path, job)) {
      Log(TW_LOG_WARNING, "Removed checkpoint %s: a save cut short left it unlisted in %s", path.c_str(),
          JoinPath(dir, latest_filename).c_str());
    }
  }
  if (pending != names) WriteNote(dir_fd.get(), note, pending, false);
}

Status ScanOwnCheckpoints(const std::string &dir, const JobId &job, std::vector<FoundCheckpoint> *found,
                          std::vector<NotOwned> *not_owned) {
  found->clear();
  if (not_owned != nullptr) not_owned->clear();
  const DirectoryFd dir_fd(dir);
  if (dir_fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status();
    return ErrnoStatus(errno, "list checkpoint directory " + dir);
  }
  const int list_fd = ::dup(dir_fd.get());
  DIR *d = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
  if (d == nullptr) {
    const int err = errno;
    if (list_fd >= 0) ::close(list_fd);
    return ErrnoStatus(err, "list checkpoint directory " + dir);
  }
  while (const struct dirent *entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    int64_t step = 0;
    if (!ParseCheckpointName(name, &step)) continue;
    struct stat st;
    std::string why;
    bool foreign = false;
    if (!ProveOwn(dir_fd.get(), name, nullptr, job, &st, &why, nullptr, &foreign)) {
      if (foreign && not_owned != nullptr) not_owned->push_back(NotOwned{JoinPath(dir, name), why});
      continue;
    }
    found->push_back(
        FoundCheckpoint{JoinPath(dir, name), step, static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9});
  }
  ::closedir(d);
  std::sort(found->begin(), found->end(), [](const FoundCheckpoint &a, const FoundCheckpoint &b) {
    return a.step != b.step ? a.step > b.step : a.mtime > b.mtime;
  });
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
