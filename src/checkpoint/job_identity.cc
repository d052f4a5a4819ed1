#include "checkpoint/job_identity.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "base/regular_file.h"
#include "checkpoint/io/durable_file.h"
#include "checkpoint/io/path.h"
#include "checkpoint/state_file.h"

namespace tw {
namespace checkpoint {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The job file's identity: false when it is missing; one that cannot be read or holds anything else is
// logged and not used.
bool ReadJobFile(const std::string &dir, JobId *job) {
  const std::string path = JoinPath(dir, kJobFileName);
  int fd = -1;
  uint64_t size = 0;
  const Status opened = OpenRegularFile(path, "job identity file", /*follow_symlinks=*/false, &fd, &size);
  if (opened.code() == TW_NOT_FOUND) return false;
  char text[2 * kJobIdBytes + 2] = {};
  const ssize_t n = opened.ok() ? ::pread(fd, text, sizeof(text), 0) : -1;
  if (fd >= 0) ::close(fd);
  const bool valid = n == static_cast<ssize_t>(2 * kJobIdBytes + 1) && text[2 * kJobIdBytes] == '\n' &&
                     ParseJobId(std::string(text, 2 * kJobIdBytes), job);
  if (!valid) {
    Log(TW_LOG_WARNING, "Ignoring %s: %s", path.c_str(),
        opened.ok() ? "it does not hold a job identity" : opened.message().c_str());
  }
  return valid;
}

JobId StateFileJob(const std::string &dir, const std::string &latest_filename) {
  CheckpointState state;
  JobId job{};
  if (LoadCheckpointState(dir, latest_filename, &state).ok()) ParseJobId(state.job_identity, &job);
  return job;
}

}  // namespace

std::string FormatJobId(const JobId &job) {
  std::string hex;
  for (uint8_t b : job) {
    hex += kHexDigits[b >> 4];
    hex += kHexDigits[b & 15];
  }
  return hex;
}

bool ParseJobId(const std::string &hex, JobId *job) {
  if (hex.size() != 2 * kJobIdBytes) return false;
  JobId parsed{};
  for (size_t i = 0; i < hex.size(); ++i) {
    const char *digit = std::strchr(kHexDigits, hex[i]);
    if (digit == nullptr || hex[i] == '\0') return false;
    parsed[i / 2] = static_cast<uint8_t>(parsed[i / 2] << 4 | (digit - kHexDigits));
  }
  *job = parsed;
  return true;
}

JobId ReadJobIdentity(const std::string &dir, const std::string &latest_filename) {
  JobId job{};
  if (ReadJobFile(dir, &job)) return job;
  return StateFileJob(dir, latest_filename);
}

Status EnsureJobIdentity(const std::string &dir, const std::string &latest_filename, JobId *job) {
  JobId found{};
  if (ReadJobFile(dir, &found) && !IsNoJob(found)) {
    *job = found;
    return Status();
  }
  found = StateFileJob(dir, latest_filename);
  // All zero stands for "no job": a new identity is never that (2^-128 aside, drawn again).
  while (IsNoJob(found)) {
    if (::getrandom(found.data(), found.size(), 0) != static_cast<ssize_t>(found.size())) {
      if (errno == EINTR) continue;
      return Status(TW_INTERNAL,
                    std::string("no random bits for the job identity of ") + dir + ": " + std::strerror(errno));
    }
  }
  TW_RETURN_IF_ERROR(WriteFileDurably(JoinPath(dir, kJobFileName), FormatJobId(found) + "\n")
                         .WithPrefix("Writing the job identity of checkpoint directory " + dir + " failed: "));
  *job = found;
  return Status();
}

}  // namespace checkpoint
}  // namespace tw
