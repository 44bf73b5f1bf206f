#include "base/text_file.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>

#include "base/unique_fd.h"

namespace iogate {

Result<std::string> read_text_file(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    Error e = runtime_error(path + ": " + strerror(errno));
    e.os_errno = errno;
    return e;
  }
  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = runtime_error(path + ": " + strerror(errno));
      e.os_errno = errno;
      return e;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace iogate
