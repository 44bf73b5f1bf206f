// Picks the files a read-only probe reads: the largest regular files under a directory.
//
// Dataset volumes are often mounted read-only, so there is no test file to make; reading the
// biggest files spreads random reads over the most blocks, which makes caches below us least
// likely to hold them. The walk has a budget: dataset trees can hold millions of entries.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace iogate {

struct FoundFile {
  std::string path;
  uint64_t size_bytes = 0;
};

struct FileScan {
  std::vector<FoundFile> largest;  // descending by size
  uint64_t entries_seen = 0;
  bool budget_exhausted = false;  // the walk stopped early; the choice is from what was seen
};

struct FileScanLimits {
  size_t max_files = 16;
  uint64_t min_size = 4096;
  uint64_t max_entries = 200000;
  std::chrono::milliseconds max_time{3000};
};

// Never follows symlinks; skips what it may not read; stays on the directory's file system.
Result<FileScan> find_largest_files(const std::string& directory, const FileScanLimits& limits);

}  // namespace iogate
