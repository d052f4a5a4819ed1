#include "checkpoint/io/path.h"

#include <sys/stat.h>

namespace tw {
namespace checkpoint {

bool IsAbsolutePath(const std::string &path) { return !path.empty() && path[0] == '/'; }

std::string JoinPath(const std::string &dir, const std::string &name) {
  if (dir.empty() || IsAbsolutePath(name)) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string Dirname(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string Basename(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool PathExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool SameDirectory(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && S_ISDIR(sa.st_mode) && S_ISDIR(sb.st_mode) &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace checkpoint
}  // namespace tw
