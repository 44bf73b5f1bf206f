// Which byte ranges of a file hold written data.
//
// Holes and unwritten (fallocated, never written) extents read as zeros without touching the
// device: a hole-only file "serves" a million IOPS. A probe may read only ranges this map says
// are written, so a sparse file cannot make slow storage look fast.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace iogate {

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct ExtentMap {
  std::vector<ByteRange> written;  // ascending, non-overlapping
  bool used_fiemap = false;        // unwritten extents were excluded too
  bool used_seek_data = false;     // holes were excluded by SEEK_DATA/SEEK_HOLE
  uint64_t written_bytes() const;
};

// Maps the data of an open file of `file_size` bytes. Uses SEEK_DATA/SEEK_HOLE for holes and
// FIEMAP to drop unwritten extents; where neither works the whole file counts as written only
// if its block count covers its size (st_blocks), otherwise it is an error: nothing is trusted blind.
Result<ExtentMap> map_written_extents(int fd, uint64_t file_size, const std::string& path);

// Trims ranges to `align` boundaries and drops pieces shorter than `min_length`.
std::vector<ByteRange> align_ranges(const std::vector<ByteRange>& ranges, uint64_t align, uint64_t min_length);

// Intersection of two ascending range lists.
std::vector<ByteRange> intersect_ranges(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b);

}  // namespace iogate
