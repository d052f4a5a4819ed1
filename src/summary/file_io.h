// The few POSIX file operations the summary layer needs, with errors as Status naming the path.
#ifndef TRAINWATCH_SUMMARY_FILE_IO_H
#define TRAINWATCH_SUMMARY_FILE_IO_H

#include <cstddef>
#include <string>

#include "base/status.h"

namespace tw {
namespace summary {

// mkdir -p: creates `dir` and its missing parents (mode 0777 minus umask). An existing directory is
// fine; an existing non-directory is TW_FAILED_PRECONDITION.
Status MakeDirectories(const std::string &dir);

// Writes all of data[0, size) to fd, retrying short writes and EINTR.
Status WriteAll(int fd, const void *data, size_t size, const std::string &path);

// Replaces `path` with `contents` so that readers see the old file or the new one, never a part:
// writes a temporary file beside it, fsyncs it, renames it over `path`.
Status WriteFileAtomically(const std::string &path, const std::string &contents);

// "dir/name", without doubling a trailing '/'.
std::string JoinPath(const std::string &dir, const std::string &name);

}  // namespace summary
}  // namespace tw

#endif  // TRAINWATCH_SUMMARY_FILE_IO_H
