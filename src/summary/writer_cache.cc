#include "summary/writer_cache.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>

#include "base/file_io.h"

namespace tw {
namespace summary {
namespace {

struct Cache {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<EventWriter>> writers;  // by canonical directory
};

Cache &GlobalCache() {
  static Cache *cache = new Cache;  // never destroyed: writers may outlive static destruction order
  return *cache;
}

Status CanonicalDirectory(const std::string &dir, std::string *out) {
  char resolved[PATH_MAX];
  if (::realpath(dir.c_str(), resolved) == nullptr) return ErrnoStatus(errno, "cannot resolve '" + dir + "'");
  *out = resolved;
  return Status();
}

}  // namespace

Status GetCachedEventWriter(const std::string &logdir, std::shared_ptr<EventWriter> *out) {
  if (logdir.empty()) return Status(TW_INVALID_ARGUMENT, "logdir is empty");
  TW_RETURN_IF_ERROR(MakeDirectories(logdir));
  std::string key;
  TW_RETURN_IF_ERROR(CanonicalDirectory(logdir, &key));

  Cache &cache = GlobalCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (auto it = cache.writers.begin(); it != cache.writers.end();) {  // drop released writers
    it = it->second.expired() ? cache.writers.erase(it) : std::next(it);
  }
  std::shared_ptr<EventWriter> writer = cache.writers[key].lock();
  if (writer == nullptr || writer->closed()) {
    std::unique_ptr<EventWriter> opened;
    TW_RETURN_IF_ERROR(EventWriter::Open(key, &opened));
    writer = std::move(opened);
    cache.writers[key] = writer;
  }
  *out = std::move(writer);
  return Status();
}

}  // namespace summary
}  // namespace tw
