#include "device/kernel_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "base/trim.h"
#include "base/unique_fd.h"

namespace iogate {

namespace {

Error errno_error(const std::string& what, const std::string& path, int err) {
  Error e = runtime_error(fmt::format("{} {}: {}", what, path, std::strerror(err)));
  e.os_errno = err;
  return e;
}

}  // namespace

Result<std::string> read_kernel_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return errno_error("cannot open", path, errno);
  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("cannot read", path, errno);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

Result<uint64_t> read_kernel_uint(const std::string& path) {
  auto text = read_kernel_file(path);
  if (!text.ok()) return text.error();
  std::string_view s = trim_space(*text);
  uint64_t value = 0;
  if (s.empty()) return runtime_error(fmt::format("{}: empty, expected a number", path));
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return runtime_error(fmt::format("{}: expected a number, found \"{}\"", path, s));
  }
  return value;
}

std::vector<std::string_view> split_kernel_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace iogate
