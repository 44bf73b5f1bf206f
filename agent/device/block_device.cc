#include "device/block_device.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "device/kernel_file.h"

namespace iogate {

namespace fs = std::filesystem;

namespace {

// The device's directory: the link target resolved against the link's own directory. A plain
// directory (not a link) is taken as it is.
Result<fs::path> resolve_device_dir(const fs::path& link) {
  char buf[4096];
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n < 0) {
    int err = errno;
    if (err == EINVAL) return link;  // exists but is no symlink
    Error e = runtime_error(
        err == ENOENT ? fmt::format("no block device {} ({} does not exist)", link.filename().string(), link.string())
                      : fmt::format("cannot read link {}: {}", link.string(), std::strerror(err)));
    e.os_errno = err;
    return e;
  }
  fs::path target(std::string(buf, static_cast<size_t>(n)));
  fs::path dir = target.is_absolute() ? target : link.parent_path() / target;
  return dir.lexically_normal();
}

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// An optional queue attribute: its value, or `fallback` when absent or unreadable.
uint64_t queue_attribute(const fs::path& queue_dir, const char* name, uint64_t fallback) {
  auto v = read_kernel_uint((queue_dir / name).string());
  return v.ok() ? *v : fallback;
}

}  // namespace

Result<std::string> resolve_sysfs_link(const std::string& link) {
  auto dir = resolve_device_dir(link);
  if (!dir.ok()) return dir.error();
  fs::path p = *dir;
  if (p.filename().empty()) p = p.parent_path();
  return p.string();
}

Result<BlockDeviceInfo> read_block_device(uint32_t major, uint32_t minor, const std::string& sysfs_root) {
  const fs::path link = fs::path(sysfs_root) / "dev" / "block" / fmt::format("{}:{}", major, minor);
  auto dir = resolve_device_dir(link);
  if (!dir.ok()) return dir.error();
  fs::path device_dir = *dir;
  if (device_dir.filename().empty()) device_dir = device_dir.parent_path();  // trailing '/'

  BlockDeviceInfo info;
  info.major = major;
  info.minor = minor;
  info.name = device_dir.filename().string();
  info.is_partition = path_exists(device_dir / "partition");
  fs::path disk_dir = device_dir;
  if (info.is_partition) {
    disk_dir = device_dir.parent_path();
    info.parent_name = disk_dir.filename().string();
  }

  auto sectors = read_kernel_uint((device_dir / "size").string());
  if (!sectors.ok()) return sectors.error();
  info.size_bytes = *sectors * 512;

  const fs::path queue = disk_dir / "queue";
  info.logical_block_size = static_cast<uint32_t>(queue_attribute(queue, "logical_block_size", 512));
  info.physical_block_size =
      static_cast<uint32_t>(queue_attribute(queue, "physical_block_size", info.logical_block_size));
  info.rotational = queue_attribute(queue, "rotational", 0) != 0;
  return info;
}

}  // namespace iogate
