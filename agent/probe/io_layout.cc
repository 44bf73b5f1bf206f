#include "probe/io_layout.h"

#include <algorithm>

namespace iogate {

void IoLayout::add(int fd, const std::vector<ByteRange>& ranges) {
  for (const ByteRange& r : ranges) {
    uint64_t blocks = r.length / block_size_;
    if (blocks == 0) continue;
    extents_.push_back({fd, r.offset, blocks});
    first_block_.push_back(total_blocks_);
    total_blocks_ += blocks;
  }
}

IoLayout::Location IoLayout::locate(uint64_t block_index) const {
  size_t i = 0;
  if (extents_.size() > 1) {
    auto it = std::upper_bound(first_block_.begin(), first_block_.end(), block_index);
    i = static_cast<size_t>(it - first_block_.begin()) - 1;
  }
  const IoExtent& e = extents_[i];
  return {e.fd, e.offset + (block_index - first_block_[i]) * block_size_};
}

}  // namespace iogate
