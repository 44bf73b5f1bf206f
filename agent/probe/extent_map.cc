#include "probe/extent_map.h"

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace iogate {

uint64_t ExtentMap::written_bytes() const {
  uint64_t n = 0;
  for (const ByteRange& r : written) n += r.length;
  return n;
}

namespace {

// Data ranges by SEEK_DATA/SEEK_HOLE. Returns false where the fs does not support them
// (it then reports the whole file as data, which is what ENXIO-free fallbacks do anyway).
bool seek_data_ranges(int fd, uint64_t size, std::vector<ByteRange>* out) {
  off_t pos = 0;
  const off_t end = static_cast<off_t>(size);
  while (pos < end) {
    off_t data = lseek(fd, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // no more data
      return false;
    }
    off_t hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0) return false;
    hole = std::min(hole, end);
    if (hole > data) out->push_back({static_cast<uint64_t>(data), static_cast<uint64_t>(hole - data)});
    pos = hole;
  }
  return true;
}

// Written extents by FIEMAP (excludes FIEMAP_EXTENT_UNWRITTEN). Returns false when unsupported.
bool fiemap_written_ranges(int fd, uint64_t size, std::vector<ByteRange>* out) {
  constexpr unsigned kBatch = 256;
  const size_t bytes = sizeof(fiemap) + kBatch * sizeof(fiemap_extent);
  std::unique_ptr<uint8_t[]> storage(new uint8_t[bytes]);
  uint64_t start = 0;
  while (start < size) {
    std::memset(storage.get(), 0, bytes);
    auto* fm = reinterpret_cast<fiemap*>(storage.get());
    fm->fm_start = start;
    fm->fm_length = size - start;
    // No FIEMAP_FLAG_SYNC: it would flush other people's dirty data; delalloc extents hold data anyway.
    fm->fm_flags = 0;
    fm->fm_extent_count = kBatch;
    if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) return false;
    if (fm->fm_mapped_extents == 0) break;
    bool last = false;
    for (unsigned i = 0; i < fm->fm_mapped_extents; ++i) {
      const fiemap_extent& e = fm->fm_extents[i];
      if (!(e.fe_flags & FIEMAP_EXTENT_UNWRITTEN)) {
        uint64_t lo = e.fe_logical, hi = std::min<uint64_t>(e.fe_logical + e.fe_length, size);
        if (hi > lo) {
          if (!out->empty() && out->back().offset + out->back().length == lo) {
            out->back().length += hi - lo;
          } else {
            out->push_back({lo, hi - lo});
          }
        }
      }
      start = e.fe_logical + e.fe_length;
      if (e.fe_flags & FIEMAP_EXTENT_LAST) last = true;
    }
    if (last) break;
  }
  return true;
}

}  // namespace

std::vector<ByteRange> intersect_ranges(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  std::vector<ByteRange> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    uint64_t lo = std::max(a[i].offset, b[j].offset);
    uint64_t hi = std::min(a[i].offset + a[i].length, b[j].offset + b[j].length);
    if (hi > lo) out.push_back({lo, hi - lo});
    if (a[i].offset + a[i].length < b[j].offset + b[j].length) ++i;
    else ++j;
  }
  return out;
}

std::vector<ByteRange> align_ranges(const std::vector<ByteRange>& ranges, uint64_t align, uint64_t min_length) {
  std::vector<ByteRange> out;
  for (const ByteRange& r : ranges) {
    uint64_t lo = (r.offset + align - 1) / align * align;
    uint64_t hi = (r.offset + r.length) / align * align;
    if (hi > lo && hi - lo >= min_length) out.push_back({lo, hi - lo});
  }
  return out;
}

Result<ExtentMap> map_written_extents(int fd, uint64_t file_size, const std::string& path) {
  ExtentMap map;
  if (file_size == 0) return map;
  std::vector<ByteRange> data;
  map.used_seek_data = seek_data_ranges(fd, file_size, &data);
  if (!map.used_seek_data) data = {{0, file_size}};

  std::vector<ByteRange> written;
  map.used_fiemap = fiemap_written_ranges(fd, file_size, &written);
  if (map.used_fiemap) {
    map.written = intersect_ranges(data, written);
  } else {
    map.written = data;
  }
  if (!map.used_seek_data && !map.used_fiemap) {
    struct stat st;
    if (fstat(fd, &st) != 0) return runtime_error(fmt::format("{}: fstat: {}", path, std::strerror(errno)));
    if (static_cast<uint64_t>(st.st_blocks) * 512 < file_size) {
      return runtime_error(
          fmt::format("{}: the file system cannot say which ranges hold data (no SEEK_DATA, no FIEMAP) and the file is "
                      "sparse ({} of {} bytes allocated); refusing to measure holes",
                      path, static_cast<uint64_t>(st.st_blocks) * 512, file_size));
    }
  }
  return map;
}

}  // namespace iogate
