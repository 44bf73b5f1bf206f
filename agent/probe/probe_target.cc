#include "probe/probe_target.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "base/units.h"
#include "device/block_device.h"
#include "device/direct_io.h"
#include "device/mountinfo.h"
#include "device/network_fs.h"
#include "probe/existing_files.h"

namespace iogate {
namespace {

Result<std::string> canonical_path(const std::string& path, std::string_view what) {
  char buf[PATH_MAX];
  if (!realpath(path.c_str(), buf)) {
    return usage_error(fmt::format("{}: {}: {}", what, path, std::strerror(errno)));
  }
  return std::string(buf);
}

void describe_mount(const ProbeRequest& req, const std::string& canonical, ProbeTarget& t) {
  auto mounts = read_mountinfo(req.proc_root());
  if (!mounts.ok()) return;
  if (const MountEntry* m = find_mount_for_path(*mounts, canonical)) {
    t.mount_point = m->mount_point;
    t.fs_type = m->fs_type;
    t.source = m->source;
    t.dev_major = m->major;
    t.dev_minor = m->minor;
    t.read_only = m->read_only();
    t.network_fs = describe_network_mount(*m).has_value();
  }
}

// Opens an existing file read-only, with O_NOATIME where we may (it needs ownership).
int open_existing(const std::string& path, bool direct) {
  int flags = O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0);
  int fd = open(path.c_str(), flags | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = open(path.c_str(), flags);
  return fd;
}

// The O_DIRECT offset alignment for this target: statx where the kernel reports it, else the
// device's logical block size, else 512 (what every block device accepts).
uint32_t direct_alignment(int fd, const ProbeRequest& req, ProbeTarget& t, bool* direct_unsupported) {
  DirectIoAlignment a = query_direct_io_alignment(fd);
  if (a.known) {
    t.dio_mem_align = a.mem_align;
    t.dio_offset_align = a.offset_align;
    *direct_unsupported = a.offset_align == 0;
    return a.offset_align;
  }
  if (t.dev_major != 0) {
    auto dev = read_block_device(t.dev_major, t.dev_minor, req.sysfs_root());
    if (dev.ok()) {
      t.dio_offset_align = dev->logical_block_size;
      return dev->logical_block_size;
    }
  }
  t.dio_offset_align = 512;
  return 512;
}

Status map_into_layout(int fd, const std::string& path, uint64_t size, uint64_t bs, OpenTarget& target,
                       bool created_by_us) {
  auto map = map_written_extents(fd, size, path);
  if (!map.ok()) return map.error();
  std::vector<ByteRange> ranges = align_ranges(map->written, bs, bs);
  uint64_t readable = 0;
  for (const ByteRange& r : ranges) readable += r.length;
  target.info.files.push_back({path, size, readable,
                               map->used_fiemap      ? "fiemap"
                               : map->used_seek_data ? "seek_data"
                                                     : "allocated_blocks"});
  // Where the file system keeps no extent map of its own, SEEK_DATA may be the kernel's generic
  // answer (FUSE without lseek: all data, and sshfs fakes st_blocks from the size): an existing
  // sparse file's holes would be read, at the server's memory speed.
  if (!created_by_us && !map->used_fiemap && target.info.network_fs) {
    target.warnings.push_back(
        fmt::format("{}: the file system maps no extents (no FIEMAP), so holes cannot be told from data; if the "
                    "file is sparse, its holes are read at the server's memory speed",
                    path));
  }
  if (readable == 0) {
    return runtime_error(
        fmt::format("{}: no written, {}-aligned data to read (the file is sparse, unwritten or smaller than --bs); "
                    "refusing to measure holes, which read at memory speed",
                    path, format_size_compact(bs)));
  }
  if (!created_by_us && readable + bs < size) {
    target.warnings.push_back(
        fmt::format("{}: only {} of {} hold written data; holes and unwritten extents are skipped", path,
                    format_bytes(static_cast<double>(readable)), format_bytes(static_cast<double>(size))));
  }
  if (created_by_us && readable + bs < size) {
    return runtime_error(
        fmt::format("{}: the test file has holes after filling ({} of {} written); the file "
                    "system does not keep what was written",
                    path, readable, size));
  }
  target.layout.add(fd, ranges);
  return ok_status();
}

// Opens the existing files (a --file, or the largest files of a read-only volume).
Status open_existing_files(const std::vector<std::string>& paths, const ProbeRequest& req, OpenTarget& target) {
  const Workload& w = req.workload;
  for (const std::string& path : paths) {
    int fd = open_existing(path, target.direct);
    if (fd < 0 && errno == EINVAL && target.direct) {
      target.direct = false;  // retried without O_DIRECT for every file
      target.existing_fds.clear();
      return open_existing_files(paths, req, target);
    }
    if (fd < 0) return runtime_error(fmt::format("{}: cannot open for reading: {}", path, std::strerror(errno)));
    target.existing_fds.emplace_back(fd);
  }
  if (target.direct) {
    bool unsupported = false;
    uint32_t align = direct_alignment(target.existing_fds.front().get(), req, target.info, &unsupported);
    if (unsupported) {
      target.existing_fds.clear();
      target.direct = false;
      return open_existing_files(paths, req, target);
    }
    if (Status s = validate_alignment(w, align, paths.front()); !s.ok()) return s;
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    const int fd = target.existing_fds[i].get();
    struct stat st;
    fstat(fd, &st);
    if (S_ISBLK(st.st_mode)) {
      // A whole block device, read raw as fio's filename=/dev/... does: every block is real.
      uint64_t bytes = 0;
      if (ioctl(fd, BLKGETSIZE64, &bytes) != 0) {
        return runtime_error(fmt::format("{}: BLKGETSIZE64: {}", paths[i], std::strerror(errno)));
      }
      std::vector<ByteRange> all = align_ranges({{0, bytes}}, w.block_size, w.block_size);
      target.info.files.push_back({paths[i], bytes, all.empty() ? 0 : all[0].length});
      if (all.empty()) return runtime_error(fmt::format("{}: smaller than --bs", paths[i]));
      target.layout.add(fd, all);
      continue;
    }
    if (Status s = map_into_layout(fd, paths[i], static_cast<uint64_t>(st.st_size), w.block_size, target, false);
        !s.ok()) {
      if (paths.size() == 1) return s;
      target.warnings.push_back(s.error().message);
      target.info.files.pop_back();
    }
  }
  if (target.layout.empty()) return runtime_error("none of the chosen files holds written data to read");
  return ok_status();
}

Status use_test_file(const std::string& dir, const ProbeRequest& req, uint64_t seed, const std::atomic<bool>& stop,
                     OpenTarget& target) {
  const Workload& w = req.workload;
  auto file = TestFile::prepare({dir, w.size, seed, w.keep_test_file}, stop);
  if (!file.ok()) return file.error();
  target.test_file.emplace(std::move(*file));
  TestFile& tf = *target.test_file;
  target.info.test_file_created = !tf.reused();
  target.info.test_file_reused = tf.reused();
  if (target.direct) {
    int err = tf.reopen(O_DIRECT);
    bool unsupported = err == EINVAL;
    if (err != 0 && !unsupported) {
      return runtime_error(fmt::format("{}: open with O_DIRECT: {}", tf.path(), std::strerror(err)));
    }
    if (!unsupported) {
      uint32_t align = direct_alignment(tf.fd(), req, target.info, &unsupported);
      if (!unsupported) {
        if (Status s = validate_alignment(w, align, dir); !s.ok()) return s;
      }
    }
    if (unsupported) {
      target.direct = false;
      if (int e = tf.reopen(0); e != 0) return runtime_error(fmt::format("{}: open: {}", tf.path(), std::strerror(e)));
    }
  }
  return map_into_layout(tf.fd(), tf.path(), tf.size(), w.block_size, target, true);
}

}  // namespace

Result<OpenTarget> open_probe_target(const ProbeRequest& req, uint64_t seed, const std::atomic<bool>& stop) {
  const Workload& w = req.workload;
  OpenTarget target;
  target.direct = w.direct;
  target.layout = IoLayout(w.block_size);

  auto where = canonical_path(req.path, "PATH");
  if (!where.ok()) return where.error();
  struct stat st;
  if (stat(where->c_str(), &st) != 0) {
    return usage_error(fmt::format("PATH: {}: {}", req.path, std::strerror(errno)));
  }
  std::string file = w.file;
  if (!file.empty()) {
    auto f = canonical_path(file, "--file");
    if (!f.ok()) return f.error();
    file = *f;
  } else if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
    file = *where;  // `iogate probe some/file` or `/dev/nvme0n1` reads it, like --file
  } else if (!S_ISDIR(st.st_mode)) {
    return usage_error(fmt::format("PATH: {} is neither a directory, a regular file nor a block device", req.path));
  }
  if (!file.empty()) {
    if (rw_mode_writes(w.rw)) {
      return usage_error(
          fmt::format("--rw {}: iogate never writes to a file it did not create; name a directory "
                      "to write a test file in",
                      rw_mode_name(w.rw)));
    }
    struct stat fst;
    if (stat(file.c_str(), &fst) != 0 || !(S_ISREG(fst.st_mode) || S_ISBLK(fst.st_mode))) {
      return usage_error(fmt::format("--file: {} is not a regular file or block device", file));
    }
    st = fst;
  }
  target.info.path = file.empty() ? *where : file;
  describe_mount(req, target.info.path, target.info);
  if (S_ISBLK(st.st_mode)) {  // the device itself, not the /dev file system it appears in
    target.info.dev_major = major(st.st_rdev);
    target.info.dev_minor = minor(st.st_rdev);
    target.info.fs_type = "block device";
    target.info.source = target.info.path;
    target.info.mount_point.clear();
  }
  int fd_probe = S_ISBLK(st.st_mode) ? -1 : open(target.info.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_probe >= 0) {
    auto magic = statfs_magic(fd_probe);
    if (magic.ok()) {
      target.info.page_cache = is_memory_fs_magic(*magic);
      if (target.info.fs_type.empty()) target.info.fs_type = fs_type_from_statfs_magic(*magic);
    }
    close(fd_probe);
  }

