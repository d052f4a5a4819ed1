#include "checkpoint/background_close.h"

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

}  // namespace checkpoint
}  // namespace tw
