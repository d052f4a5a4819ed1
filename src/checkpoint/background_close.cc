#include "checkpoint/background_close.h"

#include <sys/mman.h>
#include <unistd.h>

#include <system_error>
#include <thread>

namespace tw {
namespace checkpoint {

void CloseInBackground(int fd) {
  if (fd < 0) return;
  try {
    std::thread([fd] { ::close(fd); }).detach();
  } catch (const std::system_error &) {
    ::close(fd);  // no thread to spare: pay for the freeing here
  }
}

void UnmapInBackground(void *addr, size_t size) {
  // Below 16 MiB the teardown costs about what starting a thread does.
  if (size >= (16u << 20)) {
    try {
      std::thread([addr, size] { ::munmap(addr, size); }).detach();
      return;
    } catch (const std::system_error &) {
    }
  }
  ::munmap(addr, size);
}

}  // namespace checkpoint
}  // namespace tw
