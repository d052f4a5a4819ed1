// Opening a file the library is about to read, refusing at once what is not a regular file: a FIFO
// would block open() or read() forever, a directory or device is never a checkpoint, state file or
// event file. The type is checked on the open descriptor (open non-blocking, then fstat), so a file
// swapped between a check and the open cannot slip through. Shared by the checkpoint and summary
// layers, so every reader of a user-named path refuses special files the same way.
#ifndef TRAINWATCH_BASE_REGULAR_FILE_H
#define TRAINWATCH_BASE_REGULAR_FILE_H

#include <cstdint>
#include <string>

#include "base/status.h"

namespace tw {

// Opens `path` read-only (close-on-exec, blocking mode restored once it is known to be regular) into
// *fd and its size into *size. `what` names the file in messages ("checkpoint", "state file").
// `follow_symlinks` false adds O_NOFOLLOW: a symbolic link as the last component is refused.
// Errors: TW_NOT_FOUND (no such file; "<what> <path> cannot exist: <strerror>" for a name too long, a
// component that is not a directory, a loop of symbolic links), TW_INVALID_ARGUMENT ("<what> <path> is a FIFO (named
// pipe), not a regular file", likewise for directories, devices, sockets and, without following, symbolic links),
// TW_RESOURCE_EXHAUSTED (no descriptor left: EMFILE, ENFILE; out of memory), TW_IO (other open/fstat errors, naming
// errno).
Status OpenRegularFile(const std::string &path, const char *what, bool follow_symlinks, int *fd, uint64_t *size);

// Reads all of a regular file (OpenRegularFile's checks) into *out. A file of more than `max_bytes`
// (checked on the size and again while reading, so a growing file is caught too) fails with
// TW_INVALID_ARGUMENT naming the file and the limit.
Status ReadRegularFile(const std::string &path, const char *what, uint64_t max_bytes, std::string *out);

// "a FIFO (named pipe)", "a directory", ... for a struct stat's st_mode.
const char *FileTypeName(unsigned mode);

}  // namespace tw

#endif  // TRAINWATCH_BASE_REGULAR_FILE_H