  if (!file.empty()) {
    if (Status s = open_existing_files({file}, req, target); !s.ok()) return s.error();
    return target;
  }

  const std::string dir = *where;
  int refusal = directory_write_refusal(dir);
  if (refusal == 0) {
    Status s = use_test_file(dir, req, seed, stop, target);
    if (s.ok()) return target;
    // Creating can fail where access() said yes (root on a read-only bind, NFS root_squash).
    int err = s.error().os_errno;
    if (!target.test_file && (err == EROFS || err == EACCES || err == EPERM)) {
      refusal = err;
    } else {
      return s.error();
    }
  }
  target.info.read_only = true;
  if (rw_mode_writes(w.rw)) {
    return usage_error(fmt::format("PATH: {} is {}; --rw {} needs a writable directory for its test file", dir,
                                   refusal == EROFS ? "on a read-only mount" : "not writable", rw_mode_name(w.rw)));
  }
  FileScanLimits limits;
  limits.min_size = w.block_size;
  auto scan = find_largest_files(dir, limits);
  if (!scan.ok()) return scan.error();
  if (scan->largest.empty()) {
    return runtime_error(
        // Said to preflight too (an empty claim, the dataset not copied yet), which has no --file.
        fmt::format("PATH: {} is read-only and holds no regular file of at least {} to read: copy the data in "
                    "first, or probe a file or a writable directory",
                    dir, format_size_compact(w.block_size)));
  }
  std::vector<std::string> paths;
  for (const FoundFile& f : scan->largest) paths.push_back(f.path);
  // Permission denied is not a read-only volume: the operator's fix differs (fsGroup, ownership).
  target.warnings.push_back(
      fmt::format("{} is {}: read {} existing file{} under it, wrote nothing", dir,
                  refusal == EROFS ? "read-only" : fmt::format("not writable by uid {} (permission denied)", geteuid()),
                  paths.size(), paths.size() == 1 ? "" : "s"));
  if (scan->budget_exhausted) {
    target.warnings.push_back(
        fmt::format("stopped scanning {} after {} entries; the largest files seen were used", dir, scan->entries_seen));
  }
  if (Status s = open_existing_files(paths, req, target); !s.ok()) return s.error();
  return target;
}

}  // namespace iogate
