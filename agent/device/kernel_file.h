// Reading the text files the kernel generates under /proc and /sys.
//
// They report st_size 0 (proc) or 4096 (sysfs) whatever they hold, and their content is produced
// on read, so they are read to end of file in one pass, never by their size. Every error names the
// path and carries the errno, so a caller can tell "absent" (ENOENT) from "refused" (EACCES).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace iogate {

Result<std::string> read_kernel_file(const std::string& path);

// A file holding one unsigned decimal number and a newline, as sysfs attributes do ("512\n").
Result<uint64_t> read_kernel_uint(const std::string& path);

// The lines of a kernel table (mountinfo, diskstats), without their "\n" or a stray "\r".
std::vector<std::string_view> split_kernel_lines(std::string_view text);

}  // namespace iogate
