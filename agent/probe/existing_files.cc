#include "probe/existing_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <queue>

#include <fmt/format.h>

namespace iogate {

Result<FileScan> find_largest_files(const std::string& directory, const FileScanLimits& limits) {
  namespace fs = std::filesystem;
  FileScan scan;
  auto by_size_desc = [](const FoundFile& a, const FoundFile& b) { return a.size_bytes > b.size_bytes; };
  // A min-heap of the largest files seen so far.
  std::priority_queue<FoundFile, std::vector<FoundFile>, decltype(by_size_desc)> heap(by_size_desc);
  const auto deadline = std::chrono::steady_clock::now() + limits.max_time;

  // Only the directory's own file system, like find -xdev: a file on another mount below it is
  // other storage than the one PATH names (and /proc or /sys, under a container's root, hold
  // files whose listed size is not what a read returns).
  struct stat top;
  if (stat(directory.c_str(), &top) != 0) {
    return runtime_error(fmt::format("{}: cannot list: {}", directory, std::strerror(errno)));
  }
  std::error_code ec;
  fs::recursive_directory_iterator it(directory, fs::directory_options::skip_permission_denied, ec);
  if (ec) return runtime_error(fmt::format("{}: cannot list: {}", directory, ec.message()));
  for (fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) {
      ec.clear();
      continue;
    }
    if (++scan.entries_seen > limits.max_entries ||
        ((scan.entries_seen & 255) == 0 && std::chrono::steady_clock::now() > deadline)) {
      scan.budget_exhausted = true;
      break;
    }
    struct stat st;
    if (lstat(it->path().c_str(), &st) != 0) continue;
    if (st.st_dev != top.st_dev) {
      if (S_ISDIR(st.st_mode)) it.disable_recursion_pending();
      continue;
    }
    if (!S_ISREG(st.st_mode)) continue;
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size < limits.min_size) continue;
    if (heap.size() < limits.max_files) {
      heap.push({it->path().string(), size});
    } else if (size > heap.top().size_bytes) {
      heap.pop();
      heap.push({it->path().string(), size});
    }
  }
  while (!heap.empty()) {
    scan.largest.push_back(heap.top());
    heap.pop();
  }
  std::reverse(scan.largest.begin(), scan.largest.end());
  return scan;
}

}  // namespace iogate
