#include "bench/existing_files.h"

#include <algorithm>
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
    std::error_code sec;
    fs::file_status st = it->symlink_status(sec);
    if (sec || !fs::is_regular_file(st)) continue;
    uint64_t size = it->file_size(sec);
    if (sec || size < limits.min_size) continue;
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
