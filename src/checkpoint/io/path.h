// Path helpers for checkpoint names (POSIX paths, '/' separated).
#ifndef TRAINWATCH_CHECKPOINT_PATH_H
#define TRAINWATCH_CHECKPOINT_PATH_H

#include <string>

namespace tw {
namespace checkpoint {

bool IsAbsolutePath(const std::string &path);
// `name` itself when it is absolute or `dir` is empty (os.path.join's rules).
std::string JoinPath(const std::string &dir, const std::string &name);
// Everything before the last '/' ("" when there is none; "/" for "/x"), as os.path.dirname.
std::string Dirname(const std::string &path);
// Everything after the last '/', as os.path.basename.
std::string Basename(const std::string &path);
// True when `path` names an existing file of any kind (stat succeeds).
bool PathExists(const std::string &path);
bool IsDirectory(const std::string &path);
// Whether `a` and `b` name the same existing directory (one device and inode: symbolic links, ".." and
// "./" spellings compare equal).
bool SameDirectory(const std::string &a, const std::string &b);

}  // namespace checkpoint
}  // namespace tw

#endif  // TRAINWATCH_CHECKPOINT_PATH_H
