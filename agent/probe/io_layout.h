// The blocks a probe may touch, across one or more files, and how offsets are drawn from them.
//
// Every block is block_size long and aligned to it; random offsets are uniform over all blocks
// (so larger files get proportionally more I/O), sequential jobs walk their own contiguous slice.
#pragma once

#include <cstdint>
#include <vector>

#include "base/rng.h"
#include "probe/extent_map.h"

namespace iogate {

struct IoExtent {
  int fd = -1;
  uint64_t offset = 0;  // bytes, aligned to block_size
  uint64_t blocks = 0;
};

class IoLayout {
 public:
  IoLayout() = default;
  explicit IoLayout(uint64_t block_size) : block_size_(block_size) {}

  // Adds a file's readable ranges (already aligned to block_size).
  void add(int fd, const std::vector<ByteRange>& ranges);

  uint64_t block_size() const { return block_size_; }
  uint64_t total_blocks() const { return total_blocks_; }
  bool empty() const { return total_blocks_ == 0; }

  struct Location {
    int fd;
    uint64_t offset;
  };
  // The location of the block with global index i (< total_blocks()).
  Location locate(uint64_t block_index) const;
  Location random(FastRng& rng) const { return locate(rng.below(total_blocks_)); }

 private:
  uint64_t block_size_ = 4096;
  uint64_t total_blocks_ = 0;
  std::vector<IoExtent> extents_;
  std::vector<uint64_t> first_block_;  // global index of each extent's first block
};

// A sequential walk over blocks [begin, end) of a layout, wrapping at the end like fio's loops.
class SequentialCursor {
 public:
  SequentialCursor(uint64_t begin, uint64_t end) : begin_(begin), end_(end), next_(begin) {}
  uint64_t next() {
    uint64_t b = next_++;
    if (next_ >= end_) next_ = begin_;
    return b;
  }

 private:
  uint64_t begin_, end_, next_;
};

}  // namespace iogate
